#!/usr/bin/env bash
# --snn-fuse on the CPU: one training step and the forward of the
# Fashion-MNIST conv net with average pooling (examples/fmnist-convnet.mlir,
# T = 4, batch 64: conv -> batch norm -> lif -> 2x2 pooling, twice), fused
# (batch norm + lif + pooling, forward and backward, one kernel each) against
# unfused, target=cpu, alternating rounds.
#   bench/cpu-fuse.sh [THREADS] [ROUNDS]   (snn-opt and snn-run built here)
# prints `snn-run bench`'s JSON line per module and round.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
opt="${SNN_OPT:-$root/build/bin/snn-opt}"
run="${SNN_RUN:-$root/build/runtime/snn-run}"
threads=${1:-2}
rounds=${2:-3}
g="$root/.gpu/cpufuse"
rm -rf "$g" && mkdir -p "$g"
sed 's/max_pool2d/avg_pool2d/' "$root/examples/fmnist-convnet.mlir" > "$g/convnet-avg.mlir"
train="--snn-autodiff=optimizer=sgd lr=0.1 momentum=0.9"
"$opt" "$g/convnet-avg.mlir" "$train" \
  --snn-compile="output=$g/plain.snnmod target=cpu" -o /dev/null
"$opt" "$g/convnet-avg.mlir" "$train" --snn-fuse \
  --snn-compile="output=$g/fused.snnmod target=cpu" -o /dev/null 2> "$g/remarks.txt"
grep -h "remark: fused" "$g/remarks.txt" | sed 's/^.*remark: //' | sort | uniq -c
export OPENBLAS_NUM_THREADS=$threads
for i in $(seq "$rounds"); do
  for m in plain fused; do
    line=$("$run" "$g/$m.snnmod" bench --device cpu --threads "$threads" --iterations 10)
    echo "$m: $line"
  done
done
