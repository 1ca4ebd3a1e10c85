#!/usr/bin/env bash
# One call on the GPU machine (CUDA, CMake, PyTorch, CuPy; no LLVM, no network):
# builds the runtime with its CUDA backend, runs its GPU tests and benchmark,
# checks the MLIR-generated op kernels (bench/gpu-op-kernels.sh) and neuron
# kernels, and times the LIF layer against the peers. Needs the ignored
# folders .gpu/ (made here by bench/prepare-gpu.sh: the kernels of
# test/Conversion/NeuronToGPU/Inputs/neuron_kernels_gpu.py in .gpu/nk, the op
# kernel modules in .gpu/opk, .gpu/include/nlohmann) and .peers/
# (SpikingJelly's source, bench/README.md).
set -uo pipefail
out="${OUT:-/tmp/gpu-out}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi -L | tee "$out/device.txt"

cmake -S runtime -B /tmp/snnrt-build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSNN_ENABLE_CUDA=ON -DSNNRT_JSON_INCLUDE="$PWD/.gpu/include" > "$out/runtime-build.log" 2>&1 &&
  ninja -C /tmp/snnrt-build >> "$out/runtime-build.log" 2>&1
echo "runtime build: rc=$?"; tail -3 "$out/runtime-build.log"
(cd /tmp/snnrt-build && ctest --output-on-failure) 2>&1 | tee "$out/runtime-ctest.log" | tail -15

bench/gpu-op-kernels.sh /tmp/snnrt-build/snn-run .gpu > "$out/op-kernels.log" 2>&1
echo "$(tail -1 "$out/op-kernels.log")"
grep -E "MISMATCH|FAILED" "$out/op-kernels.log"

python3 test/Conversion/NeuronToGPU/Inputs/neuron_kernels_gpu.py run .gpu/nk > "$out/neuron-kernels.log" 2>&1
echo "neuron kernels: $(tail -1 "$out/neuron-kernels.log")"
grep '"ok": false' "$out/neuron-kernels.log"

timeout "${LIF_TIMEOUT:-300}" python3 bench/lif_layer.py --kernels .gpu/nk --peers-dir .peers \
  --out "$out" --steps ${LIF_STEPS:-64} 2>&1 | grep -v -i warn | tee "$out/lif.log" | tail -25
