#!/usr/bin/env bash
# The generated loss kernels, old compiler against new, on the GPU.
#   bench/gpu-loss-ab.sh prepare OLD_SNN_OPT
#       here: for each loss (ce_rate, mse_rate on a lif output; ce_membrane,
#       ce_membrane_max on an li readout) and shape T B C (3 5 7, 3 300 3,
#       4 1 5, 4 300 3, 100 128 20, 2 1000 10: batch 1, more samples than
#       the block's threads, the SHD readout, a batch whose m[s, c] does not
#       fit in shared memory) a training module compiled by OLD_SNN_OPT
#       into .gpu/loss/old/ and by build/bin's snn-opt into .gpu/loss/new/,
#       with random inputs [T, 2B, 6] and labels.
#   bench/gpu-loss-ab.sh run SNN_RUN
#       GPU machine: per module, `grads` (cuda:0, memory plan poisoned) and
#       one training epoch with a test evaluation (the loss kernel's eval
#       form), old and new: the gradients' files equal byte for byte and
#       the epoch's train and test loss and accuracy lines equal. One line
#       per module, then "loss A/B: N failure(s)".
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
g="$root/.gpu/loss"
rates() { # T B C: a lif output for the rate losses
  cat <<MLIR
func.func @forward(%x: tensor<$1x$2x6xf32>) -> tensor<$1x$2x$3xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<$3x6xf32>
  %h = snn.linear %x, %w : tensor<$1x$2x6xf32>, tensor<$3x6xf32> -> tensor<$1x$2x$3xf32>
  %s = snn.lif %h {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<$1x$2x$3xf32>
  return %s : tensor<$1x$2x$3xf32>
}
MLIR
}
membrane() { # T B C: an li readout for the membrane losses
  cat <<MLIR
func.func @forward(%x: tensor<$1x$2x6xf32>) -> tensor<$1x$2x$3xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<$3x6xf32>
  %h = snn.linear %x, %w : tensor<$1x$2x6xf32>, tensor<$3x6xf32> -> tensor<$1x$2x$3xf32>
  %o = snn.li %h {k = 0.4, c = 1.0} : tensor<$1x$2x$3xf32>
  return %o : tensor<$1x$2x$3xf32>
}
MLIR
}
case "${1:-}" in
prepare)
  set -e
  old=$2; new="${SNN_OPT:-$root/build/bin/snn-opt}"
  rm -rf "$g" && mkdir -p "$g/old" "$g/new"
  for shape in "3 5 7" "3 300 3" "4 1 5" "4 300 3" "100 128 20" "2 1000 10"; do
    set -- $shape; tag="t$1b$2c$3"
    rates $1 $2 $3 >"$g/rates-$tag.mlir"; membrane $1 $2 $3 >"$g/mem-$tag.mlir"
    python3 -c "
import numpy as np; r = np.random.default_rng()
np.save('$g/x-$tag.npy', (2 * r.standard_normal(($1, 2 * $2, 6))).astype(np.float32))
np.save('$g/y-$tag.npy', r.integers(0, $3, 2 * $2).astype(np.int32))"
    for side in old new; do
      opt=$old; [ $side = new ] && opt=$new
      for loss in ce_rate mse_rate; do
        "$opt" "$g/rates-$tag.mlir" --snn-autodiff="loss=$loss" \
          --snn-compile="output=$g/$side/$loss-$tag.snnmod target=cuda" -o /dev/null
      done
      for loss in ce_membrane ce_membrane_max; do
        "$opt" "$g/mem-$tag.mlir" --snn-autodiff="loss=$loss" \
          --snn-compile="output=$g/$side/$loss-$tag.snnmod target=cuda" -o /dev/null
      done
    done
  done
  ;;
run)
  run=$2; fails=0; tmp="$(mktemp -d)"
  for m in "$g"/old/*.snnmod; do
    n=$(basename "$m" .snnmod); tag=${n##*-}
    for side in old new; do
      SNNRT_MEMORY_PLAN=poison "$run" "$g/$side/$n.snnmod" grads --device cuda:0 --data "$g/x-$tag.npy" \
        --labels "$g/y-$tag.npy" --output "$tmp/$side-$n.safetensors" >"$tmp/$side-$n.log" 2>&1 ||
        echo "$side $n: grads failed"
      "$run" "$g/$side/$n.snnmod" train --device cuda:0 --data "$g/x-$tag.npy" --labels "$g/y-$tag.npy" \
        --test-data "$g/x-$tag.npy" --test-labels "$g/y-$tag.npy" --epochs 1 2>&1 |
        grep -oE "train loss [^|]*[|] test loss [a-z0-9. -]*acc [0-9.]*" >"$tmp/$side-$n.train"
    done
    if cmp -s "$tmp/old-$n.safetensors" "$tmp/new-$n.safetensors" &&
      cmp -s "$tmp/old-$n.train" "$tmp/new-$n.train" && [ -s "$tmp/new-$n.train" ]; then
      echo "$n: grads and training/eval output identical ($(tail -1 "$tmp/new-$n.train"))"
    else
      fails=$((fails + 1)); echo "$n: DIFFER"; cat "$tmp/old-$n.train" "$tmp/new-$n.train"
    fi
  done
  rm -rf "$tmp"
  echo "loss A/B: $fails failure(s)"
  [ $fails = 0 ]
  ;;
*)
  echo "usage: bench/gpu-loss-ab.sh prepare OLD_SNN_OPT | run SNN_RUN" >&2
  exit 2
  ;;
esac
