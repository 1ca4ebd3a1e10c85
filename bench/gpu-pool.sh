#!/usr/bin/env bash
# Generated pooling kernels against the runtime's former hand-written CUDA
# pooling kernels, on the spiking VGG-11 (T=4, B=64, TF32).
#
#   bench/gpu-pool.sh prepare   (here, snn-opt built) compiles VGG-11 into
#       .gpu/pool/vgg11.snnmod (pooling as generated `kernel` ops), writes
#       .gpu/pool/vgg11-runtime-pool.snnmod, the same module whose pooling
#       `kernel` ops are turned back into the plain pooling ops they compute,
#       exports the runtime of the commit before the pooling codegen
#       (git merge-base with main) into .gpu/pool/base/, which still runs
#       them, and compiles the pooling test model for the correctness check.
#   bench/gpu-pool.sh run       (GPU machine) builds both runtimes, checks the
#       generated pooling kernels (forward and backward, every window shape)
#       against the float64 reference on cuda:0, then alternates the two
#       VGG-11 modules: `snn-run bench` (CUDA graphs) three times each, and
#       one per-op profile each (`--profile`). Results in $OUT/pool-bench.txt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
g="$root/.gpu/pool"
mode=${1:-run}

if [ "$mode" = prepare ]; then
  opt="${SNN_OPT:-$root/build/bin/snn-opt}"
  rm -rf "$g" && mkdir -p "$g/base" "$g/check" "$root/.gpu/include"
  cp -r /usr/include/nlohmann "$root/.gpu/include/"
  "$opt" "$root/examples/vgg11.mlir" \
    --snn-autodiff="optimizer=sgd lr=0.1 momentum=0.9 loss=ce_rate" \
    --snn-compile="output=$g/vgg11.snnmod target=all" -o /dev/null
  cp -r "$g/vgg11.snnmod" "$g/vgg11-runtime-pool.snnmod"
  python3 - "$g/vgg11-runtime-pool.snnmod/manifest.json" <<'EOF'
import json, sys
path = sys.argv[1]
m = json.load(open(path))
def plain(program):
    out = []
    for op in program:
        of = op.get("of", [])
        if op["op"] == "kernel" and len(of) == 1 and "_pool2d" in of[0]["op"]:
            out.append(of[0])
        else:
            out.append(op)
    return out
count = 0
for name, program in m["programs"].items():
    new = plain(program)
    count += sum(a is not b for a, b in zip(program, new))
    m["programs"][name] = new
json.dump(m, open(path, "w"))
print(f"vgg11-runtime-pool: {count} pooling kernel ops back to plain ops")
EOF
  base=$(git -C "$root" merge-base HEAD main)
  git -C "$root" archive "$base" runtime | tar -x -C "$g/base"
  echo "base runtime: $base"
  "$opt" "$root/test/Runtime/Inputs/pools.mlir" --snn-autodiff="optimizer=sgd momentum=0.9" \
    --snn-compile="output=$g/check/rec.snnmod target=all" -o /dev/null
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/grads_reference.py" make \
    "$g/check/rec.snnmod" "$g/check"
  exit 0
fi

set +e  # a failed check must not cost the measurements after it
out="${OUT:-/tmp/gpu-out}"; mkdir -p "$out"
log="$out/pool-bench.txt"
. "$root/bench/gpu-ab.sh"
gpu_build_runtime "$root/runtime" /tmp/snnrt-pool-new
gpu_build_runtime "$g/base/runtime" /tmp/snnrt-pool-base
new=/tmp/snnrt-pool-new/snn-run
base=/tmp/snnrt-pool-base/snn-run
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "== generated pooling kernels vs float64 (one training step, cuda:0, arena poisoned)"
  SNNRT_MEMORY_PLAN=poison $new "$g/check/rec.snnmod" grads --device cuda:0 \
    --weights "$g/check/w.safetensors" --data "$g/check/x.npy" --labels "$g/check/y.npy" \
    --output "$g/check/grads.safetensors" 2>&1 | tail -1
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/grads_reference.py" compare \
    "$g/check/rec.snnmod" "$g/check" 2>&1 | tail -3
  echo "== VGG-11 training step (TF32, CUDA graphs): runtime pooling vs generated pooling"
  gpu_ab_bench "runtime-pool:" "$base $g/vgg11-runtime-pool.snnmod" \
    "generated:   " "$new $g/vgg11.snnmod" "runtime pooling" "generated pooling"
} 2>&1 | tee "$log"
