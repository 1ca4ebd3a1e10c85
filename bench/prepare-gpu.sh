#!/usr/bin/env bash
# On this machine (snn-opt built): compiles the modules bench/gpu-train.sh
# runs and copies what the GPU machine lacks into .gpu/ (an ignored folder
# carried to it): nlohmann/json headers, Fashion-MNIST, compiled modules.
# SpikingJelly's source goes to .peers/ (fetched separately, never committed).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
opt="${SNN_OPT:-$root/build/bin/snn-opt}"
g="$root/.gpu"
mkdir -p "$g/mods" "$g/data" "$g/include"
cp -r /usr/include/nlohmann "$g/include/"
cp -r /usr/share/datasets/fashion-mnist "$g/data/"
compile() { # name source autodiff-options
  rm -rf "$g/mods/$1.snnmod"
  "$opt" "$2" --snn-autodiff="$3" --snn-compile="output=$g/mods/$1.snnmod target=all" -o /dev/null
}
compile fmnist-mlp "$root/examples/fmnist-mlp.mlir" "optimizer=adam lr=0.001"
compile fmnist-convnet "$root/examples/fmnist-convnet.mlir" "optimizer=adam lr=0.001"
compile vgg11 "$root/examples/vgg11.mlir" "optimizer=sgd lr=0.1 momentum=0.9 loss=ce_rate"
# The same with the saved membranes in bf16 (--snn-compile saved-h=bf16).
rm -rf "$g/mods/vgg11-bf16h.snnmod"
"$opt" "$root/examples/vgg11.mlir" --snn-autodiff="optimizer=sgd lr=0.1 momentum=0.9 loss=ce_rate" \
  --snn-compile="output=$g/mods/vgg11-bf16h.snnmod target=all saved-h=bf16" -o /dev/null
for net in mlp conv; do
  compile sj-$net "$root/test/Runtime/Inputs/sj/$net.mlir" "optimizer=sgd lr=0.1 momentum=0 loss=ce_rate"
done
# Recurrent networks: the SHD-sized example, random recurrent models and the
# NIR test graphs with their float64 references (checked on the GPU by
# bench/gpu-train.sh recurrent).
rm -rf "$g/mods/recurrent.snnmod" "$g/recurrent-check" "$g/nir-sim"
"$opt" "$root/examples/recurrent.mlir" --snn-temporal-fusion \
  --snn-compile="output=$g/mods/recurrent.snnmod target=all" -o /dev/null 2>/dev/null
rm -rf "$g/mods/recurrent-train.snnmod" "$g/recurrent-grads"
"$opt" "$root/examples/recurrent.mlir" --snn-temporal-fusion \
  --snn-autodiff="optimizer=sgd lr=0.01 momentum=0.9" \
  --snn-compile="output=$g/mods/recurrent-train.snnmod target=all" -o /dev/null 2>/dev/null
# One training step's gradients against the float64 reference (checked on the
# GPU by bench/gpu-train.sh grads): grads_case DIR MODEL [OPTIONS...] compiles
# test/Dialect/SNN/Transforms/Inputs/gradcheck/MODEL.mlir with OPTIONS (passes
# before --snn-autodiff, then extra --snn-compile settings after "--") and
# draws the weights, input and labels.
grads_case() {
  local dir="$g/$1" src="$root/test/Dialect/SNN/Transforms/Inputs/gradcheck/$2.mlir"
  [ -f "$2" ] && src="$2" # a path of its own
  shift 2
  local passes=() compile=""
  while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then compile="${*:2}"; break; fi
    passes+=("$1"); shift
  done
  rm -rf "$dir" && mkdir -p "$dir"
  "$opt" "$src" "${passes[@]}" --snn-autodiff \
    --snn-compile="output=$dir/rec.snnmod target=all $compile" -o /dev/null 2>/dev/null
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/grads_reference.py" make \
    "$dir/rec.snnmod" "$dir"
}
grads_case recurrent-grads recurrent --snn-temporal-fusion
grads_case recurrent-grads-plif recurrent-plif --snn-temporal-fusion
grads_case recurrent-grads-cuba recurrent-cuba --snn-temporal-fusion
# Multi-step plif layers (per-feature and scalar leak weights).
grads_case plif-grads "$root/test/Runtime/Inputs/plif-net.mlir"
# bf16 saved H through the compiled kernels (the reference rounds H the same
# way), recomputed H, asymmetric convolution padding (im2col + cuBLAS).
grads_case bf16-grads conv -- saved-h=bf16
grads_case recompute-grads conv -- recompute=2
grads_case asym-grads conv-asym
# Every neuron model, surrogate, reset and firing rule in one chain (as
# test/Runtime/neuron-variants.test): the GPU runs them only as generated
# kernels, as the CPU does.
grads_case variants-grads "$root/test/Runtime/Inputs/neuron-variants.mlir"
# Grouped, strided, dilated convolutions with a bias at batch 1 (cuDNN plus
# the generated bias kernels and their gradient).
grads_case layer-grads "$root/test/Runtime/Inputs/conv-layers.mlir"
# The generated op kernels (elementwise ops, pooling, losses, optimizer updates), checked on
# the GPU by bench/gpu-op-kernels.sh: opk_case NAME SOURCE AUTODIFF-OPTIONS.
rm -rf "$g/opk"
gc="$root/test/Dialect/SNN/Transforms/Inputs/gradcheck"
opk_case() {
  local dir="$g/opk/$1"
  mkdir -p "$dir"
  "$opt" "$2" --snn-autodiff="$3" \
    --snn-compile="output=$dir/rec.snnmod target=all" -o /dev/null
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/grads_reference.py" make \
    "$dir/rec.snnmod" "$dir"
}
opk_case residual-adam "$gc/residual.mlir" "optimizer=adam weight-decay=0.01"
opk_case dropout-momentum "$root/test/Runtime/Inputs/dropout.mlir" "optimizer=sgd momentum=0.9"
opk_case conv-sgd "$gc/conv.mlir" "optimizer=sgd momentum=0"
opk_case conv-momentum "$gc/conv.mlir" "optimizer=sgd momentum=0.9 weight-decay=0.01"
opk_case conv-nesterov "$gc/conv.mlir" "optimizer=sgd momentum=0.8 nesterov=true weight-decay=0.001"
opk_case conv-adamw "$gc/conv.mlir" "optimizer=adamw weight-decay=0.05 beta1=0.8 beta2=0.95"
opk_case pools "$root/test/Runtime/Inputs/pools.mlir" "optimizer=sgd momentum=0.9"
# Batch norm on channels-last maps (coalesced statistics kernels, C = 6, 8).
opk_case bn-nhwc "$root/test/Runtime/Inputs/batch-norms-nhwc.mlir" "optimizer=sgd momentum=0.9"
# Every loss kind (generated loss kernels, one block; odd classes, batch 1).
ri="$root/test/Runtime/Inputs"
opk_case loss-ce-rate "$ri/loss-rates.mlir" "loss=ce_rate optimizer=sgd momentum=0.9"
opk_case loss-mse-rate "$ri/loss-rates.mlir" "loss=mse_rate optimizer=sgd momentum=0.9"
opk_case loss-ce-membrane "$ri/loss-membrane.mlir" "loss=ce_membrane optimizer=sgd momentum=0.9"
opk_case loss-ce-membrane-max "$ri/loss-membrane.mlir" "loss=ce_membrane_max optimizer=sgd momentum=0.9"
# VGG-11 recomputing its LIF layers' H (T = 4: no checkpoint at all).
rm -rf "$g/mods/vgg11-recompute.snnmod"
"$opt" "$root/examples/vgg11.mlir" --snn-autodiff="optimizer=sgd lr=0.1 momentum=0.9 loss=ce_rate" \
  --snn-compile="output=$g/mods/vgg11-recompute.snnmod target=all recompute=8" -o /dev/null
# The MLIR-generated neuron kernels alone (bench/gpu-check.sh, bench/lif_layer.py).
rm -rf "$g/nk"
python3 "$root/test/Conversion/NeuronToGPU/Inputs/neuron_kernels_gpu.py" build "$g/nk" \
  --snn-opt "$opt" > /dev/null
python3 "$root/test/Runtime/Inputs/recurrent_check.py" "$opt" - "$g/recurrent-check" --prepare --trials 6
python3 "$root/test/Target/NIR/Inputs/simulate_check.py" "$opt" - "$g/nir-sim" --prepare \
  single_lif mlp conv conv_same conv_same_even misc recurrent nested old conv1d delays mixed_delays \
  flatten_mid rec_bias_min rec_bias rec_subgraph rec_delay_bias two_loops
# Membrane outputs, recorded state and the max-over-time membrane loss
# (checked on the GPU by bench/gpu-train.sh record, as test/Runtime/record-cuda.test).
r="$g/record"; rm -rf "$r" && mkdir -p "$r/net" "$r/step" "$r/max" "$r/variants"
rt="$root/test/Runtime/Inputs"
"$opt" "$rt/neuron-variants.mlir" --snn-compile="output=$r/variants/m.snnmod target=all" -o /dev/null
PYTHONPATH="$root/python" python3 "$rt/make_data.py" "$r/variants/m.snnmod" "$r/variants" 5
# The same for the CPU only: on a GPU its first neuron layer is an error.
"$opt" "$rt/neuron-variants.mlir" --snn-compile="output=$r/variants/cpu.snnmod target=cpu" -o /dev/null
"$opt" "$rt/record-net.mlir" --snn-compile="output=$r/net/m.snnmod target=all" -o /dev/null
PYTHONPATH="$root/python" python3 "$rt/make_data.py" "$r/net/m.snnmod" "$r/net" 5
"$opt" "$rt/membrane-step.mlir" --snn-temporal-fusion --snn-compile="output=$r/step/m.snnmod target=all" -o /dev/null 2>/dev/null
PYTHONPATH="$root/python" python3 "$rt/make_data.py" "$r/step/m.snnmod" "$r/step" 4
"$opt" "$rt/membrane-step.mlir" --snn-temporal-fusion --snn-autodiff="loss=ce_membrane_max" \
  --snn-compile="output=$r/max/m.snnmod target=all" -o /dev/null 2>/dev/null
PYTHONPATH="$root/python" python3 "$rt/grads_reference.py" make "$r/max/m.snnmod" "$r/max"
du -sh "$g" "$root/.peers" 2>/dev/null || true
