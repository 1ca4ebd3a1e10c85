#!/usr/bin/env bash
# Channels-last (NHWC) convolutions on the GPU: the model of
# test/Runtime/conv-channels-last.test (stride, padding, asymmetric padding
# with dilation, bias and none, batch 1, LIF layers) against the float64
# reference and against its NCHW twin (the same weights permuted).
#
#   bench/gpu-layout.sh prepare         (here, snn-opt built) compiles both
#       models (target=all) into .gpu/layout/{cl,nchw}, draws the weights,
#       input and labels (NHWC) and writes the twin's (NCHW).
#   bench/gpu-layout.sh check SNN_RUN   (GPU machine, SNN_RUN built with
#       the CUDA backend) one training step and one inference of both models
#       on cuda:0 (cuDNN: NHWC tensors, KRSC filters; the asymmetric layer
#       through im2col + cuBLAS), on cuda:0 with SNNRT_CUDA_CUDNN=0 (every
#       layer through the generated NHWC im2col/col2im + cuBLAS) and on the
#       CPU: gradients within 1e-4 of float64 (grads_reference.py), within
#       1e-4 (GPU) / 1e-5 (CPU) of the twin's, output spikes and spike
#       rates equal.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
g="$root/.gpu/layout"
ri="$root/test/Runtime/Inputs"
export PYTHONPATH="$root/python"

if [ "${1:-}" = prepare ]; then
  set -e
  opt="${SNN_OPT:-$root/build/bin/snn-opt}"
  rm -rf "$g" && mkdir -p "$g/cl" "$g/nchw" "$root/.gpu/include"
  cp -r /usr/include/nlohmann "$root/.gpu/include/"
  "$opt" "$ri/conv-channels-last.mlir" --snn-autodiff \
    --snn-compile="output=$g/cl/m.snnmod target=all" -o /dev/null
  "$opt" "$ri/conv-channels-last-nchw.mlir" --snn-autodiff \
    --snn-compile="output=$g/nchw/m.snnmod target=all" -o /dev/null
  python3 "$ri/grads_reference.py" make "$g/cl/m.snnmod" "$g/cl"
  python3 "$ri/channels_last_twin.py" nchw "$g/cl" "$g/nchw"
  echo "prepared $g"
  exit 0
fi

[ "${1:-}" = check ] || { echo "usage: $0 prepare | check SNN_RUN" >&2; exit 2; }
run=$2
fails=0
step() { # device dir
  "$run" "$2/m.snnmod" grads --device "$1" --weights "$2/w.safetensors" \
    --data "$2/x.npy" --labels "$2/y.npy" --output "$2/grads.safetensors" > /dev/null &&
    "$run" "$2/m.snnmod" infer --device "$1" --weights "$2/w.safetensors" \
      --data "$2/x.npy" --output "$2/out.npy" > "$2/infer.txt"
}
for mode in cuda:0 cuda:0-columns cpu; do
  dev=${mode%-columns}
  cudnn=1
  [ "$mode" = cuda:0-columns ] && cudnn=0
  tol=1e-4
  [ "$dev" = cpu ] && tol=1e-5
  echo "== $mode"
  if SNNRT_CUDA_CUDNN=$cudnn step "$dev" "$g/cl" && SNNRT_CUDA_CUDNN=$cudnn step "$dev" "$g/nchw" &&
    python3 "$ri/grads_reference.py" compare "$g/cl/m.snnmod" "$g/cl" &&
    python3 "$ri/channels_last_twin.py" compare "$g/cl" "$g/nchw" "$tol"
  then :; else fails=$((fails + 1)); echo "FAILED: $mode"; fi
done
echo "channels-last convolutions: $fails failure(s)"
[ $fails = 0 ]
