#!/usr/bin/env bash
# CPU training step (docs/user-guide.md, "CPU threads"): snn-run against
# PyTorch on the CPU, and the SHD-layout network dense vs event-driven.
#   bench/cpu-train.sh prepare
#       here (snn-opt built): compiles into .gpu/cputrain/ the Fashion-MNIST
#       MLP and conv net (Adam) and the SHD-layout network (700 -> 1472 LIF
#       -> 1472 LIF -> 20 LI, T = 100, batch 16, Adam) dense and with every
#       linear layer event-driven (crossover=1), all target=cpu; and the
#       modules and fresh random data of test/Runtime/cpu-threads.test
#       (and random weights and data for the two Fashion-MNIST modules).
#   bench/cpu-train.sh run SNN_RUN [OUT] [DEVICE-NAME] [THREADS...]
#       first the bit-identity check of test/Runtime/cpu-threads.test at
#       the largest thread count on its modules and the Fashion-MNIST ones
#       (outputs, gradients and updated parameters equal to one thread's;
#       OPENBLAS_NUM_THREADS=1 there), then bench/cpu_train.py: the MLP and conv net
#       against PyTorch (eager and torch.compile) and the SHD network at input
#       densities 1, 5, 10%, at each thread count (default: 1, 2 and every
#       core).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
g="$root/.gpu/cputrain"
case "${1:-}" in
prepare)
  opt="${SNN_OPT:-$root/build/bin/snn-opt}"
  rm -rf "$g" && mkdir -p "$g"
  ad="--snn-autodiff=optimizer=adam lr=0.001"
  for m in fmnist-mlp fmnist-convnet; do
    "$opt" "$root/examples/$m.mlir" "$ad" --snn-compile="output=$g/$m.snnmod target=cpu" -o /dev/null
  done
  # The network of bench/gpu-sparse.sh at batch 16.
  { sed -n '/^shd_model()/,/^MLIR$/p' "$root/bench/gpu-sparse.sh"; echo "}"; } >"$g/shd.sh"
  # shellcheck disable=SC1091
  . "$g/shd.sh"
  shd_model 16 >"$g/shd16.mlir"
  "$opt" "$g/shd16.mlir" "$ad" --snn-compile="output=$g/shd16-dense.snnmod target=cpu" -o /dev/null
  "$opt" "$g/shd16.mlir" --snn-sparsify="input-is-spikes crossover=1" "$ad" \
    --snn-compile="output=$g/shd16-event.snnmod target=cpu" -o /dev/null
  rm -f "$g/shd.sh" "$g/shd16.mlir"
  # The bit-identity check of test/Runtime/cpu-threads.test.
  inputs="$root/test/Runtime/Inputs" gradcheck="$root/test/Dialect/SNN/Transforms/Inputs/gradcheck"
  export PYTHONPATH="$root/python"
  mkdir -p "$g/check/mlp" "$g/check/conv" "$g/check/sparse"
  "$opt" "$gradcheck/mlp.mlir" --snn-autodiff=optimizer=adam \
    --snn-compile="output=$g/check/mlp.snnmod target=cpu" -o /dev/null
  "$opt" "$gradcheck/conv.mlir" --snn-autodiff=optimizer=adam \
    --snn-compile="output=$g/check/conv.snnmod target=cpu" -o /dev/null
  python3 "$inputs/grads_reference.py" make "$g/check/mlp.snnmod" "$g/check/mlp"
  python3 "$inputs/grads_reference.py" make "$g/check/conv.snnmod" "$g/check/conv"
  # At the benchmark's sizes too (kernels large enough to split by their grain).
  for m in fmnist-mlp fmnist-convnet; do
    mkdir -p "$g/check/$m"
    python3 "$inputs/grads_reference.py" make "$g/$m.snnmod" "$g/check/$m"
  done
  python3 -c "import sys; sys.path.insert(0, sys.argv[1]); import sparse_check as s; \
s.prepare(sys.argv[2], sys.argv[3], 4, 3, 67, 29, [0.05], 'cpu')" "$inputs" "$opt" "$g/check/sparse"
  echo "prepared $(ls -d "$g"/*.snnmod | wc -l) modules in $g"
  ;;
run)
  run=$2; out=${3:-${OUT:-.}}; name=${4:-}; shift $(( $# < 4 ? $# : 4 ))
  threads=${*:-"1 2 $(nproc)"}
  most=$(echo $threads | tr ' ' '\n' | sort -n | tail -1)
  export PYTHONPATH="$root/python"
  mkdir -p "$out"
  # MODULE:DATA under .gpu/cputrain.
  for m in check/mlp:check/mlp check/conv:check/conv check/sparse/event:check/sparse/d0.05 \
      fmnist-mlp:check/fmnist-mlp fmnist-convnet:check/fmnist-convnet; do
    echo "== threads check ${m%%:*} at $most threads"
    python3 "$root/test/Runtime/Inputs/threads_check.py" "$run" "$g/${m%%:*}.snnmod" \
      "$g/${m#*:}" "$most" || echo "threads check ${m%%:*} FAILED"
  done 2>&1 | tee "$out/cpu-threads-check.txt"
  # shellcheck disable=SC2086
  python3 "$root/bench/cpu_train.py" --snn-run "$run" --mlp "$g/fmnist-mlp.snnmod" \
    --convnet "$g/fmnist-convnet.snnmod" --shd-dense "$g/shd16-dense.snnmod" \
    --shd-event "$g/shd16-event.snnmod" --threads $(echo $threads | tr ' ' '\n' | sort -nu) \
    --out "$out" ${name:+--device-name "$name"}
  ;;
*)
  echo "usage: bench/cpu-train.sh prepare | run SNN_RUN [OUT] [DEVICE-NAME] [THREADS...]" >&2
  exit 2
  ;;
esac
