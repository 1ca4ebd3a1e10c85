# Shared by the A/B GPU scripts (bench/gpu-pool.sh, gpu-bn.sh, gpu-fuse.sh):
# source it after setting $root.

# gpu_build_runtime SOURCE-DIR BUILD-DIR: builds snn-run with CUDA; on failure
# prints the end of the build log and exits.
gpu_build_runtime() {
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSNN_ENABLE_CUDA=ON \
    -DSNNRT_JSON_INCLUDE="$root/.gpu/include" > "$2.log" 2>&1 && ninja -C "$2" snn-run >> "$2.log" 2>&1 ||
    { tail -30 "$2.log"; exit 1; }
}

# gpu_ab_bench "LABEL-A" "RUN-A MODULE-A" "LABEL-B" "RUN-B MODULE-B" "WHAT-A" "WHAT-B":
# `snn-run bench` (TF32, CUDA graphs) of A then B, three rounds, then one
# per-op profile of each ("== per-op profile, WHAT").
gpu_ab_bench() {
  local i
  for i in 1 2 3; do
    echo "$1 $(SNNRT_CUDA_TF32=1 $2 bench --device cuda:0 --iterations 50)"
    echo "$3 $(SNNRT_CUDA_TF32=1 $4 bench --device cuda:0 --iterations 50)"
  done
  echo "== per-op profile, $5"
  SNNRT_CUDA_TF32=1 $2 bench --device cuda:0 --iterations 20 --profile 2>&1
  echo "== per-op profile, $6"
  SNNRT_CUDA_TF32=1 $4 bench --device cuda:0 --iterations 20 --profile 2>&1
}
