#!/usr/bin/env bash
# Generated batch norm kernels (this branch) against the runtime's
# hand-written CUDA batch norm of main, on the spiking VGG-11 (T=4, B=64,
# TF32).
#
#   bench/gpu-bn.sh prepare   (here, snn-opt built) compiles VGG-11 into
#       .gpu/bn/: vgg11-main.snnmod with main's snn-opt (SNN_OPT_MAIN,
#       default /work/main/build/bin/snn-opt: batch norm as the runtime's
#       `batch_norm` ops) and vgg11-bn.snnmod with this checkout's (batch
#       norm as generated `kernel` ops); copies main's runtime sources (git
#       archive of the branch SNN_MAIN_REF, default main) to .gpu/bn/main;
#       compiles the batch norm test model (test/Runtime/Inputs/
#       batch-norms.mlir) with generated batch norm for the correctness
#       check and draws its weights and data.
#   bench/gpu-bn.sh run       (GPU machine) builds both runtimes, checks the
#       generated batch norm kernels on cuda:0 (one training step, arena
#       poisoned, against the float64 reference and against the same
#       module's CPU kernels), then alternates the two
#       VGG-11 modules, each on its own runtime: `snn-run bench` (CUDA
#       graphs, forward and training step) three times each, and one per-op
#       profile each (`--profile`). Results in $OUT/bn-bench.txt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
g="$root/.gpu/bn"
mode=${1:-run}

if [ "$mode" = prepare ]; then
  opt="${SNN_OPT:-$root/build/bin/snn-opt}"
  main_opt="${SNN_OPT_MAIN:-/work/main/build/bin/snn-opt}"
  rm -rf "$g" && mkdir -p "$g/check" "$g/main" "$root/.gpu/include"
  cp -r /usr/include/nlohmann "$root/.gpu/include/"
  git -C "$root" archive "${SNN_MAIN_REF:-main}" runtime | tar -x -C "$g/main"
  vgg=(--snn-autodiff="optimizer=sgd lr=0.1 momentum=0.9 loss=ce_rate")
  "$main_opt" "$root/examples/vgg11.mlir" "${vgg[@]}" \
    --snn-compile="output=$g/vgg11-main.snnmod target=all" -o /dev/null
  "$opt" "$root/examples/vgg11.mlir" "${vgg[@]}" \
    --snn-compile="output=$g/vgg11-bn.snnmod target=all" -o /dev/null
  "$opt" "$root/test/Runtime/Inputs/batch-norms.mlir" --snn-autodiff="optimizer=sgd momentum=0.9" \
    --snn-compile="output=$g/check/bn.snnmod target=all" -o /dev/null
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
gpu_build_runtime "$g/main/runtime" $b-main
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
  echo "== VGG-11 (TF32, CUDA graphs) fwd_ms / step_ms: main (runtime batch norm) vs this branch (generated)"
  gpu_ab_bench "main:     " "$b-main/snn-run $g/vgg11-main.snnmod" \
    "generated:" "$run $g/vgg11-bn.snnmod" "main, runtime batch norm" "generated batch norm"
} 2>&1 | tee "$log"
