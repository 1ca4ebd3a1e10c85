#!/usr/bin/env bash
# Generated batch norm kernels (snn-compile batch-norm-kernels=true) against
# the runtime's hand-written CUDA batch norm (the default), on the spiking
# VGG-11 (T=4, B=64, TF32).
#
#   bench/gpu-bn.sh prepare   (here, snn-opt built) compiles VGG-11 twice into
#       .gpu/bn/: vgg11.snnmod (batch norm as runtime `batch_norm` ops) and
#       vgg11-bn.snnmod (as generated `kernel` ops); the rest of the two
#       modules is the same. Compiles the batch norm test model
#       (test/Runtime/Inputs/batch-norms.mlir) with generated batch norm for
#       the correctness check and draws its weights and data.
#   bench/gpu-bn.sh run       (GPU machine) builds the runtime, checks the
#       generated batch norm kernels on cuda:0 (one training step against
#       the float64 reference, and against the same module's CPU kernels),
#       then alternates the two VGG-11 modules: `snn-run bench` (CUDA graphs,
#       forward and training step) three times each, and one per-op profile
#       each (`--profile`). Results in $OUT/bn-bench.txt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
g="$root/.gpu/bn"
mode=${1:-run}

if [ "$mode" = prepare ]; then
  opt="${SNN_OPT:-$root/build/bin/snn-opt}"
  rm -rf "$g" && mkdir -p "$g/check" "$root/.gpu/include"
  cp -r /usr/include/nlohmann "$root/.gpu/include/"
  for variant in "vgg11:false" "vgg11-bn:true"; do
    "$opt" "$root/examples/vgg11.mlir" \
      --snn-autodiff="optimizer=sgd lr=0.1 momentum=0.9 loss=ce_rate" \
      --snn-compile="output=$g/${variant%%:*}.snnmod target=all batch-norm-kernels=${variant##*:}" \
      -o /dev/null
  done
  "$opt" "$root/test/Runtime/Inputs/batch-norms.mlir" --snn-autodiff="optimizer=sgd momentum=0.9" \
    --snn-compile="output=$g/check/bn.snnmod target=all batch-norm-kernels=true" -o /dev/null
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/grads_reference.py" make \
    "$g/check/bn.snnmod" "$g/check"
  exit 0
fi

set +e  # a failed check must not cost the measurements after it
out="${OUT:-/tmp/gpu-out}"; mkdir -p "$out"
log="$out/bn-bench.txt"
b=/tmp/snnrt-bn
. "$root/bench/gpu-ab.sh"
gpu_build_runtime "$root/runtime" $b
run=$b/snn-run
c="$g/check"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "== generated batch norm vs float64 (one training step, cuda:0, arena poisoned)"
  SNNRT_MEMORY_PLAN=poison $run "$c/bn.snnmod" grads --device cuda:0 --weights "$c/w.safetensors" \
    --data "$c/x.npy" --labels "$c/y.npy" --output "$c/grads.safetensors" 2>&1 | tail -1
  $run "$c/bn.snnmod" grads --device cpu --weights "$c/w.safetensors" \
    --data "$c/x.npy" --labels "$c/y.npy" --output "$c/grads-cpu.safetensors" 2>&1 | tail -1
  echo "(OTHER: the CPU kernels' gradients against the CUDA ones)"
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/grads_reference.py" compare \
    "$c/bn.snnmod" "$c" "$c/grads-cpu.safetensors" 2>&1 | tail -3
  echo "== VGG-11 (TF32, CUDA graphs) fwd_ms / step_ms: runtime batch norm vs generated batch norm"
  gpu_ab_bench "runtime-bn:" "$run $g/vgg11.snnmod" \
    "generated: " "$run $g/vgg11-bn.snnmod" "runtime batch norm" "generated batch norm"
} 2>&1 | tee "$log"
