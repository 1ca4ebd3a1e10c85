#!/usr/bin/env bash
# Accuracy of the sparse backward (--snn-autodiff grad-threshold=B) against
# the dense surrogate gradient (docs/user-guide.md, "Sparse backward"): the
# same network, data, seed and epochs, trained once per B.
#
#   bench/band-accuracy.sh [OUT_DIR]     (snn-opt and snn-run built here)
#
# Data: synthetic SHD-layout event files (python/snnref/synthetic_shd.py:
# 20 classes of formant sweeps plus noise, 700 channels, 5% density, 15%
# of the spikes on the class pattern), 2048 training and 512 test samples,
# binned into T=50 steps. Network: 700 -> 256 LIF -> 256 LIF -> 20 LI
# readout, batch 32, Adam lr 1e-3, mean-membrane cross-entropy. Variants: no
# band (each layer's own surrogate), B=inf (must train identically), and
# B = 1.0, 0.75, 0.5, 0.25 (v_th = 1), and 0.5, 0.25 after one epoch with
# the dense surrogate (a silent network at initialization has no neuron in a
# narrow band, hence no gradient). EPOCHS (default 4), DEVICE (default cpu)
# and THREADS (default: all cores) come from the environment. Prints one
# line per variant and writes band-accuracy.md to OUT_DIR.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
opt="${SNN_OPT:-$root/build/bin/snn-opt}"
run="${SNN_RUN:-$root/build/runtime/snn-run}"
out="${1:-/tmp/band-accuracy}"
epochs=${EPOCHS:-4}
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$out"
export PYTHONPATH="$root/python"

python3 -m snnref.synthetic_shd "$w/train.h5" --samples 2048 --steps 50 --density 0.05 \
  --signal 0.15 --seed 1 >/dev/null
python3 -m snnref.synthetic_shd "$w/test.h5" --samples 512 --steps 50 --density 0.05 \
  --signal 0.15 --seed 2 >/dev/null

cat > "$w/net.mlir" <<'MLIR'
func.func @forward(%x: tensor<50x32x700xf32>) -> tensor<50x32x20xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<256x700xf32>
  %h1 = snn.linear %x, %w1 : tensor<50x32x700xf32>, tensor<256x700xf32> -> tensor<50x32x256xf32>
  %s1 = snn.lif %h1 {k = 0.1, c = 1.0, snn.name = "lif1"} : tensor<50x32x256xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<256x256xf32>
  %h2 = snn.linear %s1, %w2 : tensor<50x32x256xf32>, tensor<256x256xf32> -> tensor<50x32x256xf32>
  %s2 = snn.lif %h2 {k = 0.1, c = 1.0, snn.name = "lif2"} : tensor<50x32x256xf32>
  %w3 = snn.param "fc3.weight" {init = #snn.init<kaiming_uniform>} : tensor<20x256xf32>
  %h3 = snn.linear %s2, %w3 : tensor<50x32x256xf32>, tensor<20x256xf32> -> tensor<50x32x20xf32>
  %o = snn.li %h3 {k = 0.1, c = 1.0, snn.name = "readout"} : tensor<50x32x20xf32>
  return %o : tensor<50x32x20xf32>
}
MLIR

target=cpu; [ "${DEVICE:-cpu}" = cpu ] || target=all
train() { # module name epochs extra-options...
  local mod=$1 name=$2 n=$3; shift 3
  "$run" "$w/$mod.snnmod" train --device "${DEVICE:-cpu}" ${THREADS:+--threads $THREADS} \
    --data "$w/train.h5" --test-data "$w/test.h5" --spike-duration 1.0 \
    --epochs "$n" --seed 7 --no-progress --metrics "$w/$name.jsonl" \
    --checkpoint "$w/$name.safetensors" "$@" > "$w/$name.log"
}
rows=""
# name:B; "B+warm": B after one epoch with the dense surrogate (the weights
# of that epoch, a fresh optimizer state).
for v in dense: inf:inf 1.0:1.0 0.75:0.75 0.5:0.5 0.25:0.25 0.5+warm:0.5 0.25+warm:0.25; do
  name=${v%%:*} b=${v#*:}
  [ -d "$w/${name%%+*}.snnmod" ] || "$opt" "$w/net.mlir" \
    --snn-autodiff="optimizer=adam lr=0.001 loss=ce_membrane${b:+ grad-threshold=$b}" \
    --snn-compile="output=$w/${name%%+*}.snnmod target=$target" -o /dev/null
  start=$(date +%s.%N)
  if [ "$name" = "${name%+warm}" ]; then
    train "$name" "$name" "$epochs"
  else
    [ -f "$w/warm.safetensors" ] || train dense warm 1
    train "${name%%+*}" "$name" $((epochs - 1)) --weights "$w/warm.safetensors"
    cat "$w/warm.jsonl" "$w/$name.jsonl" > "$w/$name.all" && mv "$w/$name.all" "$w/$name.jsonl"
  fi
  # The share of hidden-layer entries inside the band, |H - 1| <= B, with the
  # trained weights on 128 test samples: the density of the sparse backward.
  "$run" "$w/${name%%+*}.snnmod" infer --device "${DEVICE:-cpu}" --weights "$w/$name.safetensors" \
    --data "$w/test.h5" --spike-duration 1.0 --limit 128 --record lif1:h,lif2:h \
    --record-output "$w/$name-h.safetensors" > /dev/null
  share=$(python3 - "$w/$name-h.safetensors" "${b:-inf}" <<'PY'
import sys
import numpy as np
from snnref.tensorio import read_safetensors as load_file
h = np.concatenate([v.ravel() for v in load_file(sys.argv[1])[0].values()])
print(f"{np.mean(np.abs(h - 1.0) <= float(sys.argv[2])):.3f}")
PY
)
  secs=$(python3 -c "import sys,time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$start")
  line=$(python3 - "$w/$name.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
accs = " / ".join(f"{r['test_acc']:.3f}" for r in rows)
print(f"{rows[-1]['train_loss']:.4f} | {rows[-1]['test_acc']:.3f} | {accs}")
PY
)
  label="${b:-none (dense surrogate)}"
  [ "$name" = "${name%+warm}" ] || label="$b after 1 dense epoch"
  echo "B=$label: train loss | test acc | per epoch | band share = $line | $share (${secs} s)"
  rows="$rows| $label | $line | $share | $secs |"$'\n'
done
if cmp -s "$w/dense.safetensors" "$w/inf.safetensors"; then same="identical"; else same="DIFFERENT"; fi
echo "B=inf weights vs no band after $epochs epochs: $same"

{
  echo "# Sparse backward: accuracy against the dense surrogate gradient — ${DEVICE:-cpu}, $(date +%F)"
  echo
  echo "\`bench/band-accuracy.sh\` (EPOCHS=$epochs, DEVICE=${DEVICE:-cpu}${THREADS:+, THREADS=$THREADS}):"
  echo "synthetic SHD-layout data (700 channels, 20 classes, 5% density, 15% of the spikes on the class pattern, T=50),"
  echo "2048 train / 512 test samples; 700-256-256-20 LIF net, batch 32, Adam 1e-3,"
  echo "the same seed for every variant. B=inf weights vs no band: $same."
  echo
  echo "Band share: the fraction of the hidden layers' (t, sample, neuron) entries with"
  echo "|H - v_th| <= B after training (128 test samples): the share of the surrogate"
  echo "derivative the sparse backward keeps."
  echo
  echo "| grad-threshold B | final train loss | final test acc | test acc per epoch | band share | seconds |"
  echo "|---|---|---|---|---|---|"
  printf "%s" "$rows"
} > "$out/band-accuracy.md"
echo "wrote $out/band-accuracy.md"
