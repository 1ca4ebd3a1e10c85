#!/usr/bin/env bash
# The main job: compile an example model (a spiking conv net for Fashion-MNIST,
# step form -> temporal fusion -> compiled module) and run it on the
# Fashion-MNIST test set with snn-run.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SNN_BUILD_DIR:-$root/build}"
work="$build/main-job"
mkdir -p "$work"

target=cpu device=cpu
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  target=all   # also write the MLIR-generated cubin/PTX neuron kernels
  if grep -q "^SNN_ENABLE_CUDA:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null; then
    device=cuda
  fi
fi

echo "== compile examples/mlp-step.mlir (step form) -> $work/mlp.snnmod (target=$target)"
"$build/bin/snn-opt" "$root/examples/mlp-step.mlir" --snn-temporal-fusion \
  --snn-compile="output=$work/mlp.snnmod target=$target" -o "$work/mlp.fused.mlir"
echo "== compile examples/convnet.mlir -> $work/convnet.snnmod"
"$build/bin/snn-opt" "$root/examples/convnet.mlir" \
  --snn-compile="output=$work/convnet.snnmod target=$target" -o /dev/null

data=/usr/share/datasets/fashion-mnist
for model in mlp convnet; do
  echo "== snn-run $model.snnmod infer on Fashion-MNIST test images ($device, seeded random weights)"
  "$build/runtime/snn-run" "$work/$model.snnmod" infer --device "$device" \
    --data "$data" --limit 1024 --output "$work/$model.out.npy"
done
echo "main job done: outputs in $work (training is not available in snn-run yet)"
