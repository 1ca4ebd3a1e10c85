#!/usr/bin/env bash
# Channels-last (NHWC) convolutions on the GPU.
#
#   bench/gpu-layout.sh prepare         (here, snn-opt built) compiles into
#       .gpu/layout/: the model of test/Runtime/conv-channels-last.test
#       (stride, padding, asymmetric padding with dilation, bias and none,
#       batch 1, LIF layers) and its NCHW twin, with NHWC weights, input and
#       labels drawn and the twin's (NCHW) written; and a conv stack at
#       T=4 B=64 on 32x32x3 images (7 convolutions, 3 of them stride 2, LIF
#       between: no pooling or batch norm, which --snn-channels-last
#       rewrites) in both layouts, for timing.
#   bench/gpu-layout.sh check SNN_RUN   (GPU machine, SNN_RUN built with the
#       CUDA backend) one training step and one inference of both models on
#       cuda:0 (cuDNN: NHWC tensors, KRSC filters; the asymmetric layer
#       through im2col + cuBLAS), on cuda:0 with SNNRT_CUDA_CUDNN=0 (every
#       layer through the generated NHWC im2col/col2im + cuBLAS) and on the
#       CPU: gradients within 1e-4 of float64 (grads_reference.py), within
#       1e-4 (GPU) / 1e-5 (CPU) of the twin's, output spikes and spike
#       rates equal.
#   bench/gpu-layout.sh run             (GPU machine) builds snn-run with
#       CUDA, runs `check`, then times the conv stack's training step in
#       NCHW and NHWC (TF32, CUDA graphs, three rounds, then a per-op
#       profile of each). Output in $OUT/layout.txt.
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
  # The conv stack: (out channels, stride) per 3x3 layer, then a 4x4
  # convolution to 10 classes over the last 4x4 plane.
  python3 - "$g" <<'PY'
import sys
layers = [(64, 1), (128, 2), (256, 1), (256, 2), (512, 1), (512, 2)]
for last in (False, True):
    def act(c, h):
        return f"tensor<4x64x{h}x{h}x{c}xf32>" if last else f"tensor<4x64x{c}x{h}x{h}xf32>"
    def weight(o, c, k):
        return f"tensor<{o}x{k}x{k}x{c}xf32>" if last else f"tensor<{o}x{c}x{k}x{k}xf32>"
    attr = ", channels_last" if last else ""
    c, h, v = 3, 32, "%x"
    body = []
    for i, (o, s) in enumerate(layers + [(10, 0)]):
        k, oh = (4, 1) if s == 0 else (3, h // s)
        pad = "" if s == 0 else f"stride = array<i64: {s}, {s}>, padding = array<i64: 1, 1>"
        body.append(f'  %w{i} = snn.param "conv{i}.weight" {{init = #snn.init<kaiming_uniform>}} : {weight(o, c, k)}')
        body.append(f"  %c{i} = snn.conv2d {v}, %w{i} {{{pad}{attr}}} : {act(c, h)}, {weight(o, c, k)} -> {act(o, oh)}".replace("{, ", "{"))
        if s:
            body.append(f"  %s{i} = snn.lif %c{i} : {act(o, oh)}")
            v = f"%s{i}"
        c, h = o, oh
    name = "nhwc" if last else "nchw"
    with open(f"{sys.argv[1]}/stack-{name}.mlir", "w") as f:
        f.write(f"func.func @forward(%x: {act(3, 32)}) -> tensor<4x64x10xf32> {{\n")
        f.write("\n".join(body) + "\n")
        f.write(f"  %f = snn.flatten %c{len(layers)} : {act(10, 1)} -> tensor<4x64x10xf32>\n")
        f.write("  %o = snn.lif %f : tensor<4x64x10xf32>\n  return %o : tensor<4x64x10xf32>\n}\n")
PY
  for l in nchw nhwc; do
    "$opt" "$g/stack-$l.mlir" --snn-autodiff="optimizer=sgd lr=0.1 momentum=0.9 loss=ce_rate" \
      --snn-compile="output=$g/stack-$l.snnmod target=all" -o /dev/null
  done
  echo "prepared $g"
  exit 0
fi

# check SNN_RUN: the numerics on cuda:0 (cuDNN and columns) and the CPU.
check() {
  local run=$1 fails=0 mode dev cudnn tol
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
}

case "${1:-}" in
check)
  check "$2" ;;
run)
  out="${OUT:-/tmp/gpu-out}"; mkdir -p "$out"
  . "$root/bench/gpu-ab.sh"
  gpu_build_runtime "$root/runtime" /tmp/snnrt-layout
  run=/tmp/snnrt-layout/snn-run
  {
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    check "$run"
    echo "== conv stack training step (T=4 B=64, TF32, CUDA graphs): NCHW vs NHWC"
    gpu_ab_bench "NCHW:" "$run $g/stack-nchw.snnmod" "NHWC:" "$run $g/stack-nhwc.snnmod" \
      "NCHW" "NHWC"
  } 2>&1 | tee "$out/layout.txt" ;;
*)
  echo "usage: $0 prepare | check SNN_RUN | run" >&2; exit 2 ;;
esac
