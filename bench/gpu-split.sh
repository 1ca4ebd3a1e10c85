#!/usr/bin/env bash
# The time-split benchmark (--snn-split-time; docs/user-guide.md "Many GPUs").
#   bench/gpu-split.sh prepare   here (snn-opt built): writes the MLP and conv
#                                models of bench/split_models.py at T = 1024
#                                and 4096 into .gpu/split/, compiled for one
#                                device (P = 1, target all), and checks that
#                                --snn-split-time accepts them for P = 2, 4
#                                (with .gpu/include: the runtime's JSON headers)
#   bench/gpu-split.sh           on the GPU machine: builds the runtime, times
#                                the P = 1 training step of each module
#                                (snn-run bench) into $OUT/split-baseline.jsonl
#                                and prints the cost model calibrated by it
# P = 2, 4 (streams of one GPU, then NCCL) need per-rank programs in the
# compiled module, which --snn-compile does not write yet.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
g="$root/.gpu/split"
models() { for m in mlp conv; do for T in 1024 4096; do echo "$m-T$T"; done; done; }

if [ "${1:-}" = prepare ]; then
  set -e
  opt="${SNN_OPT:-$root/build/bin/snn-opt}"
  rm -rf "$g" && mkdir -p "$g" "$root/.gpu/include"
  # The runtime's JSON headers, which the GPU machine lacks.
  cp -r /usr/include/nlohmann "$root/.gpu/include/"
  for name in $(models); do
    m=${name%-T*} T=${name#*-T}
    python3 "$root/bench/split_models.py" "$m" --steps "$T" > "$g/$name.mlir"
    "$opt" "$g/$name.mlir" --snn-autodiff="optimizer=sgd lr=0.1 momentum=0.9" \
      --snn-compile="output=$g/$name.snnmod target=all" -o /dev/null
    for P in 2 4; do
      "$opt" "$g/$name.mlir" --snn-autodiff --snn-split-time="parts=$P" -o /dev/null
    done
    echo "prepared $name"
  done
  exit 0
fi

out="${OUT:-/tmp/gpu-out}"; mkdir -p "$out"
[ -d "$g" ] || { echo "gpu-split.sh: $g is missing; run 'bench/gpu-split.sh prepare' on the build machine first" >&2; exit 1; }
b=/tmp/snnrt-build
if [ ! -x $b/snn-run ]; then
  cmake -S runtime -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DSNN_ENABLE_CUDA=ON \
    -DSNNRT_JSON_INCLUDE="$root/.gpu/include" > "$out/split-build.log" 2>&1 && \
    ninja -C $b >> "$out/split-build.log" 2>&1 || { echo "runtime build failed: $out/split-build.log" >&2; exit 1; }
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
: > "$out/split-baseline.jsonl"
for name in $(models); do
  m=${name%-T*} T=${name#*-T}
  line=$($b/snn-run "$g/$name.snnmod" bench --device cuda:0 --iterations 10) || {
    echo "$name: snn-run bench failed" >&2; continue; }
  python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.update(model=sys.argv[2], T=int(sys.argv[3]), P=1, gpu=sys.argv[4]); print(json.dumps(r))' \
    "$line" "$m" "$T" "$gpu" | tee -a "$out/split-baseline.jsonl"
done
python3 - "$out/split-baseline.jsonl" <<'PY' | tee "$out/split-model.md"
import json, subprocess, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["model"] != "mlp":
        continue  # the cost model's layer sizes describe the MLP
    print(f"\n{r['model']} T={r['T']} on {r['gpu']}: measured P=1 step {r['step_ms']} ms")
    subprocess.run([sys.executable, "bench/split_cost_model.py", "--steps", str(r["T"]),
                    "--width", "1024", "--batch", "16", "--layers", "5",
                    "--calibrate-ms", str(r["step_ms"])], check=False)
PY
