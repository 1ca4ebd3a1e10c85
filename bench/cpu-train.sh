#!/usr/bin/env bash
# CPU training step (docs/user-guide.md, "CPU threads"): snn-run against
# PyTorch on the CPU, and the SHD-layout network dense vs event-driven.
#   bench/cpu-train.sh prepare
#       here (snn-opt built): compiles into .gpu/cputrain/ the Fashion-MNIST
#       MLP and conv net (Adam) and the SHD-layout network (700 -> 1472 LIF
#       -> 1472 LIF -> 20 LI, T = 100, batch 16, Adam) dense and with every
#       linear layer event-driven (crossover=1), all target=cpu.
#   bench/cpu-train.sh run SNN_RUN [OUT] [DEVICE-NAME] [THREADS...]
#       bench/cpu_train.py on them: the MLP and conv net against PyTorch
#       (eager and torch.compile) and the SHD network at input densities 1,
#       5, 10%, at each thread count (default: 1, 2 and every core).
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
  echo "prepared $(ls -d "$g"/*.snnmod | wc -l) modules in $g"
  ;;
run)
  run=$2; out=${3:-${OUT:-.}}; name=${4:-}; shift $(( $# < 4 ? $# : 4 ))
  threads=${*:-"1 2 $(nproc)"}
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
