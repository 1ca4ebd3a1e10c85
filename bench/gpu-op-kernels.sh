#!/usr/bin/env bash
# The compiler-generated op kernels on the GPU (docs/artifact-format.md,
# "Generated op kernels"): for each module bench/prepare-gpu.sh compiled into
# .gpu/opk/ (a residual net with add/scale/accumulate, an MLP with dropout,
# a conv net with each optimizer, every pooling kernel shape, every loss
# kind), one training step on cuda:0 (memory plan arena poisoned
# with NaN) against the float64 reference, then 3 updates with the same
# gradients (steps 1-3: an eager run, the CUDA-graph capture, a replay that
# must read the new step) against torch.optim's rules in float64 (1e-6).
# Then the same on the CPU with the modules' kernels.host.so.
# Usage: bench/gpu-op-kernels.sh SNN_RUN [GPU_DIR]
set -uo pipefail
run=$1
g=${2:-.gpu}
fails=0
for dev in cuda:0 cpu; do
  for d in "$g"/opk/*/; do
    d=${d%/}
    echo "$(basename "$d") on $dev:"
    if SNNRT_MEMORY_PLAN=poison "$run" "$d/rec.snnmod" grads --device $dev --verbose \
        --weights "$d/w.safetensors" --data "$d/x.npy" --labels "$d/y.npy" \
        --output "$d/grads.safetensors" --update-steps 3 --lr 0.05 2>&1 | tail -1 &&
      PYTHONPATH=python python3 test/Runtime/Inputs/grads_reference.py compare "$d/rec.snnmod" "$d" &&
      PYTHONPATH=python python3 test/Runtime/Inputs/grads_reference.py update "$d/rec.snnmod" "$d" 3 0.05
    then :; else fails=$((fails + 1)); echo "FAILED: $d on $dev"; fi
  done
done
# The generated losses give the same loss bits run to run on the GPU (a
# fixed reduction order, no atomics).
for d in "$g"/opk/loss-*/; do
  d=${d%/}
  for k in 1 2; do
    "$run" "$d/rec.snnmod" grads --device cuda:0 --weights "$d/w.safetensors" \
      --data "$d/x.npy" --labels "$d/y.npy" --output "$d/run$k.safetensors" > /dev/null 2>&1
  done
  if PYTHONPATH=python python3 -c "import sys; from snnref.tensorio import read_safetensors as r; \
a, b = (r(p)[0]['loss'].tobytes() for p in sys.argv[1:]); sys.exit(a != b)" \
      "$d/run1.safetensors" "$d/run2.safetensors"; then
    echo "$(basename "$d"): the same loss bits in two runs"
  else fails=$((fails + 1)); echo "FAILED: $d: the loss differs between two runs"; fi
done
echo "op kernels: $fails failure(s)"
[ $fails = 0 ]
