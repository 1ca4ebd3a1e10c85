#!/usr/bin/env bash
# The time split on GPUs (--snn-split-time; docs/user-guide.md "Many GPUs").
#   bench/gpu-split.sh prepare   here (snn-opt built): compiles into
#                                .gpu/split/ the benchmark models of
#                                bench/split_models.py (a 5-layer MLP and a
#                                4-conv net, T = 1024 and 4096) unsplit (P1)
#                                and split over P = 2 and 4, the same
#                                unsplit at T = 256, 512, 2048 (a rank's
#                                chunk, for the cost model), and the small
#                                test models of test/Runtime/Inputs (P = 1, 2,
#                                3), all target=all
#   bench/gpu-split.sh [check] [scale]
#                                on the GPU machine (default: both); builds
#                                the runtime first. Results go to $OUT:
#     check  one GPU: P ranks as threads on streams of cuda:0 (virtual
#            devices, --comm threads); with P GPUs also one rank per GPU over
#            NCCL: every split module's gradients (snn-run grads, with two
#            updates) within 1e-6 and its inference spikes identical to the
#            unsplit module on one device; training 1 epoch gives the same
#            weights; the float64 reference (python/snnref) of the small MLP
#            -> split-check.txt
#     scale  training step time (snn-run bench) of each benchmark model: P=1
#            on one GPU, P=2 and 4 as virtual devices on one GPU, and over
#            NCCL when there are that many GPUs; the speedups against the
#            wavefront's ideal L*P/(L+P-1) and the issue's targets, and the
#            cost model (bench/split_cost_model.py) calibrated by the P=1
#            step at T and by one device's step at T/P (a rank's chunk)
#            -> split-scale.jsonl, split-scale.md
#     profile  one device's step of mlp-T1024 and conv-T1024 per op kind
#            (snn-run bench --profile) -> split-profile.jsonl; run it
#            before scale: the report's wavefront model then takes the
#            neuron scans' share of the step from it
#     hybrid the 2-D mesh (time split x data parallel, --data-parallel with
#            N = P x D ranks): the small MLP split over P = 2 with batch 4,
#            trained 1 epoch on 2 x 2 ranks (threads on cuda:0; over NCCL
#            with >= 4 GPUs), against the unsplit MLP with batch 8 on one
#            device (weights within 1e-6); then the training step of
#            mlp-T1024 (snn-run bench): P = 1 on one GPU, P = 2 alone and
#            P = 2 x D = 2, with samples/s (replicas x batch / step)
#            -> split-hybrid.txt, split-hybrid.jsonl
#   SPLIT_DEVICE=cpu bench/gpu-split.sh check   a dry run of the plumbing
#            here (threads on the CPU; SPLIT_CHECK / SPLIT_SCALE pick models)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
g="$root/.gpu/split"
models() { for m in mlp conv; do for T in 1024 4096; do echo "$m-T$T"; done; done; }
# The unsplit models at the local lengths T/P of the split ones that no
# benchmark model has already: one device's time for one rank's chunk
# calibrates the cost model (bench/split_cost_model.py --report).
chunk_models() { for m in mlp conv; do for T in 256 512 2048; do echo "$m-T$T"; done; done; }
autodiff="optimizer=sgd lr=0.1 momentum=0.9"

if [ "${1:-}" = prepare ]; then
  set -e
  opt="${SNN_OPT:-$root/build/bin/snn-opt}"
  rm -rf "$g" && mkdir -p "$g" "$root/.gpu/include"
  # The runtime's JSON headers, which the GPU machine lacks.
  cp -r /usr/include/nlohmann "$root/.gpu/include/"
  compile() { # source name parts
    local split=""
    [ "$3" = 1 ] || split="--snn-split-time=parts=$3"
    "$opt" "$1" --snn-autodiff="$autodiff" $split \
      --snn-compile="output=$g/$2-P$3.snnmod target=all" -o /dev/null
  }
  for p in 1 2 3; do compile "$root/test/Runtime/Inputs/split-mlp.mlir" small-mlp $p; done
  # The hybrid mesh's reference: the same MLP with the global batch 2 x 4.
  sed 's/7x4x/7x8x/g' "$root/test/Runtime/Inputs/split-mlp.mlir" > "$g/small-mlp8.mlir"
  compile "$g/small-mlp8.mlir" small-mlp8 1
  for p in 1 2; do compile "$root/test/Runtime/Inputs/split-convnet.mlir" small-conv $p; done
  for name in $(models); do
    m=${name%-T*} T=${name#*-T}
    python3 "$root/bench/split_models.py" "$m" --steps "$T" > "$g/$name.mlir"
    for P in 1 2 4; do compile "$g/$name.mlir" "$name" $P; done
    echo "prepared $name"
  done
  for name in $(chunk_models); do
    m=${name%-T*} T=${name#*-T}
    python3 "$root/bench/split_models.py" "$m" --steps "$T" > "$g/$name.mlir"
    compile "$g/$name.mlir" "$name" 1
  done
  du -sh "$g"
  exit 0
fi

out="${OUT:-/tmp/gpu-out}"; mkdir -p "$out"
[ -d "$g" ] || { echo "gpu-split.sh: $g is missing; run 'bench/gpu-split.sh prepare' on the build machine first" >&2; exit 1; }
export NCCL_NVLS_ENABLE=0 PYTHONPATH="$root/python"
start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - start )) s] $*"; }
if [ "${SPLIT_DEVICE:-cuda}" = cpu ]; then
  # A dry run of this script's plumbing on the build machine (CPU threads).
  run=${SNN_RUN:-$root/build/runtime/snn-run} dev=cpu gpus=0 gpu=cpu
else
  b=/tmp/snnrt-build
  cmake -S "$root/runtime" -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DSNN_ENABLE_CUDA=ON \
    -DSNNRT_JSON_INCLUDE="$root/.gpu/include" > "$out/split-build.log" 2>&1 &&
    ninja -C $b snn-run >> "$out/split-build.log" 2>&1
  rc=$?; stamp "runtime build rc=$rc"
  [ $rc = 0 ] || { tail -30 "$out/split-build.log"; exit 1; }
  rm -f "$out/split-build.log"
  run=$b/snn-run dev=cuda:0
  gpus=$(nvidia-smi -L | wc -l)
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
fi
inputs="$root/test/Runtime/Inputs"
w=/tmp/gpu-split; rm -rf $w; mkdir -p $w

# The ways to run P ranks here: "threads" (virtual devices on cuda:0), and
# "nccl" (one rank per GPU) when there are P GPUs.
ways() { echo threads; [ "$1" -le "$gpus" ] && echo nccl; }
ranks() { # way P -> the snn-run options
  if [ "$1" = threads ]; then echo "--nproc $2 --comm threads --device $dev --comm-timeout 60"
  else echo "--nproc $2 --device cuda --comm-timeout 60"; fi
}

# Fresh random data for NAME in $w/NAME (once): for the test models 24
# samples; for the benchmark models one batch [T, B, ...] of normal(0.6, 1)
# input and weights of normal(0, g / sqrt(fan-in)), g = 3 for the first
# layer and 6 for the others (w.safetensors), under which every layer fires
# (about 23% of the MLP's neurons per step) (their default initialization leaves the deeper
# layers silent and the gradients zero: a check that proves nothing).
data_for() {
  [ -f $w/$1/x.npy ] && return
  mkdir -p $w/$1
  case $1 in
    small-*) python3 $inputs/dp_check.py data $g/$1-P1.snnmod $w/$1 24 ;;
    *) python3 - $g/$1-P1.snnmod $w/$1 <<'PY'
import sys, numpy as np
from snnref.manifest import Module
from snnref.tensorio import write_safetensors
m, d = Module(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng()
params = [t for t in m.m["tensors"] if t.get("role") == "param"]
w = {t["name"]: rng.normal(0, (3.0 if i == 0 else 6.0) / np.sqrt(np.prod(t["shape"][1:])),
                           t["shape"]).astype(np.float32) for i, t in enumerate(params)}
shape = m.info(int(m.m["input"]))["shape"]
write_safetensors(f"{d}/w.safetensors", w)
np.save(f"{d}/x.npy", rng.normal(0.6, 1.0, shape).astype(np.float32))
np.save(f"{d}/y.npy", rng.integers(0, m.info(int(m.m["output"]))["shape"][-1], shape[1]).astype(np.int64))
PY
  ;;
  esac
}

# check_model NAME P... : grads and infer of NAME-P<p> against NAME-P1.
# Gradients within 1e-6 relative on the T = 7 test models; on the T = 1024
# benchmark models within 1e-5: a weight gradient sums T*B*pixels products,
# which a rank sums in another order (2e-6 on the conv net, on the CPU too).
check_model() {
  local name=$1; shift
  local d=$w/$name tol=1e-6
  case $name in small-*) ;; *) tol=1e-5;; esac
  data_for $name
  local common="--data $d/x.npy --labels $d/y.npy --seed 5"
  [ -f $d/w.safetensors ] && common="$common --weights $d/w.safetensors"
  $run $g/$name-P1.snnmod grads --device $dev $common --output $d/g1.st --update-steps 2 > $d/g1.log 2>&1 ||
    { echo "FAIL $name one device grads: $(tail -2 $d/g1.log)"; return; }
  $run $g/$name-P1.snnmod infer --device $dev $common --output $d/o1.npy > $d/o1.log 2>&1 ||
    { echo "FAIL $name one device infer: $(tail -2 $d/o1.log)"; return; }
  for p in "$@"; do
    for way in $(ways $p); do
      local tag="$name P=$p $way"
      timeout 120 $run $g/$name-P$p.snnmod grads $(ranks $way $p) $common --output $d/g$p$way.st \
        --update-steps 2 > $d/g$p$way.log 2>&1 || { echo "FAIL $tag grads rc=$?: $(grep -m2 error $d/g$p$way.log)"; continue; }
      echo "$tag grads: $(python3 $inputs/split_check.py grads $d/g$p$way.st $d/g1.st $tol 2>&1)"
      timeout 120 $run $g/$name-P$p.snnmod infer $(ranks $way $p) $common --output $d/o$p$way.npy \
        > $d/o$p$way.log 2>&1 || { echo "FAIL $tag infer rc=$?: $(grep -m2 error $d/o$p$way.log)"; continue; }
      local same; same=$(python3 $inputs/split_check.py outputs $d/o$p$way.npy $d/o1.npy 2>&1)
      case "$same" in *"all zero"*)
        cmp -s $d/o$p$way.npy $d/o1.npy && same="WEAK: no output spikes, identical (zero) outputs; the gradients above depend on every hidden spike";;
      esac
      echo "$tag infer: $same"
    done
  done
}

for part in "${@:-check scale}"; do
for part in $part; do
case $part in
check)
  {
  # cuDNN's heuristic algorithm choice: timing the candidates per shape
  # (the default) picks other algorithms for a rank's shapes than for one
  # device's, and over 1024 steps one rounding difference flips a spike.
  echo "== $gpu x $gpus: split modules vs the unsplit module on $dev (SNNRT_CUDA_CUDNN_FIND=${SNNRT_CUDA_CUDNN_FIND:-0})"
  for name in ${SPLIT_CHECK:-small-mlp small-conv mlp-T1024 conv-T1024}; do
    case $name in small-mlp) check_model $name 2 3;; small-conv) check_model $name 2;;
      *) check_model $name 2 4;; esac
  done
  stamp "grads and infer"
  echo "== training 1 epoch (6 steps): the same weights as one device"
  data_for small-mlp
  d=$w/small-mlp; common="--data $d/x.npy --labels $d/y.npy --seed 5 --no-progress --epochs 1"
  $run $g/small-mlp-P1.snnmod train --device $dev $common --checkpoint $d/t1.st > $d/t1.log 2>&1
  for way in $(ways 2); do
    timeout 120 $run $g/small-mlp-P2.snnmod train $(ranks $way 2) $common --checkpoint $d/t2$way.st \
      > $d/t2$way.log 2>&1 || { echo "FAIL train P=2 $way: $(grep -m2 error $d/t2$way.log)"; continue; }
    echo "small-mlp P=2 $way train: $(python3 $inputs/dp_check.py compare $d/t2$way.st $d/t1.st 2>&1)"
  done
  echo "== the float64 reference (python/snnref) of the small MLP, split over 3 virtual devices"
  mkdir -p $w/ref && python3 $inputs/grads_reference.py make $g/small-mlp-P1.snnmod $w/ref &&
    $run $g/small-mlp-P3.snnmod grads $(ranks threads 3) --weights $w/ref/w.safetensors \
      --data $w/ref/x.npy --labels $w/ref/y.npy --output $w/ref/grads.safetensors > $w/ref/run.log 2>&1 &&
    python3 $inputs/grads_reference.py compare $g/small-mlp-P1.snnmod $w/ref 2>&1 | tail -2 ||
    echo "FAIL reference: $(grep -m2 error $w/ref/run.log)"
  echo "== a rank's error ends the job with one message (no hang)"
  timeout 120 $run $g/small-mlp-P2.snnmod grads --nproc 2 --comm threads --device $dev \
    --data $d/x.npy --labels $d/y.npy --output $w/bad.st --weights /nonexistent.safetensors > $w/bad.log 2>&1
  echo "rc=$? (124 = hang): $(grep -m1 error $w/bad.log)"
  stamp "check done"
  } 2>&1 | tee "$out/split-check.txt"
  ;;
scale)
  {
  echo "== training step (snn-run bench, 10 iterations) on $gpu x $gpus"
  : > "$out/split-scale.jsonl"
  for name in ${SPLIT_SCALE:-$(models) $(chunk_models)}; do
    m=${name%-T*} T=${name#*-T}
    [ -d $g/$name-P2.snnmod ] && parts="1 2 4" || parts=1
    for p in $parts; do
      for way in $( [ $p = 1 ] && echo one || ways $p ); do
        if [ $way = one ]; then opts="--device $dev"; else opts="$(ranks $way $p)"; fi
        line=$(timeout 120 $run $g/$name-P$p.snnmod bench $opts --iterations 10 2>$w/bench.err | tail -1)
        case "$line" in
          "{"*) python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.update(model=sys.argv[2], T=int(sys.argv[3]), P=int(sys.argv[4]), way=sys.argv[5], gpu=sys.argv[6], gpus=int(sys.argv[7])); print(json.dumps(r))' \
                  "$line" "$m" "$T" "$p" "$way" "$gpu" "$gpus" | tee -a "$out/split-scale.jsonl" ;;
          *) echo "FAIL $name P=$p $way: $(grep -m2 error $w/bench.err)" ;;
        esac
      done
    done
  done
  stamp "bench done"
  } 2>&1 | tee "$out/split-scale.txt"
  prof=""; [ -s "$out/split-profile.jsonl" ] && prof="--profile $out/split-profile.jsonl"
  python3 "$root/bench/split_cost_model.py" --report "$out/split-scale.jsonl" $prof | tee "$out/split-scale.md"
  ;;
profile)
  # Where one device's step goes (snn-run bench --profile: op by op, no
  # CUDA graphs): the neuron scans are the only work a rank waits for from
  # its neighbour, everything else (GEMMs, loss, update) runs on its own
  # steps at once. The cost model (--report --profile) takes the shares.
  : > "$out/split-profile.jsonl"
  for name in ${SPLIT_PROFILE:-mlp-T1024 conv-T1024}; do
    m=${name%-T*} T=${name#*-T}
    $run $g/$name-P1.snnmod bench --device $dev --iterations 5 --profile > $w/prof.out 2> $w/prof.err ||
      { echo "FAIL profile $name: $(grep -m2 error $w/prof.err)"; continue; }
    python3 "$root/bench/split_cost_model.py" --parse-profile $w/prof.err --model "$m" --steps "$T" \
      | tee -a "$out/split-profile.jsonl"
  done
  stamp "profile done"
  ;;
hybrid)
  {
  echo "== hybrid mesh on $gpu x $gpus: P = 2 x D = 2 against one device with the global batch"
  data_for small-mlp8
  d=$w/small-mlp8; common="--data $d/x.npy --labels $d/y.npy --seed 5 --no-progress --epochs 1"
  $run $g/small-mlp8-P1.snnmod train --device $dev $common --checkpoint $d/t1.st > $d/t1.log 2>&1 ||
    echo "FAIL one device train: $(tail -2 $d/t1.log)"
  for way in $(ways 4); do
    timeout 180 $run $g/small-mlp-P2.snnmod train $(ranks $way 4) --data-parallel $common \
      --checkpoint $d/h$way.st > $d/h$way.log 2>&1 || { echo "FAIL mesh $way: $(grep -m2 error $d/h$way.log)"; continue; }
    echo "small-mlp P=2 x D=2 $way train: $(python3 $inputs/dp_check.py compare $d/h$way.st $d/t1.st 2>&1)"
    grep -m1 "^epoch" $d/h$way.log; grep -m1 "^epoch" $d/t1.log
  done
  stamp "hybrid check"
  echo "== mlp-T1024 training step (snn-run bench, 10 iterations): P=1, P=2, P=2 x D=2"
  : > "$out/split-hybrid.jsonl"
  for cfg in "1 one" "2 threads" "2 nccl" "4 threads" "4 nccl"; do
    set -- $cfg; n=$1 way=$2
    [ $way = nccl ] && [ $n -gt "$gpus" ] && continue
    p=$n; [ $n = 4 ] && p=2
    if [ $way = one ]; then opts="--device $dev"; else opts="$(ranks $way $n)"; fi
    [ $n = 4 ] && opts="$opts --data-parallel"
    line=$(timeout 300 $run $g/mlp-T1024-P$p.snnmod bench $opts --iterations 10 2>$w/bench.err | tail -1)
    case "$line" in
      "{"*) python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.update(model="mlp-T1024", P=int(sys.argv[2]), way=sys.argv[3], gpu=sys.argv[4], gpus=int(sys.argv[5])); r["samples_per_s"]=1000*r["batch"]*r["replicas"]/r["step_ms"]; print(json.dumps(r))' \
              "$line" "$p" "$way" "$gpu" "$gpus" | tee -a "$out/split-hybrid.jsonl" ;;
      *) echo "FAIL mlp-T1024 $n ranks $way: $(grep -m2 error $w/bench.err)" ;;
    esac
  done
  stamp "hybrid done"
  } 2>&1 | tee "$out/split-hybrid.txt"
  ;;
*) echo "unknown part $part (check, scale, profile, hybrid)";;
esac
done
done
