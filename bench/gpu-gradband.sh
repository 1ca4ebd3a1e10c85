#!/usr/bin/env bash
# The sparse backward (--snn-autodiff grad-threshold=B) and bit-packed saved
# spikes (--snn-compile spike-bits=true) on the GPU.
#   bench/gpu-gradband.sh prepare   here (snn-opt built): compiles the modules
#                                   and draws the data into .gpu/gradband
#   bench/gpu-gradband.sh run SNN_RUN OUT_DIR
#                                   on the GPU machine (bench/gpu-train.sh
#                                   gradband calls it): one training step of
#                                   the banded MLP and conv net on cuda:0
#                                   against the float64 reference (<= 1e-6),
#                                   B=inf identical to no band; bits vs float
#                                   spikes identical over 3 steps; then the
#                                   memory plan and step time of VGG-11 and
#                                   the SHD-sized MLP with and without bits
#                                   (DEVICE=cpu runs the same checks here).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
g="$root/.gpu/gradband"
gc="$root/test/Dialect/SNN/Transforms/Inputs/gradcheck"
rt="$root/test/Runtime/Inputs"
export PYTHONPATH="$root/python"

prepare() {
  set -e
  local opt="${SNN_OPT:-$root/build/bin/snn-opt}"
  rm -rf "$g" && mkdir -p "$g"
  for net in mlp conv; do
    mkdir -p "$g/$net"
    for v in band:0.3 inf:inf dense:; do
      local name=${v%%:*} b=${v#*:}
      "$opt" "$gc/$net.mlir" --snn-autodiff="${b:+grad-threshold=$b}" \
        --snn-compile="output=$g/$net/$name.snnmod target=all" -o /dev/null
    done
    python3 "$rt/grads_reference.py" make "$g/$net/band.snnmod" "$g/$net"
  done
  mkdir -p "$g/bits"
  for v in bits:true f32:false; do
    "$opt" "$rt/spike-bits-net.mlir" --snn-autodiff="optimizer=adam lr=0.01" \
      --snn-compile="output=$g/bits/${v%%:*}.snnmod target=all spike-bits=${v#*:}" -o /dev/null
  done
  python3 "$rt/grads_reference.py" make "$g/bits/bits.snnmod" "$g/bits"
  mkdir -p "$g/mem"
  for v in bits:true f32:false; do
    "$opt" "$root/examples/vgg11.mlir" --snn-autodiff="optimizer=sgd lr=0.1 momentum=0.9 loss=ce_rate" \
      --snn-compile="output=$g/mem/vgg11-${v%%:*}.snnmod target=cuda spike-bits=${v#*:}" -o /dev/null
    "$opt" "$root/bench/inputs/shd-mlp.mlir" --snn-autodiff="optimizer=adam lr=0.001 grad-threshold=0.5" \
      --snn-compile="output=$g/mem/shd-${v%%:*}.snnmod target=cuda spike-bits=${v#*:}" -o /dev/null
  done
}

run() {
  local snnrun="$1" out="$2"
  mkdir -p "$out"
  for net in mlp conv; do
    local d="$g/$net" ok=1
    for name in dense inf band; do
      local dst="$d/$name.safetensors"
      [ $name = band ] && dst="$d/grads.safetensors"
      SNNRT_MEMORY_PLAN=poison "$snnrun" "$d/$name.snnmod" grads --device ${DEVICE:-cuda:0} \
        --weights "$d/w.safetensors" --data "$d/x.npy" --labels "$d/y.npy" --output "$dst" || ok=0
    done
    echo "gradband $net (${DEVICE:-cuda:0}):"
    local tol=1e-6; [ $net = conv ] && tol=1e-5  # batch norm's float32 sums
    [ $ok = 1 ] && python3 "$rt/grad_band_check.py" "$d/band.snnmod" "$d" \
      "$d/dense.safetensors" "$d/inf.safetensors" $tol
  done
  local d="$g/bits"
  for name in f32 bits; do
    SNNRT_MEMORY_PLAN=poison "$snnrun" "$d/$name.snnmod" grads --device ${DEVICE:-cuda:0} \
      --weights "$d/w.safetensors" --data "$d/x.npy" --labels "$d/y.npy" \
      --output "$d/$name-steps.safetensors" --update-steps 3 --lr 0.01
  done
  cmp "$d/f32-steps.safetensors" "$d/bits-steps.safetensors" && echo "BITS IDENTICAL to float spikes (3 steps, ${DEVICE:-cuda:0})"
  SNNRT_MEMORY_PLAN=poison "$snnrun" "$d/bits.snnmod" grads --device ${DEVICE:-cuda:0} --weights "$d/w.safetensors" \
    --data "$d/x.npy" --labels "$d/y.npy" --output "$d/grads.safetensors" && \
    python3 "$rt/grads_reference.py" compare "$d/bits.snnmod" "$d"
  for m in vgg11-f32 vgg11-bits shd-f32 shd-bits; do
    echo "$m plan $("$snnrun" "$g/mem/$m.snnmod" bench --device ${DEVICE:-cuda:0} --plan-only)"
    # Timed steps on the GPU only (minutes on a CPU).
    [ "${DEVICE:-cuda:0}" = cpu ] || echo "$m $(SNNRT_CUDA_TF32=1 "$snnrun" "$g/mem/$m.snnmod" \
      bench --device ${DEVICE:-cuda:0} --iterations 20)"
  done | tee "$out/gradband-bench.jsonl"
}

case "${1:-}" in
prepare) prepare ;;
run) shift; run "$@" ;;
*) echo "usage: $0 prepare | run SNN_RUN OUT_DIR" >&2; exit 2 ;;
esac
