#!/usr/bin/env bash
# Event-driven convolutions on the CPU (--snn-sparsify="target=cpu"):
#   bench/cpu-event-conv.sh OUT.txt
# For a few spike-input convolution layers (3x3, padding 1, T=4, batch 16;
# NCHW and NHWC; stride 1 and 2), `snn-run calibrate` times the forward of
# the dense path (im2col and BLAS) and of the event-driven kernel at a sweep
# of input densities, in one process, best of 3 rounds, and prints the
# table and the crossover; then the training step of a small conv net on
# spike input (conv 2->32, LIF, conv 32->64 stride 2, LIF, linear, LIF),
# dense against event-driven (both convolutions), at input densities
# 1, 5, 10 and 20%. Everything goes to OUT.txt (bench/results/).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: bench/cpu-event-conv.sh OUT.txt}"
opt="${SNN_OPT:-$root/build/bin/snn-opt}"
run="${SNN_RUN:-$root/build/runtime/snn-run}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
{
  echo "# $(date -u +%F) $(uname -m) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) nproc=$(nproc)"
  # layer C H W O stride layout
  for spec in "64 16 16 64 1 nchw" "64 16 16 64 1 nhwc" "128 8 8 128 1 nchw" \
              "32 32 32 32 1 nchw" "64 16 16 128 2 nchw"; do
    read -r c h w o s layout <<<"$spec"
    oh=$(( (h - 1) / s + 1 )) ow=$(( (w - 1) / s + 1 ))
    if [ "$layout" = nhwc ]; then
      xs="${h}x${w}x${c}" ws="${o}x3x3x${c}" ys="${oh}x${ow}x${o}" last=", channels_last"
    else
      xs="${c}x${h}x${w}" ws="${o}x${c}x3x3" ys="${o}x${oh}x${ow}" last=""
    fi
    cat >"$work/layer.mlir" <<MLIR
func.func @forward(%x: tensor<4x16x${xs}xf32>) -> tensor<4x16x${ys}xf32> {
  %w = snn.param "conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<${ws}xf32>
  %h = snn.conv2d %x, %w {padding = array<i64: 1, 1>, stride = array<i64: $s, $s>${last}, snn.name = "conv"} : tensor<4x16x${xs}xf32>, tensor<${ws}xf32> -> tensor<4x16x${ys}xf32>
  %s = snn.lif %h {k = 0.5, c = 1.0} : tensor<4x16x${ys}xf32>
  return %s : tensor<4x16x${ys}xf32>
}
MLIR
    echo "== layer C=$c H=$h W=$w O=$o stride=$s $layout (T=4, B=16)"
    "$opt" "$work/layer.mlir" --snn-sparsify="input-is-spikes" \
      --snn-compile="output=$work/layer.snnmod target=cpu" -o /dev/null
    "$run" "$work/layer.snnmod" calibrate --device cpu --iterations 5 \
      --densities 0.005,0.01,0.02,0.05,0.1,0.2,0.3,0.5 2>&1
    rm -rf "$work/layer.snnmod"
  done
  cat >"$work/net.mlir" <<'MLIR'
func.func @forward(%x: tensor<8x16x2x32x32xf32>) -> tensor<8x16x10xf32> {
  %w1 = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<32x2x3x3xf32>
  %h1 = snn.conv2d %x, %w1 {padding = array<i64: 1, 1>, snn.name = "conv1"} : tensor<8x16x2x32x32xf32>, tensor<32x2x3x3xf32> -> tensor<8x16x32x32x32xf32>
  %s1 = snn.lif %h1 {k = 0.5, c = 1.0, v_th = 0.5} : tensor<8x16x32x32x32xf32>
  %w2 = snn.param "conv2.weight" {init = #snn.init<kaiming_uniform>} : tensor<64x32x3x3xf32>
  %h2 = snn.conv2d %s1, %w2 {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>, snn.name = "conv2"} : tensor<8x16x32x32x32xf32>, tensor<64x32x3x3xf32> -> tensor<8x16x64x16x16xf32>
  %s2 = snn.lif %h2 {k = 0.5, c = 1.0, v_th = 0.5} : tensor<8x16x64x16x16xf32>
  %f = snn.flatten %s2 : tensor<8x16x64x16x16xf32> -> tensor<8x16x16384xf32>
  %w3 = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x16384xf32>
  %h3 = snn.linear %f, %w3 : tensor<8x16x16384xf32>, tensor<10x16384xf32> -> tensor<8x16x10xf32>
  %y = snn.lif %h3 {k = 0.5, c = 1.0} : tensor<8x16x10xf32>
  return %y : tensor<8x16x10xf32>
}
MLIR
  ad="--snn-autodiff=optimizer=adam lr=0.001"
  "$opt" "$work/net.mlir" "$ad" --snn-compile="output=$work/dense.snnmod target=cpu" -o /dev/null
  "$opt" "$work/net.mlir" "$ad" --snn-sparsify="input-is-spikes min-features=1000000" \
    --snn-compile="output=$work/event.snnmod target=cpu" -o /dev/null
  echo "== conv net step (input 2x32x32 spikes, T=8, B=16, Adam): dense and event alternating, 3 rounds"
  for round in 1 2 3; do
    for d in 0.01 0.05 0.1 0.2; do
      for m in dense event; do
        echo "round $round density $d $m $("$run" "$work/$m.snnmod" bench --device cpu --density "$d" --iterations 3 2>/dev/null | tail -1)"
      done
    done
  done
} | tee "$out"
