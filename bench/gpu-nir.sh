#!/usr/bin/env bash
# On the GPU machine: the NIR example (examples/nir/mlp.nir, compiled with its
# training step by bench/prepare-gpu.sh's snn-opt into .gpu/mods/nir-mlp.snnmod)
# runs and trains on the GPU; its inference equals the CPU's.
set -uo pipefail
out="${OUT:-/tmp/gpu-out}"; mkdir -p "$out"
b=/tmp/snnrt-build
cmake -S runtime -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DSNN_ENABLE_CUDA=ON \
  -DSNNRT_JSON_INCLUDE="$PWD/.gpu/include" > /tmp/build.log 2>&1 && ninja -C $b >> /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
m=.gpu/mods/nir-mlp.snnmod d=.gpu/nir
for dev in cpu cuda:0; do
  $b/snn-run $m infer --device $dev --data $d/xtest.npy --labels $d/ytest.npy --output /tmp/y-${dev%%:*}.npy --verbose 2>&1 | grep -E "accuracy|samples|kernel|compiled" | head -8
done
python3 -c "import numpy as np; a=np.load('/tmp/y-cpu.npy'); b=np.load('/tmp/y-cuda.npy'); print('NIR model infer, cpu vs cuda: max |diff|', float(abs(a-b).max()), 'of', a.size, 'values')"
$b/snn-run $m train --device cuda:0 --data $d/xtrain.npy --labels $d/ytrain.npy --test-data $d/xtest.npy \
  --test-labels $d/ytest.npy --epochs 4 --no-progress --checkpoint /tmp/ck.safetensors 2>&1 | grep epoch
$b/snn-run $m train --device cpu --data $d/xtrain.npy --labels $d/ytrain.npy --test-data $d/xtest.npy \
  --test-labels $d/ytest.npy --epochs 4 --no-progress 2>&1 | grep epoch
