#!/usr/bin/env bash
# The main job: compile the Fashion-MNIST spiking MLP with its training step
# (--snn-autodiff), train it for one epoch with snn-run (GPU if there is one,
# else CPU) and run the trained model; then compile the step-form MLP
# (temporal fusion) and the conv net and run them on the test set.
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

data=/usr/share/datasets/fashion-mnist
echo "== compile examples/fmnist-mlp.mlir with its training step -> $work/fmnist-mlp.snnmod"
rm -rf "$work/fmnist-mlp.snnmod"
"$build/bin/snn-opt" "$root/examples/fmnist-mlp.mlir" \
  --snn-autodiff="optimizer=adam lr=0.001" \
  --snn-compile="output=$work/fmnist-mlp.snnmod target=$target" -o /dev/null
echo "== snn-run train: one epoch of Fashion-MNIST ($device)"
"$build/runtime/snn-run" "$work/fmnist-mlp.snnmod" train --device "$device" \
  --data "$data" --epochs 1 --checkpoint "$work/fmnist-mlp.ckpt.safetensors" \
  --metrics "$work/fmnist-mlp.metrics.jsonl"
echo "== snn-run infer with the trained weights"
"$build/runtime/snn-run" "$work/fmnist-mlp.snnmod" infer --device "$device" \
  --data "$data" --weights "$work/fmnist-mlp.ckpt.safetensors"

echo "== compile examples/mlp-step.mlir (step form) -> $work/mlp.snnmod (target=$target)"
"$build/bin/snn-opt" "$root/examples/mlp-step.mlir" --snn-temporal-fusion \
  --snn-compile="output=$work/mlp.snnmod target=$target" -o "$work/mlp.fused.mlir"
echo "== compile examples/convnet.mlir -> $work/convnet.snnmod"
"$build/bin/snn-opt" "$root/examples/convnet.mlir" \
  --snn-compile="output=$work/convnet.snnmod target=$target" -o /dev/null

for model in mlp convnet; do
  echo "== snn-run $model.snnmod infer on Fashion-MNIST test images ($device, seeded random weights)"
  "$build/runtime/snn-run" "$work/$model.snnmod" infer --device "$device" \
    --data "$data" --limit 1024 --output "$work/$model.out.npy"
done
echo "== compile examples/recurrent.mlir (a recurrent LIF layer, T=100) -> $work/recurrent.snnmod"
"$build/bin/snn-opt" "$root/examples/recurrent.mlir" --snn-temporal-fusion \
  --snn-compile="output=$work/recurrent.snnmod target=$target" -o /dev/null 2>/dev/null
echo "== snn-run recurrent.snnmod infer ($device, one batch of seeded random input)"
"$build/runtime/snn-run" "$work/recurrent.snnmod" infer --device "$device"
echo "main job done: outputs in $work"
