#!/usr/bin/env bash
# On the GPU machine (no LLVM/MLIR there): builds the runtime with CUDA and
# runs the training checks and benchmarks on modules compiled beforehand on a
# machine with snn-opt (bench/prepare-gpu.sh writes .gpu/). Parts:
#   tests  the CUDA backend's op tests; SpikingJelly golden data (cpu and cuda)
#          and `snn-run grads --device cuda` against it
#   vgg    spiking VGG-11 training step and forward: ours vs the peers
#   train  Fashion-MNIST: MLP and conv net trained by snn-run on the GPU,
#          and SpikingJelly's epoch time for the MLP
#   cudatests  the CUDA backend's op tests only (no SpikingJelly needed)
#   recurrent  recurrent models and NIR graphs on the GPU against their
#          float64 references; the SHD-sized example vs PyTorch
#   grads  one training step on the GPU against the float64 reference:
#          recurrent lif, cuba_lif and plif layers (generated step kernels),
#          multi-step plif layers, bf16 saved H (compiled kernels); then the
#          generated op kernels (bench/gpu-op-kernels.sh: add/scale/accumulate,
#          pooling, every loss kind (and its loss bits equal in two runs),
#          SGD/Adam/AdamW updates incl. graph replay)
#   opkernels  the generated op kernels alone
#   nir    the NIR test graphs on the GPU against the reference simulator
#   cputrain  the Fashion-MNIST MLP and conv net training step on the CPU:
#          snn-run vs PyTorch (eager, torch.compile), 1, 2 threads and all
#          cores, and the SHD-layout network dense vs event-driven
#          (bench/cpu-train.sh; `bench/cpu-train.sh prepare` here first)
#   record membrane outputs, recorded layer state (snn-run --record) and the
#          max-over-time membrane loss against python/snnref
#   kernels  the MLIR-generated neuron kernels (fp32 and reduced storage)
#          against the reference, then the LIF layer benchmark
#          (LIF_STEPS="4 8 ..." and LIF_TIMEOUT seconds, default all T, 500;
#          LIF_SKIP=torch.compile leaves that peer out)
#   sparse event-driven linear layers (--snn-sparsify; bench/gpu-sparse.sh,
#          after `bench/gpu-sparse.sh prepare` here): the CUDA op tests (among
#          them the dense GEMM in a conditional graph node), then the GPU
#          kernels against the dense path and the float64 reference
#   sparsebench  the layer and SHD-network benchmarks of event-driven
#          layers (GPU, torch.sparse, summary, plot; about 8 minutes); the
#          CPU step too with SPARSE_CPU=1 (more than 8 output files then)
#   sparsebwd  the SHD network's training step with the sparse backward
#          (grad-threshold, event-driven linear backwards) vs dense at
#          calibrated activity 1..50% (bench/gpu-sparse.sh gpu-bwd; a few
#          minutes); `sparse` checks its gradients
#   bf16   VGG-11 with bf16 saved H, with recomputed H and with the bf16
#          GEMM option, and without the memory plan (no peers)
#   gradband  the sparse backward (grad-threshold=B) against the reference
#          and bit-packed saved spikes vs floats on the GPU, then VGG-11 and
#          the SHD-sized MLP with and without bits (bench/gpu-gradband.sh;
#          needs `bench/gpu-gradband.sh prepare` run here first)
# The correctness checks run with SNNRT_MEMORY_PLAN=poison (the memory plan's
# arena starts as NaN, so a read before a write shows).
set -uo pipefail
out="${OUT:-/tmp/gpu-out}"; mkdir -p "$out"
b=/tmp/snnrt-build
g=.gpu
start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - start )) s] $*"; }
cmake -S runtime -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DSNN_ENABLE_CUDA=ON \
  -DSNNRT_JSON_INCLUDE="$PWD/$g/include" > "$out/build.log" 2>&1 && ninja -C $b >> "$out/build.log" 2>&1
rc=$?; stamp "build rc=$rc"; [ $rc = 0 ] && rm -f "$out/build.log"
run=$b/snn-run
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

for part in "$@"; do
case $part in
tests)
  $b/cuda/test/snnrt-cuda-tests > "$out/cuda-tests.log" 2>&1
  # Every neuron model/surrogate/reset: generated kernels, GPU vs CPU.
  SNNRT_CUDA_TEST_MODULE=$PWD/$g/record/variants/m.snnmod $b/cuda/test/snnrt-cuda-parity-tests \
    --gtest_filter=CudaExecutor.RunsACompiledModulesKernels >> "$out/cuda-tests.log" 2>&1
  SNNRT_CUDA_TEST_MODULE=$PWD/$g/mods/fmnist-convnet.snnmod $b/cuda/test/snnrt-cuda-parity-tests \
    >> "$out/cuda-tests.log" 2>&1
  stamp "snnrt-cuda-tests rc=$?"; grep -E "FAILED|PASSED|tests ran" "$out/cuda-tests.log" | tail -8
  for dev in cpu cuda; do
    python3 bench/sj_equivalence.py "$out/sj/$dev" --device $dev --peers-dir .peers 2>&1 | tail -3
  done
  for net in mlp conv; do
    python3 test/Runtime/Inputs/sj_compare.py $run $g/mods/sj-$net.snnmod "$out/sj/cuda/$net" \
      "$out/sj-ours-$net" --device cuda:0 2>&1 | tail -14
  done
  tar -C "$out" -czf "$out/sj-golden.tgz" sj && rm -rf "$out/sj" "$out"/sj-ours-*
  stamp "tests done";;
vgg)
  for m in vgg11 vgg11-bf16h fmnist-mlp fmnist-convnet; do
    $run $g/mods/$m.snnmod bench --device cuda:0 --iterations 50
  done | tee "$out/bench-ours.jsonl"
  # Reduced precision: TF32 convolutions and GEMMs, then bf16 GEMM products.
  for env in SNNRT_CUDA_TF32=1 SNNRT_CUDA_BF16=1; do
    for m in vgg11 vgg11-bf16h; do
      echo "$env $m: $(env $env $run $g/mods/$m.snnmod bench --device cuda:0 --iterations 50)"
    done
  done | tee -a "$out/bench-ours.jsonl"
  for tf32 in ${VGG_TF32:-on off}; do
    python3 bench/vgg11.py --device cuda --peers-dir .peers --out "$out" --tf32 $tf32 \
      --ours "$run $g/mods/vgg11.snnmod bench --device cuda:0 --iterations 50" 2>&1 | tail -14
  done
  if command -v nsys >/dev/null; then  # where our VGG-11 step spends its time
    SNNRT_CUDA_TF32=1 nsys profile -o /tmp/vgg-ours --force-overwrite true \
      $run $g/mods/vgg11.snnmod bench --device cuda:0 --iterations 20 > /dev/null 2>&1
    nsys stats -q --report cuda_gpu_kern_sum --format csv /tmp/vgg-ours.nsys-rep 2>/dev/null \
      | cut -d, -f1-4,9 | head -30
  else
    echo "nsys not found: no kernel profile"
  fi
  stamp "vgg done";;
nir)
  # Correctness checks run with the memory plan's arena starting as NaN.
  SNNRT_MEMORY_PLAN=poison python3 test/Target/NIR/Inputs/simulate_check.py - $run $g/nir-sim --prepared --device cuda:0 \
    single_lif mlp conv conv_same conv_same_even misc recurrent nested old conv1d delays \
    mixed_delays flatten_mid rec_bias_min rec_bias rec_subgraph rec_delay_bias two_loops 2>&1 | tail -19
  stamp "nir done";;
record)
  # Membrane outputs and recorded state on the GPU against python/snnref.
  r=$g/record; export PYTHONPATH=$PWD/python
  SNNRT_MEMORY_PLAN=poison $run $r/net/m.snnmod infer --device cuda:0 --data $r/net/x.npy \
    --weights $r/net/w.safetensors --output $r/net/out.npy --record all --record-output $r/net/rec.safetensors
  python3 -m snnref.compare $r/net/m.snnmod --input $r/net/x.npy --output $r/net/out.npy \
    --weights $r/net/w.safetensors --rtol 1e-5 --traces $r/net/rec.safetensors 2>&1 | tail -3
  SNNRT_MEMORY_PLAN=poison $run $r/step/m.snnmod infer --device cuda:0 --data $r/step/x.npy \
    --weights $r/step/w.safetensors --output $r/step/out.npy --record lif1,lif2 --record-output $r/step/rec.safetensors
  python3 -m snnref.compare $r/step/m.snnmod --input $r/step/x.npy --output $r/step/out.npy \
    --weights $r/step/w.safetensors --rtol 1e-5 --traces $r/step/rec.safetensors 2>&1 | tail -3
  # Every neuron model/surrogate/reset (the generated record kernels).
  SNNRT_MEMORY_PLAN=poison $run $r/variants/m.snnmod infer --device cuda:0 --data $r/variants/x.npy \
    --weights $r/variants/w.safetensors --output $r/variants/out.npy --record all \
    --record-output $r/variants/rec.safetensors
  python3 -m snnref.compare $r/variants/m.snnmod --input $r/variants/x.npy --output $r/variants/out.npy \
    --weights $r/variants/w.safetensors --rtol 1e-5 --traces $r/variants/rec.safetensors 2>&1 | tail -3
  # A module without cubin/PTX: one error naming the layer and the fix.
  if $run $r/variants/cpu.snnmod infer --device cuda:0 --data $r/variants/x.npy \
      --weights $r/variants/w.safetensors > "$out/no-cubin.log" 2>&1; then
    echo "FAILED: a module without GPU kernels ran on the GPU"
  else
    grep -qE "no cubin or PTX for this (GPU|device)" "$out/no-cubin.log" &&
      echo "missing GPU kernels: one clear error OK" || { echo "FAILED: unexpected error"; cat "$out/no-cubin.log"; }
  fi
  SNNRT_MEMORY_PLAN=poison $run $r/max/m.snnmod grads --device cuda:0 --weights $r/max/w.safetensors \
    --data $r/max/x.npy --labels $r/max/y.npy --output $r/max/grads.safetensors
  python3 test/Runtime/Inputs/grads_reference.py compare $r/max/m.snnmod $r/max 2>&1 | tail -3
  stamp "record done";;
grads)
  for r in $g/recurrent-grads $g/recurrent-grads-cuba $g/recurrent-grads-plif $g/plif-grads \
      $g/bf16-grads $g/recompute-grads $g/asym-grads $g/variants-grads \
      $g/layer-grads; do
    echo "$r:"
    SNNRT_MEMORY_PLAN=poison $run $r/rec.snnmod grads --device cuda:0 --weights $r/w.safetensors --data $r/x.npy \
      --labels $r/y.npy --output $r/grads.safetensors && \
      PYTHONPATH=python python3 test/Runtime/Inputs/grads_reference.py compare $r/rec.snnmod $r
  done
  # The same layers without cuDNN: the generated im2col/col2im columns.
  r=$g/layer-grads; echo "$r (SNNRT_CUDA_CUDNN=0):"
  SNNRT_CUDA_CUDNN=0 SNNRT_MEMORY_PLAN=poison $run $r/rec.snnmod grads --device cuda:0 --weights $r/w.safetensors \
    --data $r/x.npy --labels $r/y.npy --output $r/grads.safetensors && \
    PYTHONPATH=python python3 test/Runtime/Inputs/grads_reference.py compare $r/rec.snnmod $r
  bench/gpu-op-kernels.sh $run $g 2>&1 | tee "$out/op-kernels.log" | tail -40
  stamp "grads done";;
opkernels)
  bench/gpu-op-kernels.sh $run $g 2>&1 | tee "$out/op-kernels.log" | tail -40
  stamp "op kernels done";;
sparse)
  $b/cuda/test/snnrt-cuda-tests > "$out/sparse-check.log" 2>&1
  stamp "snnrt-cuda-tests rc=$?"
  grep -E "ConditionalGraphNode|FAILED|PASSED|tests ran" "$out/sparse-check.log" | tail -6
  bench/gpu-sparse.sh check $run 2>&1 | tee -a "$out/sparse-check.log" | tail -12
  stamp "sparse check rc=${PIPESTATUS[0]}";;
sparsebench)
  bench/gpu-sparse.sh gpu $run "$out" 2>&1 | tail -60
  stamp "sparse gpu benchmarks done"
  if [ -n "${SPARSE_CPU:-}" ]; then
    bench/gpu-sparse.sh cpu $run "$out" 16 2>&1 | tail -20
    stamp "sparse cpu benchmark done"
  fi;;
sparsebwd)
  bench/gpu-sparse.sh gpu-bwd $run "$out" 2>&1 | tail -30
  stamp "sparse backward gpu benchmark done";;
kernels)
  python3 test/Conversion/NeuronToGPU/Inputs/neuron_kernels_gpu.py run $g/nk > "$out/neuron-kernels.log" 2>&1
  stamp "neuron kernels: $(tail -1 "$out/neuron-kernels.log")"
  grep '"ok": false' "$out/neuron-kernels.log"
  grep '"bench_' "$out/neuron-kernels.log" | cut -c1-400
  timeout "${LIF_TIMEOUT:-500}" python3 bench/lif_layer.py --kernels $g/nk --peers-dir .peers \
    --out "$out" --steps ${LIF_STEPS:-4 8 16 32 64} ${LIF_SKIP:+--skip-peer "$LIF_SKIP"} \
    2>&1 | grep -v -i warn > "$out/lif.log"
  stamp "lif bench rc=$?"; tail -30 "$out/lif.log";;
bf16)
  for env in SNNRT_CUDA_TF32=0 SNNRT_CUDA_TF32=1 SNNRT_CUDA_BF16=1 \
      "SNNRT_CUDA_TF32=1 SNNRT_MEMORY_PLAN=0"; do
    for m in vgg11 vgg11-bf16h vgg11-recompute; do
      echo "$env $m: $(env $env $run $g/mods/$m.snnmod bench --device cuda:0 --iterations 50)"
    done
  done | tee "$out/bench-bf16.jsonl"
  stamp "bf16 done";;
gradband)
  bench/gpu-gradband.sh run $run "$out" 2>&1 | tee "$out/gradband.log" | tail -40
  stamp "gradband done";;
cputrain)
  # CPU training step against PyTorch on the CPU at 1, 2 and all threads, and
  # the SHD-layout network dense vs event-driven (bench/cpu-train.sh; needs
  # `bench/cpu-train.sh prepare` run here first).
  bench/cpu-train.sh run $run "$out" "$(nproc)-core CPU of the GPU machine" 1 2 $(nproc) 2>&1 | tail -40
  stamp "cputrain done";;
cudatests)
  $b/cuda/test/snnrt-cuda-tests > "$out/cuda-tests.log" 2>&1
  # Every neuron model/surrogate/reset: generated kernels, GPU vs CPU.
  SNNRT_CUDA_TEST_MODULE=$PWD/$g/record/variants/m.snnmod $b/cuda/test/snnrt-cuda-parity-tests \
    --gtest_filter=CudaExecutor.RunsACompiledModulesKernels >> "$out/cuda-tests.log" 2>&1
  SNNRT_CUDA_TEST_MODULE=$PWD/$g/mods/fmnist-convnet.snnmod $b/cuda/test/snnrt-cuda-parity-tests \
    >> "$out/cuda-tests.log" 2>&1
  stamp "snnrt-cuda-tests rc=$?"; grep -E "FAILED|PASSED|tests ran" "$out/cuda-tests.log" | tail -8;;
recurrent)
  SNNRT_MEMORY_PLAN=poison python3 test/Runtime/Inputs/recurrent_check.py - $run $g/recurrent-check --prepared \
    --trials 6 --device cuda:0 2>&1 | tail -8
  SNNRT_MEMORY_PLAN=poison python3 test/Target/NIR/Inputs/simulate_check.py - $run $g/nir-sim --prepared --device cuda:0 \
    single_lif mlp conv conv_same misc recurrent nested old conv1d delays flatten_mid 2>&1 | tail -13
  for r in $g/recurrent-grads $g/recurrent-grads-cuba; do
    $run $r/rec.snnmod grads --device cuda:0 --weights $r/w.safetensors --data $r/x.npy \
      --labels $r/y.npy --output $r/grads.safetensors && \
      PYTHONPATH=python python3 test/Runtime/Inputs/grads_reference.py compare $r/rec.snnmod $r
  done
  python3 bench/recurrent.py --device cuda --run $run --module $g/mods/recurrent.snnmod \
    --train-module $g/mods/recurrent-train.snnmod --out "$out" 2>&1 | tail -30
  stamp "recurrent done";;
train)
  data=$g/data/fashion-mnist
  $run $g/mods/fmnist-mlp.snnmod train --device cuda:0 --data $data --epochs 10 \
    --lr-schedule cosine --metrics "$out/train-mlp.jsonl" --no-progress 2>&1 | grep -v "^spike" | tail -12
  stamp "mlp trained"
  $run $g/mods/fmnist-convnet.snnmod train --device cuda:0 --data $data --epochs 10 \
    --lr-schedule cosine --metrics "$out/train-convnet.jsonl" --no-progress 2>&1 | grep -v "^spike" | tail -12
  stamp "convnet trained"
  python3 bench/fmnist_epoch.py $data --backend cupy torch --peers-dir .peers 2>&1 | tee "$out/sj-mlp-epoch.jsonl" | tail -4
  stamp "peers done";;
esac
done
