#!/usr/bin/env bash
# A spiking layer fused with its average/sum pooling (--snn-fuse) against the
# unfused layer and pooling, in inference on the spiking VGG-11 (T=4, B=64).
#
#   bench/gpu-fuse.sh prepare   (here, snn-opt built) compiles the VGG-11
#       inference module with and without --snn-fuse into .gpu/fuse/
#       (target=all), the small VGG-like test model fused, the layer variants
#       of test/Runtime/Inputs/fuse-pool with and without --snn-fuse, and
#       random weights and inputs (test/Runtime/Inputs/infer_reference.py).
#   bench/gpu-fuse.sh run       (GPU machine) builds the runtime, checks on
#       cuda:0 that the fused VGG-11 and the fused layer variants of
#       test/Runtime/Inputs/fuse-pool give outputs identical to the unfused
#       ones and that the fused small model matches the float64 reference,
#       then alternates `snn-run bench` forward times of the two VGG-11
#       modules (3 rounds, SNNRT_CUDA_TF32=1) and one per-op profile each.
#       Results in $OUT/fuse-bench.txt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
g="$root/.gpu/fuse"
ref="$root/test/Runtime/Inputs/infer_reference.py"
mode=${1:-run}

if [ "$mode" = prepare ]; then
  opt="${SNN_OPT:-$root/build/bin/snn-opt}"
  rm -rf "$g" && mkdir -p "$g/vgg11" "$g/small" "$root/.gpu/include"
  cp -r /usr/include/nlohmann "$root/.gpu/include/"
  "$opt" "$root/examples/vgg11.mlir" \
    --snn-compile="output=$g/vgg11-unfused.snnmod target=all" -o /dev/null
  "$opt" "$root/examples/vgg11.mlir" --snn-fuse \
    --snn-compile="output=$g/vgg11-fused.snnmod target=all" -o /dev/null 2>"$g/remarks.txt"
  grep -c "remark: fused" "$g/remarks.txt" | sed 's/$/ layers fused/'
  python3 "$ref" make-inputs "$g/vgg11-fused.snnmod" "$g/vgg11"
  "$opt" "$root/test/Runtime/Inputs/vgg-small.mlir" --snn-fuse \
    --snn-compile="output=$g/small.snnmod target=all" -o /dev/null 2>/dev/null
  python3 "$ref" make-inputs "$g/small.snnmod" "$g/small"
  mkdir -p "$g/variants"
  python3 -c "import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng().uniform(0.0, 1.2, (8, 3, 4, 6)).astype(np.float32))" "$g/variants/x.npy"
  for m in lif-per-neuron-2x3 cuba-soft-sum-2x2 if-4x2; do
    "$opt" "$root/test/Runtime/Inputs/fuse-pool/$m.mlir" --snn-fuse \
      --snn-compile="output=$g/variants/$m-fused.snnmod target=all" -o /dev/null 2>/dev/null
    "$opt" "$root/test/Runtime/Inputs/fuse-pool/$m.mlir" \
      --snn-compile="output=$g/variants/$m.snnmod target=all" -o /dev/null
  done
  exit 0
fi

set +e  # a failed check must not cost the measurements after it
out="${OUT:-/tmp/gpu-out}"; mkdir -p "$out"
log="$out/fuse-bench.txt"
b=/tmp/snnrt-fuse
. "$root/bench/gpu-ab.sh"
gpu_build_runtime "$root/runtime" "$b"
run="$b/snn-run"
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  cat "$g/remarks.txt" | grep "remark:" | sed 's/^.*remark: //'
  echo "== fused vs unfused VGG-11 infer outputs on cuda:0 (must be identical)"
  for m in unfused fused; do
    $run "$g/vgg11-$m.snnmod" infer --device cuda:0 --data "$g/vgg11/x.npy" \
      --weights "$g/vgg11/w.safetensors" --output "$g/vgg11/$m.npy" 2>&1 | head -1
  done
  python3 -c "import numpy as np, sys; a, b = np.load(sys.argv[1]), np.load(sys.argv[2]); d = int((a != b).sum()); print(f'output {a.shape}: {int(a.sum())} spikes, {d} differences'); print('IDENTICAL' if d == 0 and a.sum() > 0 else 'FAIL')" \
    "$g/vgg11/unfused.npy" "$g/vgg11/fused.npy"
  echo "== fused small VGG-like model on cuda:0 vs the float64 reference"
  $run "$g/small.snnmod" infer --device cuda:0 --data "$g/small/x.npy" \
    --weights "$g/small/w.safetensors" --output "$g/small/y.npy" 2>&1 | head -1
  python3 "$ref" compare "$g/small.snnmod" "$g/small" 2>&1 | tail -2
  echo "== fused vs unfused layer kinds and windows on cuda:0 (must be identical)"
  for m in lif-per-neuron-2x3 cuba-soft-sum-2x2 if-4x2; do
    for v in "$m" "$m-fused"; do
      $run "$g/variants/$v.snnmod" infer --device cuda:0 --data "$g/variants/x.npy" \
        --output "$g/variants/$v.npy" > /dev/null 2>&1 || echo "$v: snn-run failed"
    done
    python3 -c "import numpy as np, sys; a, b = np.load(sys.argv[1]), np.load(sys.argv[2]); d = int((a != b).sum()); print(sys.argv[3], f'{float(a.sum())} spikes, {d} differences', 'IDENTICAL' if d == 0 and a.sum() > 0 else 'FAIL')" \
      "$g/variants/$m.npy" "$g/variants/$m-fused.npy" "$m"
  done
  echo "== VGG-11 inference forward (TF32, snn-run bench): unfused vs fused"
  gpu_ab_bench "unfused:" "$run $g/vgg11-unfused.snnmod" \
    "fused:  " "$run $g/vgg11-fused.snnmod" "unfused" "fused"
} 2>&1 | tee "$log"
