#!/bin/sh
# snn-run train end to end through the command line: a module compiled by
# snn-opt (Inputs/tiny-train.mlir) on a toy two-class .npy dataset; training
# must learn it, 1 epoch + --resume 1 epoch must write the same checkpoint
# bytes as 2 epochs straight, and bad invocations must fail with one clear
# error. Usage: snn-run-train.sh SNN_RUN PYTHON SNN_OPT
set -eu
RUN=$1
PY=$2
OPT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$OPT" "$HERE/Inputs/tiny-train.mlir" \
  --snn-autodiff="loss=ce_membrane optimizer=sgd lr=0.1 momentum=0.9" \
  --snn-compile="output=$W/m.snnmod target=cpu" -o /dev/null
"$PY" - "$W" <<'PYEOF'
import sys
import numpy as np
rng = np.random.default_rng()  # fresh data every run
for name, n in (("train", 200), ("test", 64)):
    y = rng.integers(0, 2, n)
    hot = (np.arange(6)[None, :] < 3) == (y[:, None] == 0)
    x = np.where(hot, rng.uniform(0.6, 1, (n, 6)), rng.uniform(0, 0.3, (n, 6)))
    np.save(f"{sys.argv[1]}/{name}_x.npy", x.astype(np.float32))
    np.save(f"{sys.argv[1]}/{name}_y.npy", y.astype(np.int64))
PYEOF
DATA="--data $W/train_x.npy --labels $W/train_y.npy --test-data $W/test_x.npy --test-labels $W/test_y.npy"
DEVICE=${SNN_RUN_DEVICE:-cpu}
COMMON="--device $DEVICE --seed 3 --encoder rate --no-progress"

"$RUN" "$W/m.snnmod" train $DATA $COMMON --epochs 2 --checkpoint "$W/a.st" \
  --metrics "$W/a.jsonl" > "$W/a.log"
"$RUN" "$W/m.snnmod" train $DATA $COMMON --epochs 1 --checkpoint "$W/b.st" \
  --metrics "$W/b.jsonl" > /dev/null
"$RUN" "$W/m.snnmod" train $DATA $COMMON --epochs 2 --resume "$W/b.st" \
  --checkpoint "$W/b.st" --metrics "$W/b.jsonl" > /dev/null
cmp "$W/a.st" "$W/b.st" || fail "resumed checkpoint differs from the straight run"
cmp "$W/a.jsonl" "$W/b.jsonl" >/dev/null 2>&1 || true # samples/s differ
[ "$(wc -l < "$W/b.jsonl")" -eq 2 ] || fail "metrics should have 2 epochs"
"$PY" - "$W/a.jsonl" <<'PYEOF' || fail "training did not learn the toy problem"
import json, sys
epochs = [json.loads(l) for l in open(sys.argv[1])]
keys = {"epoch", "train_loss", "train_acc", "test_loss", "test_acc",
        "samples_per_s", "lr", "spike_rates"}
assert keys <= set(epochs[-1]), epochs[-1]
assert epochs[-1]["test_acc"] >= 0.9, epochs
PYEOF
"$RUN" "$W/m.snnmod" infer --device "$DEVICE" --weights "$W/a.st" \
  --data "$W/test_x.npy" --labels "$W/test_y.npy" --output "$W/y.npy" \
  | grep -q "^accuracy:" || fail "infer with the checkpoint"

expect_error() { # expect_error PATTERN ARGS...
  pattern=$1; shift
  if "$RUN" "$@" > "$W/out" 2>&1; then fail "expected an error: $*"; fi
  grep -q "^snn-run: error: .*$pattern" "$W/out" || {
    cat "$W/out" >&2; fail "wrong message for: $*"; }
}
expect_error "train needs --data" "$W/m.snnmod" train --device cpu
expect_error "was trained with --seed 3, not 4" "$W/m.snnmod" train $DATA \
  --device cpu --seed 4 --epochs 3 --resume "$W/a.st"
expect_error "--epochs expects an integer >= 1" "$W/m.snnmod" train $DATA --epochs 0
expect_error "--lr-schedule must be const, step or cosine" "$W/m.snnmod" train \
  $DATA --device cpu --lr-schedule linear
expect_error "no such file or directory" "$W/m.snnmod" train --device cpu \
  --data "$W/nothing.npy"
echo "snn-run train: OK"
