#!/usr/bin/env bash
# --snn-fuse on the spiking VGG-11 (T=4, B=64, TF32): batch norm applied by
# the neuron kernel and the neuron + pooling fusion (the pooled spikes
# written by the neuron kernel, the pooled gradient spread by the neuron
# backward), training and inference, each against main's unfused module, in
# one process set.
#
#   bench/gpu-fuse.sh prepare   (here, snn-opt built) compiles into .gpu/fuse/
#       (target=all) VGG-11 training modules: `plain` (no --snn-fuse),
#       `pool` (--snn-fuse="batch-norm=false": the pooling fusion alone,
#       training and inference), `savedh` (batch norm + neuron + pooling,
#       H saved: --snn-fuse's default until 2026-12-07), `bnbwd` (plus the
#       batch norm backward's sums in the neuron backward), `fusedrc`
#       (savedh with H recomputed from the batch norm's input), `fused`
#       (--snn-fuse, the default: all of them), and
#       `nhwc`
#       (--snn-channels-last before --snn-autodiff, then --snn-fuse:
#       channels-last convolutions, batch norms, neurons and pools, batch
#       norm + neuron + pooling fused on the [.., H, W, C] maps);
#       random weights, inputs and labels; the CPU-tested small models
#       (test/Runtime/Inputs/bn-fuse.mlir fused and not, vgg-small.mlir and
#       the layer variants of test/Runtime/Inputs/fuse-pool; the training
#       step of vgg-small.mlir, fuse-pool/train-net.mlir,
#       fuse-bn/train-net.mlir and the channels-last
#       fuse-pool/train-nhwc.mlir fused and not; the channels-last pools of
#       pools-nhwc.mlir) with inputs.
#   bench/gpu-fuse.sh run [check|bench]   (GPU machine) builds the runtime,
#       then `check`: on cuda:0 the fused modules' inference outputs and
#       one training step's gradients against the unfused ones (identical:
#       the same arithmetic in the same order, except where the neuron
#       backward sums a batch norm's backward, whose reduction order differs:
#       within 1e-6 relative), the gradients of two runs of the fused
#       modules and of nhwc bit for bit (nhwc against plain proves nothing:
#       its convolutions sum in another order and a random VGG-11 is
#       chaotic), and
#       the small models against the float64 reference; `bench`: `snn-run
#       bench` (step, forward, peak memory) of plain, pool, savedh, fused and
#       nhwc alternating,
#       3 rounds, a per-op profile of plain, savedh, fused and nhwc, and torch.compile
#       once (bench/vgg11.py --only torch.compile) against the fused
#       module. Results: $OUT/fuse-check.txt, fuse-bench.txt,
#       fuse-profile.txt and bench/vgg11.py's table (.md, .json).
#   bench/gpu-fuse.sh run recompute   (GPU machine) `fusedrc` and `fused`
#       (no H saved, the neuron backward normalizes the batch norm's x again
#       and recomputes H) against `savedh` and `bnbwd`, which save H:
#       gradients bit for bit, the
#       small recompute-net against float64, the step (3 alternating
#       rounds), torch.compile once, per-op profiles. File:
#       $OUT/fuse-recompute.txt.
#   bench/gpu-fuse.sh run repeat   (GPU machine) each VGG-11 module's
#       training gradients from 3 processes, cuDNN's algorithms timed per
#       process (default) and chosen by its heuristics
#       (SNNRT_CUDA_CUDNN_FIND=0): are runs bit-identical? And the fused
#       step time under both. Result: $OUT/fuse-repeat.txt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
g="$root/.gpu/fuse"
inputs="$root/test/Runtime/Inputs"
mode=${1:-run}

if [ "$mode" = prepare ]; then
  opt="${SNN_OPT:-$root/build/bin/snn-opt}"
  train="optimizer=sgd lr=0.1 momentum=0.9 loss=ce_rate"
  rm -rf "$g" && mkdir -p "$g/vgg11" "$g/small" "$g/bn" "$root/.gpu/include"
  cp -r /usr/include/nlohmann "$root/.gpu/include/"
  vgg() { # name fuse-options... ($compile: more --snn-compile options)
    local name=$1; shift
    "$opt" "$root/examples/vgg11.mlir" --snn-autodiff="$train" "$@" \
      --snn-compile="output=$g/vgg11-$name.snnmod target=all ${compile:-}" -o /dev/null \
      2> "$g/remarks-$name.txt"
  }
  vgg plain
  vgg pool --snn-fuse="batch-norm=false"
  vgg savedh --snn-fuse="batch-norm-backward=false recompute=false"
  vgg bnbwd --snn-fuse="recompute=false"
  # H recomputed from the batch norm's x in the neuron backward (T = 4: one
  # chunk, no checkpoint row but the minimum one).
  vgg fusedrc --snn-fuse="batch-norm-backward=false"
  vgg fused --snn-fuse
  # The layout pass runs before --snn-autodiff: the backward inherits it.
  "$opt" "$root/examples/vgg11.mlir" --snn-channels-last --snn-autodiff="$train" \
    --snn-fuse --snn-compile="output=$g/vgg11-nhwc.snnmod target=all" -o /dev/null \
    2> "$g/remarks-nhwc.txt"
  grep -h "channels-last" "$g/remarks-nhwc.txt" | sed 's/^.*remark: /nhwc: /' || true
  for m in pool savedh bnbwd fusedrc fused nhwc; do
    echo "$m: $(grep -c "remark: fused" "$g/remarks-$m.txt") fusions"
  done
  # VGG-11's random weights and inputs (40 MB) are drawn on the GPU machine
  # (vgg_inputs below): the carried folder stays small.
  # A CPU test's training model MLIR into DIR: plain and fused modules, one
  # random draw of weights, input and labels.
  train_pair() { # MLIR DIR
    mkdir -p "$2"
    for v in plain fused; do
      fuse=$([ $v = fused ] && echo --snn-fuse || true)
      "$opt" "$1" --snn-autodiff="optimizer=sgd loss=ce_rate" $fuse \
        --snn-compile="output=$2/$v.snnmod target=all" -o /dev/null 2>/dev/null
    done
    PYTHONPATH="$root/python" python3 "$inputs/grads_reference.py" make "$2/fused.snnmod" "$2"
  }
  # The model of test/Runtime/fuse-batch-norm.test.
  train_pair "$inputs/bn-fuse.mlir" "$g/bn"
  "$opt" "$inputs/vgg-small.mlir" --snn-fuse \
    --snn-compile="output=$g/small.snnmod target=all" -o /dev/null 2>/dev/null
  python3 "$inputs/infer_reference.py" make-inputs "$g/small.snnmod" "$g/small"
  mkdir -p "$g/variants"
  python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng().uniform(0.0, 1.2, (8, 3, 4, 6)).astype(np.float32))" "$g/variants/x.npy"
  for m in lif-per-neuron-2x3 cuba-soft-sum-2x2 if-4x2; do
    "$opt" "$inputs/fuse-pool/$m.mlir" --snn-fuse \
      --snn-compile="output=$g/variants/$m-fused.snnmod target=all" -o /dev/null 2>/dev/null
    "$opt" "$inputs/fuse-pool/$m.mlir" \
      --snn-compile="output=$g/variants/$m.snnmod target=all" -o /dev/null
  done
  # Channels-last pools and transposes (test/Runtime/pools-nhwc.test).
  mkdir -p "$g/nhwc-pools"
  "$opt" "$inputs/pools-nhwc.mlir" --snn-autodiff="optimizer=sgd" \
    --snn-compile="output=$g/nhwc-pools/pools.snnmod target=all" -o /dev/null
  PYTHONPATH="$root/python" python3 "$inputs/grads_reference.py" make "$g/nhwc-pools/pools.snnmod" "$g/nhwc-pools"
  # The training step of the pooling fusions (test/Runtime/fuse-pool-train.test,
  # fuse-bn-train.test, fuse-pool-nhwc.test; channels-last batch norms,
  # batch-norm-kernels.test).
  for m in vgg-small fuse-pool/train-net fuse-bn/train-net fuse-pool/train-nhwc batch-norms-nhwc; do
    train_pair "$inputs/$m.mlir" "$g/train/$(basename $m)"
  done
  # The recomputing batch norm backward (test/Runtime/fuse-bn-recompute.test):
  # saved H vs recomputed (--snn-fuse's default), with the batch norm
  # backward's sums.
  r="$g/recompute"; mkdir -p "$r"
  for v in saved rc; do
    f=$([ $v = saved ] && echo "=recompute=false" || true)
    "$opt" "$inputs/fuse-bn/recompute-net.mlir" --snn-autodiff="optimizer=sgd loss=ce_rate" \
      --snn-fuse$f --snn-compile="output=$r/$v.snnmod target=all" -o /dev/null 2>/dev/null
  done
  PYTHONPATH="$root/python" python3 "$inputs/grads_reference.py" make "$r/rc.snnmod" "$r"
  exit 0
fi

set +e  # a failed check must not cost the measurements after it
part=${2:-all}
out="${OUT:-/tmp/gpu-out}"; mkdir -p "$out"
b=/tmp/snnrt-build  # shared with bench/gpu-train.sh
. "$root/bench/gpu-ab.sh"
# SNN_RUN: a runtime built already (no build here).
if [ -n "${SNN_RUN:-}" ]; then run=$SNN_RUN; else
  gpu_build_runtime "$root/runtime" "$b"
  run="$b/snn-run"
fi
export PYTHONPATH="$root/python"
vgg_inputs() {
  [ -f "$g/vgg11/w.safetensors" ] && return
  mkdir -p "$g/vgg11"
  python3 "$inputs/infer_reference.py" make-inputs "$g/vgg11-fused.snnmod" "$g/vgg11"
  python3 -c "import numpy as np, sys; rng = np.random.default_rng(); np.save(sys.argv[1] + '/xt.npy', rng.uniform(0.0, 1.0, (4, 64, 3, 32, 32)).astype(np.float32)); np.save(sys.argv[1] + '/y.npy', rng.integers(0, 10, 64))" "$g/vgg11"
}
vgg_inputs
# same A B LABEL [RTOL]: "LABEL: N differences of M (max rel R)" and
# IDENTICAL, WITHIN RTOL (a normwise relative difference up to RTOL) or FAIL.
same() {
  python3 - "$@" <<'EOF'
import sys
import numpy as np
from snnref.tensorio import read_safetensors
a, b, label = sys.argv[1:4]
rtol = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
if a.endswith(".npy"):
    pairs = [("output", np.load(a), np.load(b))]
else:
    ta, tb = read_safetensors(a)[0], read_safetensors(b)[0]
    pairs = [(k, ta[k], tb[k]) for k in sorted(ta) if k == "loss" or k.startswith("grad:")]
diff = sum(int((x != y).sum()) for _, x, y in pairs)
size = sum(x.size for _, x, _ in pairs)
rel = max(float(np.linalg.norm(x - y) / max(np.linalg.norm(x), 1e-30)) for _, x, y in pairs)
nonzero = all(np.any(x != 0) for _, x, _ in pairs)
verdict = ("IDENTICAL" if diff == 0 else f"WITHIN {rtol:.0e}" if rel <= rtol
           else "FAIL")
print(f"{label}: {diff} differences of {size} (max rel {rel:.1e}) "
      + (verdict if nonzero else "FAIL"))
EOF
}

if [ "$part" = repeat ]; then
{
  # Run to run: each VGG-11 module's training gradients from 3 processes,
  # with the convolution algorithms cuDNN timed in each process (the
  # default) and with its heuristic choice (SNNRT_CUDA_CUDNN_FIND=0). Two
  # deterministic algorithms may sum in different orders: a process that
  # times them may pick another one than the last.
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  v="$g/vgg11"
  for find in 1 0; do
    echo "== SNNRT_CUDA_CUDNN_FIND=$find"
    for m in "$g"/vgg11-*.snnmod; do
      name=$(basename "$m" .snnmod)
      for i in 1 2 3; do
        SNNRT_CUDA_CUDNN_FIND=$find $run "$m" grads --device cuda:0 --data "$v/xt.npy" \
          --labels "$v/y.npy" --weights "$v/w.safetensors" --output "$v/$name-$find-$i.safetensors" 2>&1 | tail -1
      done
      same "$v/$name-$find-1.safetensors" "$v/$name-$find-2.safetensors" "$name run 1 vs 2"
      same "$v/$name-$find-1.safetensors" "$v/$name-$find-3.safetensors" "$name run 1 vs 3"
    done
    same "$v/vgg11-plain-$find-1.safetensors" "$v/vgg11-fused-$find-1.safetensors" "fused vs plain"
  done
  echo "== step time, cuDNN heuristic vs timed algorithms (TF32), 3 rounds"
  for i in 1 2 3; do
    for find in 1 0; do
      echo "find=$find fused: $(SNNRT_CUDA_CUDNN_FIND=$find SNNRT_CUDA_TF32=1 $run "$g/vgg11-fused.snnmod" bench --device cuda:0 --iterations 50)"
    done
  done
} 2>&1 | tee "$out/fuse-repeat.txt"
fi

# bench_vgg OURS MODULE...: `snn-run bench` of the VGG-11 modules
# alternating, 3 rounds, then torch.compile once in this process set
# against OURS.
bench_vgg() {
  local ours=$1 i m; shift
  echo "== VGG-11 T=4 B=64, TF32, snn-run bench (step, forward, peak memory), 3 rounds"
  for i in 1 2 3; do
    for m in "$@"; do
      echo "$m: $(SNNRT_CUDA_TF32=1 $run "$g/vgg11-$m.snnmod" bench --device cuda:0 --iterations 50)"
    done
  done
  echo "== torch.compile in this process set, against the $ours module"
  python3 "$root/bench/vgg11.py" --device cuda --peers-dir "$root/.peers" --out "$out" --tf32 on \
    --only torch.compile \
    --ours "$run $g/vgg11-$ours.snnmod bench --device cuda:0 --iterations 50" 2>&1 | tail -8
}

if [ "$part" = recompute ]; then
{
  # H recomputed in the neuron backward of layers fused with their batch
  # norm: the same gradients as the modules that save H (bit for bit), the
  # small model against float64, then the step (3 alternating rounds), a
  # per-op profile, torch.compile once.
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  v="$g/vgg11"
  for m in savedh fusedrc bnbwd fused; do
    SNNRT_MEMORY_PLAN=poison $run "$g/vgg11-$m.snnmod" grads --device cuda:0 --data "$v/xt.npy" \
      --labels "$v/y.npy" --weights "$v/w.safetensors" --output "$v/$m-grads.safetensors" 2>&1 | tail -1
  done
  same "$v/savedh-grads.safetensors" "$v/fusedrc-grads.safetensors" "grads fusedrc vs savedh"
  same "$v/bnbwd-grads.safetensors" "$v/fused-grads.safetensors" "grads fused vs bnbwd"
  same "$v/savedh-grads.safetensors" "$v/fused-grads.safetensors" "grads fused vs savedh" 1e-6
  r="$g/recompute"
  for m in saved rc; do
    SNNRT_MEMORY_PLAN=poison $run "$r/$m.snnmod" grads --device cuda:0 --data "$r/x.npy" \
      --labels "$r/y.npy" --weights "$r/w.safetensors" --output "$r/$m-grads.safetensors" 2>&1 | tail -1
  done
  same "$r/saved-grads.safetensors" "$r/rc-grads.safetensors" "recompute-net rc vs saved"
  cp "$r/rc-grads.safetensors" "$r/grads.safetensors"
  python3 "$inputs/grads_reference.py" compare "$r/rc.snnmod" "$r" 2>&1 | tail -1
  bench_vgg fused savedh fusedrc bnbwd fused
  for m in savedh bnbwd fused; do
    echo "== per-op profile, $m"
    SNNRT_CUDA_TF32=1 $run "$g/vgg11-$m.snnmod" bench --device cuda:0 --iterations 20 --profile 2>&1
  done
} 2>&1 | tee "$out/fuse-recompute.txt"
fi

if [ "$part" = all ] || [ "$part" = check ]; then
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  grep -h "remark: fused" "$g"/remarks-*.txt | sed 's/^.*remark: //' | sort | uniq -c
  v="$g/vgg11"
  echo "== VGG-11 on cuda:0, fused vs plain (identical; grads with the batch norm backward fused within 1e-6)"
  for m in plain pool savedh bnbwd fused nhwc; do
    SNNRT_MEMORY_PLAN=poison $run "$g/vgg11-$m.snnmod" infer --device cuda:0 --data "$v/x.npy" \
      --weights "$v/w.safetensors" --output "$v/$m.npy" 2>&1 | head -1
    SNNRT_MEMORY_PLAN=poison $run "$g/vgg11-$m.snnmod" grads --device cuda:0 --data "$v/xt.npy" \
      --labels "$v/y.npy" --weights "$v/w.safetensors" --output "$v/$m-grads.safetensors" 2>&1 | tail -1
  done
  for m in pool savedh bnbwd fused; do
    same "$v/plain.npy" "$v/$m.npy" "infer $m"
    same "$v/plain-grads.safetensors" "$v/$m-grads.safetensors" "grads $m" \
      $([ $m = bnbwd ] || [ $m = fused ] && echo 1e-6)
  done
  # The batch norm backward's sums are per block in a fixed order: the
  # same bits run to run.
  SNNRT_MEMORY_PLAN=poison $run "$g/vgg11-fused.snnmod" grads --device cuda:0 --data "$v/xt.npy" \
    --labels "$v/y.npy" --weights "$v/w.safetensors" --output "$v/fused-grads2.safetensors" 2>&1 | tail -1
  same "$v/fused-grads.safetensors" "$v/fused-grads2.safetensors" "grads fused, run to run"
  # nhwc against plain proves nothing on a random VGG-11: the convolutions
  # sum in another order and this net is chaotic (plain's own float32
  # gradients are far from its float64 reference); the small channels-last
  # models below are checked against the reference instead. Here: nhwc's
  # gradients run to run.
  SNNRT_MEMORY_PLAN=poison $run "$g/vgg11-nhwc.snnmod" grads --device cuda:0 --data "$v/xt.npy" \
    --labels "$v/y.npy" --weights "$v/w.safetensors" --output "$v/nhwc-grads2.safetensors" 2>&1 | tail -1
  same "$v/nhwc-grads.safetensors" "$v/nhwc-grads2.safetensors" "grads nhwc, run to run"
  echo "== channels-last pools and transposes on cuda:0 vs the float64 reference"
  d="$g/nhwc-pools"
  SNNRT_MEMORY_PLAN=poison $run "$d/pools.snnmod" grads --device cuda:0 --data "$d/x.npy" \
    --labels "$d/y.npy" --weights "$d/w.safetensors" --output "$d/grads.safetensors" 2>&1 | tail -1
  python3 "$inputs/grads_reference.py" compare "$d/pools.snnmod" "$d" 2>&1 | tail -1
  echo "== bn-fuse model on cuda:0 vs the float64 reference and the unfused module"
  c="$g/bn"
  for m in plain fused; do
    SNNRT_MEMORY_PLAN=poison $run "$c/$m.snnmod" infer --device cuda:0 --data "$c/x.npy" \
      --weights "$c/w.safetensors" --output "$c/$m.npy" > /dev/null 2>&1 || echo "$m infer failed"
    SNNRT_MEMORY_PLAN=poison $run "$c/$m.snnmod" grads --device cuda:0 --data "$c/x.npy" \
      --labels "$c/y.npy" --weights "$c/w.safetensors" --output "$c/$m-grads.safetensors" 2>&1 | tail -1
  done
  same "$c/plain.npy" "$c/fused.npy" "bn-fuse infer"
  python3 -m snnref.compare "$c/fused.snnmod" --input "$c/x.npy" --output "$c/fused.npy" \
    --weights "$c/w.safetensors" --rtol 1e-5 2>&1 | tail -1
  cp "$c/fused-grads.safetensors" "$c/grads.safetensors"
  python3 "$inputs/grads_reference.py" compare "$c/fused.snnmod" "$c" "$c/plain-grads.safetensors" 2>&1 | tail -2
  echo "== pooling fusion: small VGG-like model vs the reference, layer variants vs unfused"
  $run "$g/small.snnmod" infer --device cuda:0 --data "$g/small/x.npy" \
    --weights "$g/small/w.safetensors" --output "$g/small/y.npy" 2>&1 | head -1
  python3 "$inputs/infer_reference.py" compare "$g/small.snnmod" "$g/small" 2>&1 | tail -1
  for m in lif-per-neuron-2x3 cuba-soft-sum-2x2 if-4x2; do
    for w in "$m" "$m-fused"; do
      $run "$g/variants/$w.snnmod" infer --device cuda:0 --data "$g/variants/x.npy" \
        --output "$g/variants/$w.npy" > /dev/null 2>&1 || echo "$w: snn-run failed"
    done
    same "$g/variants/$m.npy" "$g/variants/$m-fused.npy" "$m"
  done
  echo "== pooling fusion in training: small models vs the reference and the unfused module"
  for d in "$g"/train/*; do
    for v in plain fused; do
      SNNRT_MEMORY_PLAN=poison $run "$d/$v.snnmod" grads --device cuda:0 --data "$d/x.npy" \
        --labels "$d/y.npy" --weights "$d/w.safetensors" --output "$d/$v-grads.safetensors" 2>&1 | tail -1
    done
    same "$d/plain-grads.safetensors" "$d/fused-grads.safetensors" "train $(basename "$d")" 1e-6
    cp "$d/fused-grads.safetensors" "$d/grads.safetensors"
    python3 "$inputs/grads_reference.py" compare "$d/fused.snnmod" "$d" 2>&1 | tail -1
  done
} 2>&1 | tee "$out/fuse-check.txt"
fi

if [ "$part" = all ] || [ "$part" = bench ]; then
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  bench_vgg fused plain pool savedh fused nhwc
} 2>&1 | tee "$out/fuse-bench.txt"
{
  for m in plain savedh fused nhwc; do
    echo "== per-op profile, $m"
    SNNRT_CUDA_TF32=1 $run "$g/vgg11-$m.snnmod" bench --device cuda:0 --iterations 20 --profile 2>&1
  done
} > "$out/fuse-profile.txt" 2>&1
fi
