#!/usr/bin/env bash
# On the GPU machine: snn-run --device cuda against --device cpu and against the
# float64 reference, on modules compiled here with target=all (MLIR kernels).
set -uo pipefail
out="${OUT:-/tmp/gpu-out}"; mkdir -p "$out"
b=/tmp/snnrt-build
cmake -S runtime -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DSNN_ENABLE_CUDA=ON \
  -DSNNRT_JSON_INCLUDE="$PWD/.gpu/include" > "$out/build.log" 2>&1 && ninja -C $b >> "$out/build.log" 2>&1
echo "build rc=$?"
e=.gpu/e2e
for dev in cpu cuda:0; do
  $b/snn-run $e/conv.snnmod infer --device $dev --verbose --data $e/x.npy --weights $e/w.safetensors \
    --output $e/y-${dev%%:*}.npy 2>&1 | tail -6
done
cp $e/y-cuda.npy $e/y.npy && python3 test/Runtime/Inputs/infer_reference.py compare $e/conv.snnmod $e
python3 -c "import numpy as np; a=np.load('$e/y-cpu.npy'); b=np.load('$e/y-cuda.npy'); print('cpu vs cuda: differing outputs', int((a!=b).sum()), 'of', a.size)"
SNNRT_CUDA_TEST_MODULE=$PWD/$e/conv.snnmod $b/cuda/test/snnrt-cuda-parity-tests 2>&1 | tail -5
$b/cuda/test/snnrt-cuda-tests 2>&1 | grep -E "FAILED|Failure|Expected|actual|Which|error" | head -30
