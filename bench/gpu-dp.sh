#!/usr/bin/env bash
# Data parallel training on GPUs (docs/user-guide.md, "Many GPUs").
#
#   bench/gpu-dp.sh prepare        here (snn-opt built): compiles the
#                                  Fashion-MNIST MLP with batch 32 and 64 and
#                                  VGG-11 (batch 64) into .gpu/dp/
#   bench/gpu-dp.sh check [scale]  on the GPU machine: builds the runtime
#                                  (with MPI when mpicc is there), then
#   check  1. two ranks on cuda:0 over MPI (GPU tensors staged through the
#             host, --comm mpi) with batch 32 against one process with batch
#             64: weights within 1e-6 (results: dp-check.txt); 1b. the same
#             over TCP (snn-run --nproc without mpirun)
#          2. one rank through NCCL (--comm nccl --data-parallel: ncclAvg over
#             one rank is the identity): the checkpoint must equal a run
#             without data parallelism byte for byte
#          3. two ranks through NCCL on one GPU (NCCL refuses that: the job
#             must end with a clear error, not hang)
#   scale  with G >= 2 GPUs: the same as 1. over NCCL on 2 GPUs, then VGG-11
#          (batch 64 per GPU) on 1, 2, 4, ... G GPUs: step time and speedup
#          (dp-scaling.json)
#   peers  PyTorch DDP on the same GPUs (bench/dp_torch.py: torch.compile,
#          SpikingJelly cupy/triton), VGG-11 batch 64 per GPU
# Results go to $OUT (at most 8 files).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
g="$root/.gpu/dp"

if [ "${1:-}" = prepare ]; then
  set -e
  opt="${SNN_OPT:-$root/build/bin/snn-opt}"
  mkdir -p "$g" "$root/.gpu/include"
  cp -r /usr/include/nlohmann "$root/.gpu/include/"
  mkdir -p "$root/.gpu/data"
  [ -d "$root/.gpu/data/fashion-mnist" ] || cp -r /usr/share/datasets/fashion-mnist "$root/.gpu/data/"
  compile() { # name source autodiff-options
    rm -rf "$g/$1.snnmod"
    "$opt" "$2" --snn-autodiff="$3" --snn-compile="output=$g/$1.snnmod target=all" -o /dev/null
  }
  sed 's/x64x/x32x/g' "$root/examples/fmnist-mlp.mlir" > "$g/mlp32.mlir"
  compile mlp32 "$g/mlp32.mlir" "optimizer=sgd lr=0.05 momentum=0.9"
  compile mlp64 "$root/examples/fmnist-mlp.mlir" "optimizer=sgd lr=0.05 momentum=0.9"
  compile vgg11 "$root/examples/vgg11.mlir" "optimizer=sgd lr=0.1 momentum=0.9 loss=ce_rate"
  rm -f "$g/mlp32.mlir"
  echo "prepared $g: $(ls "$g" | tr '\n' ' ')"
  exit 0
fi

out="${OUT:-/tmp/gpu-dp-out}"; mkdir -p "$out"
b=/tmp/snnrt-build
export NCCL_NVLS_ENABLE=0 PYTHONPATH="$root/python"
start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - start )) s] $*"; }
cmake -S "$root/runtime" -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DSNN_ENABLE_CUDA=ON \
  -DSNNRT_JSON_INCLUDE="$root/.gpu/include" > "$out/dp-build.log" 2>&1 &&
  ninja -C $b snn-run >> "$out/dp-build.log" 2>&1
rc=$?; stamp "build rc=$rc ($(grep -o 'MPI found\|MPI not found' "$out/dp-build.log" | head -1))"
[ $rc = 0 ] || { tail -30 "$out/dp-build.log"; exit 1; }
rm -f "$out/dp-build.log"
run=$b/snn-run
check="python3 $root/test/Runtime/Inputs/dp_check.py"
gpus=$(nvidia-smi -L | wc -l)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
mpirun="mpirun --allow-run-as-root --oversubscribe --bind-to none"
w=/tmp/gpu-dp; rm -rf $w; mkdir -p $w
# 20 steps of batch 64: equal up to rounding. (Over hundreds of steps a
# rounding difference flips a spike near its threshold somewhere and the two
# runs drift apart: equal in distribution, not in bits.)
common="--data $root/.gpu/data/fashion-mnist --limit-train 1280 --limit-test 256 --seed 5 --no-progress --epochs 1 --comm-timeout 120"

for part in "${@:-check}"; do
case $part in
check)
  {
  echo "== 1. two ranks on cuda:0 over MPI (staged) vs one process, batch 64"
  $run $g/mlp64.snnmod train --device cuda:0 $common --checkpoint $w/one64.st > $w/one64.log 2>&1
  stamp "one process rc=$?"
  timeout 300 $mpirun -np 2 $run $g/mlp32.snnmod train --device cuda:0 --comm mpi $common \
    --checkpoint $w/mpi2.st > $w/mpi2.log 2>&1
  stamp "2 ranks (mpi) rc=$?"; tail -3 $w/mpi2.log
  $check compare $w/mpi2.st $w/one64.st
  echo "== 1b. the same over TCP (snn-run --nproc without mpirun)"
  SNNRT_LAUNCHER=spawn timeout 300 $run $g/mlp32.snnmod train --device cuda:0 --comm tcp $common \
    --nproc 2 --checkpoint $w/tcp2.st > $w/tcp2.log 2>&1
  stamp "2 ranks (tcp) rc=$?"; tail -3 $w/tcp2.log
  $check compare $w/tcp2.st $w/one64.st
  echo "== 2. one rank through NCCL vs no data parallelism (identical bytes)"
  $run $g/mlp64.snnmod train --device cuda:0 $common --checkpoint $w/plain.st > /dev/null 2>&1
  WORLD_SIZE=1 RANK=0 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29611 \
    timeout 300 $run $g/mlp64.snnmod train --device cuda:0 --comm nccl --data-parallel $common \
    --checkpoint $w/nccl1.st > $w/nccl1.log 2>&1
  stamp "1 rank (nccl) rc=$?"; tail -3 $w/nccl1.log
  cmp $w/nccl1.st $w/plain.st && echo "NCCL-1RANK IDENTICAL"
  echo "== 2b. the all-reduces on a second stream inside the backward's graph (--comm-overlap) vs after it (default with NCCL)"
  nccl1() { # name extra-options...
    local n=$1; shift
    WORLD_SIZE=1 RANK=0 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29612 \
      timeout 300 $run $g/mlp64.snnmod train --device cuda:0 --comm nccl --data-parallel $common \
      --checkpoint $w/$n.st "$@" > $w/$n.log 2>&1
    stamp "$n rc=$?"; grep -m2 "note:\|error" $w/$n.log
  }
  nccl1 nccl1-overlap --comm-overlap
  nccl1 nccl1-buckets --comm-overlap --bucket-mb 0.05
  SNNRT_CUDA_GRAPHS=0 nccl1 nccl1-nograph --comm-overlap --bucket-mb 0.05
  for n in nccl1-overlap nccl1-buckets nccl1-nograph; do
    cmp $w/$n.st $w/plain.st && echo "NCCL-1RANK $n IDENTICAL"
  done
  echo "== 2c. VGG-11 step, one NCCL rank: overlapped vs after the backward vs plain"
  python3 -c "import numpy as np; r=np.random.default_rng(0); np.save('$w/v.npy', r.uniform(0,1,(64*24,3,32,32)).astype(np.float32)); np.save('$w/vy.npy', r.integers(0,10,64*24).astype(np.int32))"
  vgg() { # name extra-options...
    local n=$1; shift
    SNNRT_CUDA_TF32=1 WORLD_SIZE=1 RANK=0 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29613 \
      timeout 300 $run $g/vgg11.snnmod train --device cuda:0 --data $w/v.npy --labels $w/vy.npy \
      --epochs 3 --no-progress --metrics $w/$n.jsonl "$@" > $w/$n.log 2>&1
    echo "$n rc=$? $(python3 -c "import json,sys; print('samples/s', json.loads(open(sys.argv[1]).readlines()[-1])['samples_per_s'])" $w/$n.jsonl 2>/dev/null) $(grep -m1 'note:' $w/$n.log)"
  }
  vgg vgg-plain
  vgg vgg-overlap --comm nccl --data-parallel --comm-overlap
  vgg vgg-after --comm nccl --data-parallel
  echo "== 3. two NCCL ranks on one GPU: a clear error, no hang"
  SNNRT_LAUNCHER=spawn timeout 120 $run $g/mlp32.snnmod train --device cuda:0 --comm nccl $common \
    --nproc 2 > $w/nccl-same-gpu.log 2>&1
  stamp "2 NCCL ranks on one GPU rc=$? (124 = hang)"; grep -m3 "error" $w/nccl-same-gpu.log
  } 2>&1 | tee "$out/dp-check.txt"
  ;;
scale)
  if [ "$gpus" -lt 2 ]; then echo "scale: $gpus GPU, nothing to scale"; continue; fi
  {
  echo "== NCCL, 2 GPUs vs one process with the global batch"
  [ -f $w/one64.st ] || $run $g/mlp64.snnmod train --device cuda:0 $common --checkpoint $w/one64.st > /dev/null 2>&1
  timeout 300 $run $g/mlp32.snnmod train --device cuda $common --nproc 2 \
    --checkpoint $w/nccl2.st > $w/nccl2.log 2>&1
  stamp "2 ranks (nccl) rc=$?"; tail -3 $w/nccl2.log
  $check compare $w/nccl2.st $w/one64.st
  } 2>&1 | tee "$out/dp-nccl.txt"
  # VGG-11 T=4, batch 64 per GPU, TF32, DP_STEPS steps per epoch (default
  # 50); the last of 3 epochs is measured. With 2+ GPUs also the all-reduce
  # during the backward (--comm-overlap) at the largest count.
  steps=${DP_STEPS:-50}
  python3 - "$w/vgg.npy" "$w/vgg-y.npy" "$gpus" "$steps" <<'PY'
import sys, numpy as np
n = 64 * int(sys.argv[3]) * int(sys.argv[4])
rng = np.random.default_rng(0)
np.save(sys.argv[1], rng.uniform(0, 1, (n, 3, 32, 32)).astype(np.float32))
np.save(sys.argv[2], rng.integers(0, 10, n).astype(np.int32))
PY
  results="["
  vgg() { # label gpus extra-options...
    local label=$1 n=$2; shift 2
    SNNRT_CUDA_TF32=1 timeout 400 $run $g/vgg11.snnmod train --device cuda --nproc $n --data $w/vgg.npy \
      --labels $w/vgg-y.npy --limit-train $((64 * n * steps)) --epochs 3 --no-progress \
      --metrics $w/$label.jsonl "$@" > $w/$label.log 2>&1
    rc=$?; stamp "VGG-11 $label on $n GPU(s) rc=$rc"; tail -1 $w/$label.log
    sps=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1])['samples_per_s'])" $w/$label.jsonl 2>/dev/null || echo null)
    results="$results{\"gpus\": $n, \"variant\": \"$label\", \"batch_per_gpu\": 64, \"samples_per_s\": $sps, \"rc\": $rc},"
  }
  last=1
  for n in 1 2 4 8; do
    [ $n -le "$gpus" ] || break
    vgg after$n $n; last=$n
  done
  [ $last -ge 2 ] && vgg overlap$last $last --comm-overlap
  echo "${results%,}]" | python3 -c "
import json, sys
r = json.load(sys.stdin)
base = next((x['samples_per_s'] for x in r if x['gpus'] == 1 and x['samples_per_s']), None)
for x in r:
    s = x['samples_per_s']
    x['step_ms'] = 1000 * 64 * x['gpus'] / s if s else None
    x['speedup'] = s / base if s and base else None
print(json.dumps(r, indent=1))" | tee "$out/dp-scaling.json"
  ;;
peers)
  # PyTorch DDP (torch.compile, SpikingJelly cupy/triton) on the same
  # machine, VGG-11 batch 64 per GPU: the peers' side of the scale table.
  python3 "$root/bench/dp_torch.py" --peers-dir "$root/.peers" --out "$out" 2>&1 |
    grep -v "^W[0-9]\|Warning" | tail -20
  stamp "peers done";;
*) echo "unknown part $part (check, scale, peers)";;
esac
done
