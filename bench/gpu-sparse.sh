#!/usr/bin/env bash
# Event-driven linear layers (--snn-sparsify, docs/user-guide.md).
#   bench/gpu-sparse.sh prepare
#       here (snn-opt built): compiles into .gpu/sparse/ the layer modules
#       (spike input [T*B = 4096, N] x W[N, N], N = 1024, 2048, 4096; dense,
#       event-driven with crossover=1, i.e. always event-driven, and the
#       dispatch with the CUDA default crossover) and the
#       SHD-scale network (700 -> 1472 LIF -> 1472 LIF -> 20 LI, T = 100,
#       batch 128, Adam; dense, always event-driven, and with the CUDA default
#       crossover = the dispatch), plus a batch-16 copy of the network for
#       the CPU; and the correctness cases of test/Runtime/sparsify.test
#       (modules with cubin/PTX, spikes at densities 0..100%) in
#       .gpu/sparse/check*. The weight scales at which the SHD network's
#       hidden layers fire at 1, 5, 10, 20, 50% are in
#       bench/inputs/shd-activity.json; `bench/gpu-sparse.sh calibrate`
#       (snn-run built here) measures them again (bench/sparse_activity.py,
#       on the CPU at batch 16, a few minutes).
#   bench/gpu-sparse.sh prepare-check
#       here: only those correctness cases (into .gpu/sparse/check*).
#   bench/gpu-sparse.sh check SNN_RUN
#       GPU machine: those cases on cuda:0 with the memory plan poisoned:
#       dense vs dispatch vs always event-driven (the generated GPU kernels,
#       no cuBLAS) and against the float64 reference; one line per density,
#       "OK" or "FAIL ...".
#   bench/gpu-sparse.sh gpu SNN_RUN [OUT]
#       GPU machine: per module and input density, `snn-run bench` under CUDA
#       graphs (the timing that counts: the dispatch's dense GEMM sits in a
#       conditional graph node, skipped on the device when the event-driven
#       path ran); the layer dispatch also with SNNRT_CUDA_CONDITIONAL=0
#       (GEMM always runs) at 1% and 50%; one `--profile` run (per-op split,
#       eager, no graphs) of each SHD module at 5%; torch.sparse / dense
#       torch on the same layers (bench/sparse_torch.py); then a CSV, a
#       summary (speedups, measured crossover per N) and a time-vs-density
#       PNG (bench/sparse_report.py). The SHD network runs twice: with its
#       initial weights (input density forced, hidden layers at whatever rate
#       they fire: shd128-*) and with the calibrated weights, every layer's
#       input at about the density (shd128act-*; `snn-run infer` of the
#       dispatch module on such input reports the spike rates and the path
#       each layer took, "== activity" in the raw file). Files:
#       sparse-gpu-raw.txt,
#       sparse-torch.json, sparse-gpu-results.csv, sparse-gpu-summary.txt,
#       sparse-gpu-layer.png.
#   bench/gpu-sparse.sh gpu-bwd SNN_RUN [OUT]
#       GPU machine: the sparse backward's SHD modules (below) at calibrated
#       activity 1..50%, CUDA graphs, with one --profile run of the dense and
#       the event-driven module at 5%. Files: sparse-bwd-gpu-raw.txt,
#       sparse-bwd-gpu-results.csv, sparse-bwd-gpu-summary.txt.
#   bench/gpu-sparse.sh crossover SNN_RUN [OUT]
#       GPU machine: `snn-run MODULE calibrate --device cuda:0` of the SHD
#       modules with the dispatch (shd128-dispatch: forward; shd128-bwd-
#       dispatch: forward and the sparse backward): per event-driven layer
#       and direction the dense and event-driven times at input densities
#       0.1..50% and the measured crossover, merged into each module's
#       calibration.json under the GPU's architecture (sm_90 on an H100);
#       then `snn-run bench` of each module at 1, 5, 20, 50% with the
#       compile-time and with the calibrated crossovers. Files:
#       sparse-crossover-table.txt (the calibration tables, then the fwd and
#       step times before -> after), sparse-crossover-bench.txt (raw),
#       shd128-dispatch.calibration.json, shd128-bwd-dispatch.calibration.json.
#   bench/gpu-sparse.sh profile SNN_RUN [OUT]
#       GPU machine: where the SHD step's time goes: `snn-run bench` (CUDA
#       graphs) and a per-op `--profile` run (eager, 30 iterations) of the
#       dense, event-driven and sparse-backward modules at calibrated
#       activity 1% and 5%, the latter also with the event layers' input
#       counts in the neuron kernels (--snn-fuse: shd128-bwd-fused,
#       -bwd-event-fused). File: sparse-profile.txt.
#   bench/gpu-sparse.sh tiles SNN_RUN [OUT]
#       GPU machine: event_linear_tiles vs the per-row event_linear kernels
#       on the SHD step at calibrated activity 1, 5, 10% (alternating
#       rounds, CUDA graphs) and a per-op profile of each form at 1% and
#       5%. File: sparse-tiles.txt.
#   bench/gpu-sparse.sh rowbits SNN_RUN [OUT]
#       GPU machine: spikes as row bits (--snn-compile row-bits) against
#       float spikes on the SHD step (tiles modules, default and sm_90
#       chips): the row-bits checks on cuda:0, the gradients bit for bit,
#       the step at calibrated activity 1, 5, 10%. File: sparse-rowbits.txt.
#   bench/gpu-sparse.sh prepare-ab OLD_SNN_OPT
#       here: a change to the generated kernels, old against new: the SHD
#       training modules of `compiler-ab` (sparse backward, --snn-fuse:
#       always event-driven per-row, as sm_90 tiles, and the dispatch;
#       the dense step with --snn-fuse, and without: the speedups' base)
#       compiled by OLD_SNN_OPT into .gpu/sparse/old/ and by build/bin's
#       snn-opt into .gpu/sparse/new/.
#   bench/gpu-sparse.sh compiler-ab SNN_RUN [OUT]
#       GPU machine: those modules, old vs new: the loss and gradients on
#       one batch (bit for bit, and within 1e-6 of each tensor's largest
#       entry; cuda:0, memory plan poisoned), the step at
#       calibrated activity 1, 5, 10% (SNN_AB_DENSITIES; 3 alternating
#       rounds, CUDA graphs), one per-op profile of each at 1%. File:
#       sparse-compiler-ab.txt.
#   bench/gpu-sparse.sh layers SNN_RUN [OUT]
#       GPU machine: per layer size N = 1024, 2048, 4096 (spike input
#       [T*B = 4096, N], W [N, N]) the forward, the weight gradient and the
#       input gradient, event-driven vs our dense path, at densities
#       0.5..50% (`snn-run calibrate` of the layertrain modules: CUDA
#       graphs; the backward at that density of the banded output
#       gradient), with dense torch and torch.sparse (CSR) on the same
#       shapes. Files: sparse-layers-raw.txt, layertrainN.calibration.json,
#       sparse-torch.json, sparse-layers.csv, sparse-layers.md,
#       sparse-layers.png.
#   bench/gpu-sparse.sh cpu SNN_RUN [OUT] [BATCH-SUFFIX]
#       the network's training step on the CPU, dense vs event-driven, at
#       input densities 1, 5, 10, 20, 50%; and the sparse backward's
#       modules (below) at calibrated activity.
# The sparse backward (shd*-bwd-{dense,event,dispatch}): the SHD network
# trained with grad-threshold=$SNN_GRAD_BAND (default 0.003) and
# --snn-sparsify after --snn-autodiff, so that the linear backwards run
# event-driven too; `gpu-bwd` times them, `check` compares the gradients of
# such modules with the dense backward's (sparse_check.py *-backward), their
# weight gradients reading x as bits (spikes; the network input's occupancy
# and values: *-backward-input).
# Input density is forced on the input (snn-run bench --density); hidden
# layers fire at whatever rate the initial weights give.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
g="$root/.gpu/sparse"
mode=${1:-}
densities="0.005 0.01 0.02 0.05 0.1 0.2 0.5"
# The surrogate band of the sparse-backward modules (shd*-bwd-*): at 5%
# activity the linear backwards' output gradients are then 1-5% nonzero
# (bench/results/2026-11-25-cpu2-sparse-backward.md).
grad_band=${SNN_GRAD_BAND:-0.003}
check_bands="1e-7 0.01 0.03 0.1 0.3 1 inf"

layer_model() { # N
  cat <<MLIR
func.func @forward(%x: tensor<32x128x$1xf32>) -> tensor<32x128x$1xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<$1x$1xf32>
  %b = snn.param "fc.bias" {init = #snn.init<uniform>, init_scale = 0.01} : tensor<$1xf32>
  %y = snn.linear %x, %w, %b : tensor<32x128x$1xf32>, tensor<$1x$1xf32>, tensor<$1xf32> -> tensor<32x128x$1xf32>
  return %y : tensor<32x128x$1xf32>
}
MLIR
}

layer_train_model() { # N: two equal N x N layers; fc1's backward is its
  # weight gradient alone (its input is the network's), fc2's is the input
  # and the weight gradient (bench/sparse_layers.py takes the difference).
  cat <<MLIR
func.func @forward(%x: tensor<32x128x$1xf32>) -> tensor<32x128x10xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<$1x$1xf32>
  %h1 = snn.linear %x, %w1 : tensor<32x128x$1xf32>, tensor<$1x$1xf32> -> tensor<32x128x$1xf32>
  %s1 = snn.lif %h1 {k = 0.05, c = 1.0, snn.name = "lif1"} : tensor<32x128x$1xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<$1x$1xf32>
  %h2 = snn.linear %s1, %w2 : tensor<32x128x$1xf32>, tensor<$1x$1xf32> -> tensor<32x128x$1xf32>
  %s2 = snn.lif %h2 {k = 0.05, c = 1.0, snn.name = "lif2"} : tensor<32x128x$1xf32>
  %w3 = snn.param "fc3.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x$1xf32>
  %h3 = snn.linear %s2, %w3 : tensor<32x128x$1xf32>, tensor<10x$1xf32> -> tensor<32x128x10xf32>
  %y = snn.li %h3 {k = 0.05, c = 1.0, snn.name = "out"} : tensor<32x128x10xf32>
  return %y : tensor<32x128x10xf32>
}
MLIR
}

shd_model() { # batch
  local B=$1
  cat <<MLIR
func.func @forward(%x: tensor<100x${B}x700xf32>) -> tensor<100x${B}x20xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<1472x700xf32>
  %h1 = snn.linear %x, %w1 : tensor<100x${B}x700xf32>, tensor<1472x700xf32> -> tensor<100x${B}x1472xf32>
  %s1 = snn.lif %h1 {k = 0.05, c = 1.0, snn.name = "lif1"} : tensor<100x${B}x1472xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<1472x1472xf32>
  %h2 = snn.linear %s1, %w2 : tensor<100x${B}x1472xf32>, tensor<1472x1472xf32> -> tensor<100x${B}x1472xf32>
  %s2 = snn.lif %h2 {k = 0.05, c = 1.0, snn.name = "lif2"} : tensor<100x${B}x1472xf32>
  %w3 = snn.param "fc3.weight" {init = #snn.init<kaiming_uniform>} : tensor<20x1472xf32>
  %h3 = snn.linear %s2, %w3 : tensor<100x${B}x1472xf32>, tensor<20x1472xf32> -> tensor<100x${B}x20xf32>
  %y = snn.li %h3 {k = 0.05, c = 1.0, snn.name = "out"} : tensor<100x${B}x20xf32>
  return %y : tensor<100x${B}x20xf32>
}
MLIR
}

# shd_bench LABEL VARIANT DENSITY ITERATIONS [--profile]: `snn-run bench` of
# shd128-VARIANT on the calibrated weights in $act/w.safetensors, appended
# to $raw under "== [LABEL ]shd128act-VARIANT density=DENSITY".
shd_bench() {
  echo "== ${1:+$1 }shd128act-$2 density=$3" >>"$raw"
  "$run" "$g/shd128-$2.snnmod" bench --device cuda:0 --density "$3" --iterations "$4" \
    --weights "$act/w.safetensors" ${5:-} >>"$raw" 2>&1
}

case "$mode" in
prepare)
  set -e
  opt="${SNN_OPT:-$root/build/bin/snn-opt}"
  rm -rf "$g" && mkdir -p "$g"
  for n in 1024 2048 4096; do
    layer_model $n >"$g/layer$n.mlir"
    "$opt" "$g/layer$n.mlir" --snn-compile="output=$g/layer$n-dense.snnmod target=all" -o /dev/null
    "$opt" "$g/layer$n.mlir" --snn-sparsify="input-is-spikes crossover=1" \
      --snn-compile="output=$g/layer$n-event.snnmod target=all" -o /dev/null
    "$opt" "$g/layer$n.mlir" --snn-sparsify="input-is-spikes target=cuda" \
      --snn-compile="output=$g/layer$n-dispatch.snnmod target=all" -o /dev/null
  done
  # The layers' backward (`layers`): both paths in the module (crossover
  # 0.5) so that `snn-run calibrate` times each.
  for n in 1024 2048 4096; do
    layer_train_model $n >"$g/layertrain$n.mlir"
    "$opt" "$g/layertrain$n.mlir" "--snn-autodiff=optimizer=sgd loss=ce_rate grad-threshold=$grad_band" \
      --snn-sparsify="input-is-spikes crossover=0.5" \
      --snn-compile="output=$g/layertrain$n.snnmod target=cuda" -o /dev/null 2>/dev/null
  done
  for b in 128 16; do
    shd_model $b >"$g/shd$b.mlir"
    ad="--snn-autodiff=optimizer=adam lr=0.001"
    "$opt" "$g/shd$b.mlir" "$ad" --snn-compile="output=$g/shd$b-dense.snnmod target=all" -o /dev/null
    "$opt" "$g/shd$b.mlir" --snn-sparsify="input-is-spikes crossover=1" "$ad" \
      --snn-compile="output=$g/shd$b-event.snnmod target=all" -o /dev/null
    "$opt" "$g/shd$b.mlir" --snn-sparsify="input-is-spikes target=cuda" "$ad" \
      --snn-compile="output=$g/shd$b-dispatch.snnmod target=all" -o /dev/null 2>/dev/null
  done
  # The sparse backward: the band B of every spiking layer, then
  # --snn-sparsify after --snn-autodiff (forward and backward event-driven).
  for b in 128 16; do
    ad="--snn-autodiff=optimizer=adam lr=0.001 grad-threshold=$grad_band"
    "$opt" "$g/shd$b.mlir" "$ad" --snn-compile="output=$g/shd$b-bwd-dense.snnmod target=all" -o /dev/null
    "$opt" "$g/shd$b.mlir" "$ad" --snn-sparsify="input-is-spikes crossover=1" \
      --snn-compile="output=$g/shd$b-bwd-event.snnmod target=all" -o /dev/null 2>/dev/null
    "$opt" "$g/shd$b.mlir" "$ad" --snn-sparsify="input-is-spikes target=$([ $b = 16 ] && echo cpu || echo cuda)" \
      --snn-compile="output=$g/shd$b-bwd-dispatch.snnmod target=all" -o /dev/null 2>/dev/null
    # The same with the event layers' input counts in the neuron kernels
    # (--snn-fuse: no spike_density launches; `profile` compares the two).
    "$opt" "$g/shd$b.mlir" "$ad" --snn-sparsify="input-is-spikes target=$([ $b = 16 ] && echo cpu || echo cuda)" \
      --snn-fuse --snn-compile="output=$g/shd$b-bwd-fused.snnmod target=all" -o /dev/null 2>/dev/null
    "$opt" "$g/shd$b.mlir" "$ad" --snn-sparsify="input-is-spikes crossover=1" \
      --snn-fuse --snn-compile="output=$g/shd$b-bwd-event-fused.snnmod target=all" -o /dev/null 2>/dev/null
  done
  # `tiles`: the same always event-driven and dispatch modules with the
  # wide layers' forward as event_linear_tiles (event-tiles=true): for the
  # default chips (-tiles: 163 KiB of shared memory, tiles of 16 outputs
  # for K = 1472) and for sm_90 only (-sm90: 227 KiB, 32 outputs).
  ad="--snn-autodiff=optimizer=adam lr=0.001 grad-threshold=$grad_band"
  for v in "event-fused:crossover=1" "fused:target=cuda"; do
    name=${v%%:*}; sp="input-is-spikes ${v#*:}"
    "$opt" "$g/shd128.mlir" "$ad" --snn-sparsify="$sp" --snn-fuse \
      --snn-compile="output=$g/shd128-bwd-$name-tiles.snnmod target=cuda event-tiles=true" -o /dev/null 2>/dev/null
    "$opt" "$g/shd128.mlir" "$ad" --snn-sparsify="$sp" --snn-fuse \
      --snn-compile="output=$g/shd128-bwd-$name-sm90.snnmod target=cuda event-tiles=true chips=sm_90" -o /dev/null 2>/dev/null
  done
  # `rowbits`: the always event-driven tiles modules with float spikes
  # (row-bits=false; the modules above write lif1's as row bits), and the
  # row-bits correctness cases (test/Runtime/row-bits.test's, batch 1 too).
  sp="input-is-spikes crossover=1"
  "$opt" "$g/shd128.mlir" "$ad" --snn-sparsify="$sp" --snn-fuse \
    --snn-compile="output=$g/shd128-bwd-event-fused-tiles-floats.snnmod target=cuda event-tiles=true row-bits=false" -o /dev/null 2>/dev/null
  "$opt" "$g/shd128.mlir" "$ad" --snn-sparsify="$sp" --snn-fuse \
    --snn-compile="output=$g/shd128-bwd-event-fused-sm90-floats.snnmod target=cuda event-tiles=true chips=sm_90 row-bits=false" -o /dev/null 2>/dev/null
  mkdir -p "$g/rowbits" "$g/rowbits1"
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/row_bits_check.py" prepare \
    "$opt" "$g/rowbits" 9 5 64 128 512 0.1@0.02 0.3@0.1 inf@0.5 2>/dev/null
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/row_bits_check.py" prepare \
    "$opt" "$g/rowbits1" 7 1 36 96 256 0.3@0.1 inf@1 2>/dev/null
  rm -f "$g"/*.mlir
  bash "$root/bench/gpu-sparse.sh" prepare-check
  echo "prepared $(ls -d "$g"/*.snnmod | wc -l) modules in $g"
  ;;
prepare-check)
  # The correctness cases of `check` only (also part of `prepare`).
  set -e
  opt="${SNN_OPT:-$root/build/bin/snn-opt}"
  rm -rf "$g/check" "$g/check1" "$g"/checkbwd*
  mkdir -p "$g/check" "$g/check1" "$g/checkbwd" "$g/checkbwd1" "$g/checkbwd2" \
    "$g/checkbwd3" "$g/checkbwd4" "$g/checkbwd5" "$g/checkbwdin" "$g/checkbwdin2"
  # Event-driven backwards: small and odd sizes, batch 1, and 12800 rows
  # (gw's event_linear then takes its 12800-event rows in chunks, with
  # compensated sums: the list does not fit in shared memory at once).
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/sparse_check.py" prepare-backward \
    "$opt" "$g/checkbwd" 8 5 67 41 $check_bands
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/sparse_check.py" prepare-backward \
    "$opt" "$g/checkbwd1" 5 1 37 13 0.3 inf
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/sparse_check.py" prepare-backward \
    "$opt" "$g/checkbwd2" 100 128 70 60 0.05 0.3 inf
  # lif1 of 64 and 32 neurons: its backward writes gx's row bits, which
  # the fused lists module's compact_columns reads (12800 rows: 100
  # segments; 7 rows: one partial segment, batch 1).
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/sparse_check.py" prepare-backward \
    "$opt" "$g/checkbwd4" 100 128 70 64 0.05 0.3 inf
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/sparse_check.py" prepare-backward \
    "$opt" "$g/checkbwd5" 7 1 37 32 0.3 inf 1@0
  # The weight gradients read x as bits (event_weight_grad_bits): K = 1100
  # (two columns per thread), spikes at 0 and 97%; and fc1 on the network
  # input (occupancy bits and values 1, 2, 0.5), also over 12800 events in
  # chunks.
  # (with event-tiles=true: fc1's forward, 1100 -> 1100, as event_linear_tiles)
  SPARSE_CHECK_TILES=1 PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/sparse_check.py" prepare-backward \
    "$opt" "$g/checkbwd3" 10 16 1100 1100 0.05 inf 1@0 1@0.97
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/sparse_check.py" prepare-backward-input \
    "$opt" "$g/checkbwdin" 8 5 67 41 0.1@0 0.1@0.02 0.3 1@1 inf
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/sparse_check.py" prepare-backward-input \
    "$opt" "$g/checkbwdin2" 100 128 70 1100 0.05@0.02 0.3@0.05 inf@0.05
  PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/sparse_check.py" prepare "$opt" \
    "$g/check" 4 3 67 29 0 0.001 0.01 0.1 0.5 1
  # (with event-tiles=true: fc1, 700 -> 300, as event_linear_tiles)
  SPARSE_CHECK_TILES=1 PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/sparse_check.py" prepare "$opt" \
    "$g/check1" 8 32 700 300 0.01 0.05 0.2
  ;;
calibrate)
  PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" calibrate \
    "${SNN_RUN:-$root/build/runtime/snn-run}" "$g/shd16-dense.snnmod" "0.01 0.05 0.1 0.2 0.5" \
    "$root/bench/inputs/shd-activity.json"
  ;;
check)
  run=$2
  export SNNRT_MEMORY_PLAN=poison PYTHONPATH="$root/python"
  python3 "$root/test/Runtime/Inputs/sparse_check.py" compare "$run" "$g/check" cuda:0 0 0.001 0.01 0.1 0.5 1
  a=$?
  python3 "$root/test/Runtime/Inputs/sparse_check.py" compare "$run" "$g/check1" cuda:0 0.01 0.05 0.2
  c=$?
  python3 "$root/test/Runtime/Inputs/sparse_check.py" compare-backward "$run" "$g/checkbwd" cuda:0 $check_bands
  e=$?
  python3 "$root/test/Runtime/Inputs/sparse_check.py" compare-backward "$run" "$g/checkbwd1" cuda:0 0.3 inf
  f=$?
  python3 "$root/test/Runtime/Inputs/sparse_check.py" compare-backward "$run" "$g/checkbwd2" cuda:0 0.05 0.3 inf
  h=$?
  python3 "$root/test/Runtime/Inputs/sparse_check.py" compare-backward "$run" "$g/checkbwd3" cuda:0 0.05 inf 1@0 1@0.97
  i=$?
  python3 "$root/test/Runtime/Inputs/sparse_check.py" compare-backward "$run" "$g/checkbwd4" cuda:0 0.05 0.3 inf
  m=$?
  python3 "$root/test/Runtime/Inputs/sparse_check.py" compare-backward "$run" "$g/checkbwd5" cuda:0 0.3 inf 1@0
  n=$?
  python3 "$root/test/Runtime/Inputs/sparse_check.py" compare-backward "$run" "$g/checkbwdin" cuda:0 0.1@0 0.1@0.02 0.3 1@1 inf
  j=$?
  python3 "$root/test/Runtime/Inputs/sparse_check.py" compare-backward "$run" "$g/checkbwdin2" cuda:0 0.05@0.02 0.3@0.05 inf@0.05
  l=$?
  [ $a = 0 ] && [ $c = 0 ] && [ $e = 0 ] && [ $f = 0 ] && [ $h = 0 ] && [ $i = 0 ] && [ $j = 0 ] && [ $l = 0 ] && \
    [ $m = 0 ] && [ $n = 0 ]
  ;;
gpu)
  run=$2; out=${3:-${OUT:-.}}
  raw="$out/sparse-gpu-raw.txt"; : >"$raw"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$raw" 2>&1
  for m in "$g"/layer*.snnmod; do
    for d in $densities; do
      echo "== graphs $(basename "$m" .snnmod) density=$d" >>"$raw"
      "$run" "$m" bench --device cuda:0 --density "$d" --iterations 30 >>"$raw" 2>&1
    done
  done
  for m in "$g"/layer*-dispatch.snnmod; do
    for d in 0.01 0.5; do
      echo "== graphs $(basename "$m" .snnmod)-nocond density=$d" >>"$raw"
      SNNRT_CUDA_CONDITIONAL=0 "$run" "$m" bench --device cuda:0 --density "$d" \
        --iterations 30 >>"$raw" 2>&1
    done
  done
  for m in "$g"/shd128-*.snnmod; do
    for d in 0.01 0.05 0.1 0.2 0.5; do
      echo "== graphs $(basename "$m" .snnmod) density=$d" >>"$raw"
      "$run" "$m" bench --device cuda:0 --density "$d" --iterations 20 >>"$raw" 2>&1
    done
    echo "== $(basename "$m" .snnmod) density=0.05" >>"$raw"
    "$run" "$m" bench --device cuda:0 --density 0.05 --iterations 5 --profile >>"$raw" 2>&1
  done
  act="$(mktemp -d)"
  for d in 0.01 0.05 0.1 0.2 0.5; do
    PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" weights \
      "$root/bench/inputs/shd-activity.json" "$d" "$act/w.safetensors" || break
    PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" input \
      "$d" 100 128 700 "$act/x.npy"
    echo "== activity shd128act density=$d" >>"$raw"
    "$run" "$g/shd128-dispatch.snnmod" infer --device cuda:0 --weights "$act/w.safetensors" \
      --data "$act/x.npy" 2>&1 | grep -E "spike rate|event layer|event-driven crossovers" >>"$raw"
    for v in dense event dispatch; do
      echo "== graphs shd128act-$v density=$d" >>"$raw"
      "$run" "$g/shd128-$v.snnmod" bench --device cuda:0 --density "$d" --iterations 20 \
        --weights "$act/w.safetensors" >>"$raw" 2>&1
    done
  done
  rm -rf "$act"
  python3 "$root/bench/sparse_torch.py" "$densities" >"$out/sparse-torch.json" 2>>"$raw"
  python3 "$root/bench/sparse_report.py" "$raw" "$out/sparse-torch.json" "$out" sparse-gpu
  grep -A6 "^== activity" "$raw" >>"$out/sparse-gpu-summary.txt"
  ;;
gpu-bwd)
  run=$2; out=${3:-${OUT:-.}}
  raw="$out/sparse-bwd-gpu-raw.txt"; : >"$raw"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$raw" 2>&1
  act="$(mktemp -d)"
  for d in 0.01 0.05 0.1 0.2 0.5; do
    PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" weights \
      "$root/bench/inputs/shd-activity.json" "$d" "$act/w.safetensors" || break
    for v in bwd-dense bwd-event bwd-dispatch; do
      shd_bench graphs $v "$d" 20
    done
    if [ "$d" = 0.05 ]; then # the per-op split of the sparse backward
      for v in bwd-dense bwd-event; do
        shd_bench "" $v "$d" 5 --profile
      done
    fi
  done
  rm -rf "$act"
  python3 "$root/bench/sparse_report.py" "$raw" - "$out" sparse-bwd-gpu
  grep -B1 -A12 "profile (cuda:0) backward" "$raw" >>"$out/sparse-bwd-gpu-summary.txt"
  ;;
crossover)
  run=$2; out=${3:-${OUT:-.}}
  table="$out/sparse-crossover-table.txt"; bench="$out/sparse-crossover-bench.txt"
  : >"$table"; : >"$bench"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$table" 2>&1
  status=0
  for v in dispatch bwd-dispatch; do
    m="$g/shd128-$v.snnmod"
    rm -f "$m/calibration.json"
    for d in 0.01 0.05 0.2 0.5; do # the compile-time crossovers first
      echo "== compile-time shd128-$v density=$d" >>"$bench"
      "$run" "$m" bench --device cuda:0 --density "$d" --iterations 20 >>"$bench" 2>&1
    done
    echo "== calibrate shd128-$v" >>"$table"
    "$run" "$m" calibrate --device cuda:0 --iterations 20 >>"$table" 2>&1 || status=1
    cp "$m/calibration.json" "$out/shd128-$v.calibration.json" 2>/dev/null || status=1
    for d in 0.01 0.05 0.2 0.5; do
      echo "== calibrated shd128-$v density=$d" >>"$bench"
      "$run" "$m" bench --device cuda:0 --density "$d" --iterations 20 >>"$bench" 2>&1
    done
  done
  # Step and forward times with the compile-time vs the calibrated crossovers.
  python3 - "$bench" >>"$table" <<'PY'
import json, re, sys
runs, key = {}, None
for line in open(sys.argv[1]):
    m = re.match(r"== (compile-time|calibrated) (\S+) density=(\S+)", line)
    if m:
        key = m.groups()
    elif line.startswith("{") and key:
        runs[key] = json.loads(line)
print("== compile-time vs calibrated crossovers (ms)")
for (source, module, density), r in sorted(runs.items()):
    if source == "compile-time" and ("calibrated", module, density) in runs:
        c = runs[("calibrated", module, density)]
        print(f"{module} density={density} fwd {r['fwd_ms']:.3f} -> {c['fwd_ms']:.3f} "
              f"step {r['step_ms']:.3f} -> {c['step_ms']:.3f}")
PY
  grep -E "^crossover|^wrote|^== |density=" "$table"
  exit $status
  ;;
profile)
  # Where an SHD training step's time goes: per-op eager timings (--profile,
  # 30 iterations so that the first call's setup is a small share) of the
  # dense, the always event-driven and the sparse-backward modules at
  # calibrated activity 1% and 5%, next to their CUDA-graph step times; the
  # sparse-backward modules with the event layers' input counts in separate
  # spike_density kernels (bwd-dispatch, bwd-event) and in the neuron
  # kernels (--snn-fuse: bwd-fused, bwd-event-fused).
  run=$2; out=${3:-${OUT:-.}}
  raw="$out/sparse-profile.txt"; : >"$raw"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$raw" 2>&1
  act="$(mktemp -d)"
  for d in 0.01 0.05; do
    PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" weights \
      "$root/bench/inputs/shd-activity.json" "$d" "$act/w.safetensors" || break
    for v in dense event bwd-dense bwd-dispatch bwd-fused bwd-event bwd-event-fused; do
      shd_bench graphs $v "$d" 20
      shd_bench profile $v "$d" 30 --profile
    done
  done
  rm -rf "$act"
  ;;
tiles)
  # event_linear_tiles against the per-row event_linear kernels: the SHD
  # step (CUDA graphs) at calibrated activity 1, 5, 10%, of the always
  # event-driven and the dispatch modules, per-row (the default), tiles for
  # the default chips (-tiles: 16 outputs for K = 1472) and for sm_90 only
  # (-sm90: 32),
  # in 3 alternating rounds; the dense module once per density; then a
  # per-op profile of each always event-driven form at 1% and 5%.
  run=$2; out=${3:-${OUT:-.}}
  raw="$out/sparse-tiles.txt"; : >"$raw"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$raw" 2>&1
  act="$(mktemp -d)"
  for d in 0.01 0.05 0.1; do
    PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" weights \
      "$root/bench/inputs/shd-activity.json" "$d" "$act/w.safetensors" || break
    shd_bench graphs dense "$d" 20
    for round in 1 2 3; do
      for v in bwd-event-fused bwd-event-fused-tiles bwd-event-fused-sm90 \
               bwd-fused bwd-fused-tiles bwd-fused-sm90; do
        shd_bench "graphs round=$round" $v "$d" 20
      done
    done
    if [ "$d" != 0.1 ]; then
      for v in bwd-event-fused bwd-event-fused-tiles bwd-event-fused-sm90; do
        shd_bench profile $v "$d" 30 --profile
      done
    fi
  done
  rm -rf "$act"
  ;;
prepare-ab)
  set -e
  old=$2; new="${SNN_OPT:-$root/build/bin/snn-opt}"
  rm -rf "$g/old" "$g/new" && mkdir -p "$g/old" "$g/new"
  shd_model 128 >"$g/shd128-ab.mlir"
  ad="--snn-autodiff=optimizer=adam lr=0.001 grad-threshold=$grad_band"
  for side in old new; do
    opt=$old; [ $side = new ] && opt=$new
    d="$g/$side"
    "$opt" "$g/shd128-ab.mlir" "$ad" --snn-sparsify="input-is-spikes crossover=1" --snn-fuse \
      --snn-compile="output=$d/shd128-bwd-event-fused.snnmod target=cuda" -o /dev/null 2>/dev/null
    "$opt" "$g/shd128-ab.mlir" "$ad" --snn-sparsify="input-is-spikes crossover=1" --snn-fuse \
      --snn-compile="output=$d/shd128-bwd-event-fused-sm90.snnmod target=cuda event-tiles=true chips=sm_90" -o /dev/null 2>/dev/null
    "$opt" "$g/shd128-ab.mlir" "$ad" --snn-sparsify="input-is-spikes target=cuda" --snn-fuse \
      --snn-compile="output=$d/shd128-bwd-fused.snnmod target=cuda" -o /dev/null 2>/dev/null
    # The dense step with --snn-fuse (its fusions that do not need
    # --snn-sparsify).
    "$opt" "$g/shd128-ab.mlir" "$ad" --snn-fuse \
      --snn-compile="output=$d/shd128-bwd-dense-fused.snnmod target=cuda" -o /dev/null 2>/dev/null
    # The dense step the speedups are taken against (a change to kernels
    # both paths run, e.g. the neuron scans, moves it too).
    "$opt" "$g/shd128-ab.mlir" "$ad" --snn-compile="output=$d/shd128-bwd-dense.snnmod target=cuda" -o /dev/null
  done
  rm -f "$g/shd128-ab.mlir"
  for m in "$g"/old/*.snnmod; do
    cmp -s "$m/kernels.ptx" "$g/new/$(basename "$m")/kernels.ptx" &&
      echo "$(basename "$m"): PTX unchanged" || echo "$(basename "$m"): PTX changed"
  done
  ;;
compiler-ab)
  run=$2; out=${3:-${OUT:-.}}
  raw="$out/sparse-compiler-ab.txt"; : >"$raw"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$raw" 2>&1
  act="$(mktemp -d)"
  PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" weights \
    "$root/bench/inputs/shd-activity.json" 0.05 "$act/w.safetensors" || exit 1
  PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" input 0.05 100 128 700 "$act/x.npy"
  python3 -c "import numpy as np; np.save('$act/y.npy', np.random.default_rng(5).integers(0, 20, 128).astype(np.int32))"
  vs="bwd-event-fused bwd-event-fused-sm90 bwd-fused bwd-dense-fused bwd-dense"
  echo "== SHD gradients, old vs new compiler (cuda:0, plan poisoned)" >>"$raw"
  for side in old new; do
    for v in $vs; do
      SNNRT_MEMORY_PLAN=poison "$run" "$g/$side/shd128-$v.snnmod" grads --device cuda:0 --weights "$act/w.safetensors" \
        --data "$act/x.npy" --labels "$act/y.npy" --output "$act/$side-$v.safetensors" >>"$raw" 2>&1 || exit 1
    done
  done
  for v in $vs; do
    PYTHONPATH="$root/python" python3 "$root/bench/same_grads.py" "$v: new vs old" \
      "$act/old-$v.safetensors" "$act/new-$v.safetensors" >>"$raw" 2>&1
    # Within 1e-6 of the largest entry (a change that reorders sums).
    PYTHONPATH="$root/python" python3 "$root/test/Runtime/Inputs/grads_close.py" \
      "$act/new-$v.safetensors" "$act/old-$v.safetensors" 1e-6 >>"$raw" 2>&1 ||
      echo "$v: new vs old NOT within 1e-6" >>"$raw"
  done
  for d in ${SNN_AB_DENSITIES:-0.01 0.05 0.1}; do
    PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" weights \
      "$root/bench/inputs/shd-activity.json" "$d" "$act/w.safetensors" || break
    for round in 1 2 3; do
      for v in $vs; do
        for side in old new; do
          echo "== graphs round=$round $side/shd128act-$v density=$d" >>"$raw"
          "$run" "$g/$side/shd128-$v.snnmod" bench --device cuda:0 --density "$d" --iterations 30 \
            --weights "$act/w.safetensors" >>"$raw" 2>&1
        done
      done
    done
  done
  PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" weights \
    "$root/bench/inputs/shd-activity.json" 0.01 "$act/w.safetensors"
  for v in $vs; do
    for side in old new; do
      echo "== profile $side/shd128act-$v density=0.01" >>"$raw"
      "$run" "$g/$side/shd128-$v.snnmod" bench --device cuda:0 --density 0.01 --iterations 30 \
        --weights "$act/w.safetensors" --profile >>"$raw" 2>&1
    done
  done
  rm -rf "$act"
  ;;
rowbits)
  # Spikes as row bits: the row-bits correctness cases on cuda:0 (memory
  # plan poisoned), the SHD gradients of the float and row-bits tiles
  # modules on the same batch (bit for bit), then the SHD step at
  # calibrated activity 1, 5, 10%, float vs row bits, 3 alternating rounds
  # (CUDA graphs), the dense module once per density; one per-op profile of
  # each sm_90 form at 1%. File: sparse-rowbits.txt.
  run=$2; out=${3:-${OUT:-.}}
  raw="$out/sparse-rowbits.txt"; : >"$raw"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$raw" 2>&1
  echo "== row_bits_check compare cuda:0" >>"$raw"
  for c in rowbits:"0.1@0.02 0.3@0.1 inf@0.5" rowbits1:"0.3@0.1 inf@1"; do
    SNNRT_MEMORY_PLAN=poison PYTHONPATH="$root/python" python3 \
      "$root/test/Runtime/Inputs/row_bits_check.py" compare "$run" "$g/${c%%:*}" cuda:0 ${c#*:} >>"$raw" 2>&1
  done
  act="$(mktemp -d)"
  PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" weights \
    "$root/bench/inputs/shd-activity.json" 0.05 "$act/w.safetensors" || exit 1
  PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" input 0.05 100 128 700 "$act/x.npy"
  python3 -c "import numpy as np; np.save('$act/y.npy', np.random.default_rng(5).integers(0, 20, 128).astype(np.int32))"
  echo "== SHD gradients, float vs row-bits spikes (cuda:0, plan poisoned)" >>"$raw"
  vs="bwd-event-fused-tiles-floats bwd-event-fused-tiles bwd-event-fused-sm90-floats bwd-event-fused-sm90"
  for v in $vs; do
    SNNRT_MEMORY_PLAN=poison "$run" "$g/shd128-$v.snnmod" grads --device cuda:0 --weights "$act/w.safetensors" \
      --data "$act/x.npy" --labels "$act/y.npy" --output "$act/$v.safetensors" >>"$raw" 2>&1 || exit 1
  done
  for chips in tiles sm90; do
    PYTHONPATH="$root/python" python3 "$root/bench/same_grads.py" "$chips: row bits vs floats" \
      "$act/bwd-event-fused-$chips-floats.safetensors" "$act/bwd-event-fused-$chips.safetensors" >>"$raw" 2>&1
  done
  for d in 0.01 0.05 0.1; do
    PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" weights \
      "$root/bench/inputs/shd-activity.json" "$d" "$act/w.safetensors" || break
    shd_bench graphs dense "$d" 20
    for round in 1 2 3; do
      for v in $vs; do
        shd_bench "graphs round=$round" $v "$d" 30
      done
    done
  done
  PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" weights \
    "$root/bench/inputs/shd-activity.json" 0.01 "$act/w.safetensors"
  for v in bwd-event-fused-sm90-floats bwd-event-fused-sm90; do
    shd_bench profile $v 0.01 30 --profile
  done
  rm -rf "$act"
  ;;
layers)
  # Per layer size N: the forward, the weight gradient and the input
  # gradient, event-driven vs dense, against input (forward) or output
  # gradient (backward) density: `snn-run calibrate` of the layertrain
  # modules (CUDA graphs, best of 3 alternating rounds), next to dense
  # torch and torch.sparse on the same shapes (bench/sparse_torch.py).
  run=$2; out=${3:-${OUT:-.}}
  raw="$out/sparse-layers-raw.txt"; : >"$raw"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>"$raw" 2>&1
  for n in 1024 2048 4096; do
    m="$g/layertrain$n.snnmod"
    rm -f "$m/calibration.json"
    echo "== calibrate layertrain$n" >>"$raw"
    "$run" "$m" calibrate --device cuda:0 --iterations 20 \
      --densities "$(echo $densities | tr ' ' ,)" >>"$raw" 2>&1 || exit 1
    cp "$m/calibration.json" "$out/layertrain$n.calibration.json"
  done
  python3 "$root/bench/sparse_torch.py" "$densities" >"$out/sparse-torch.json" 2>>"$raw"
  python3 "$root/bench/sparse_layers.py" "$out" "$out/sparse-torch.json" "$out" || exit 1
  ;;
cpu)
  run=$2; out=${3:-${OUT:-.}}; b=${4:-16}
  raw="$out/sparse-cpu-raw.txt"; : >"$raw"
  nproc >>"$raw"
  act="$(mktemp -d)"
  for d in 0.01 0.05 0.1 0.2 0.5; do
    for v in dense event dispatch; do
      echo "== graphs shd$b-$v density=$d" >>"$raw"
      "$run" "$g/shd$b-$v.snnmod" bench --device cpu --density "$d" --iterations 2 >>"$raw" 2>&1
    done
    # The sparse backward at calibrated activity (every layer's input at
    # about the density).
    PYTHONPATH="$root/python" python3 "$root/bench/sparse_activity.py" weights \
      "$root/bench/inputs/shd-activity.json" "$d" "$act/w.safetensors" || break
    for v in bwd-dense bwd-event bwd-dispatch; do
      echo "== graphs shd${b}act-$v density=$d" >>"$raw"
      "$run" "$g/shd$b-$v.snnmod" bench --device cpu --density "$d" --iterations 2 \
        --weights "$act/w.safetensors" >>"$raw" 2>&1
    done
  done
  rm -rf "$act"
  python3 "$root/bench/sparse_report.py" "$raw" - "$out" sparse-cpu
  ;;
*)
  echo "usage: bench/gpu-sparse.sh prepare | calibrate | check SNN_RUN | gpu SNN_RUN [OUT] | gpu-bwd SNN_RUN [OUT] | crossover SNN_RUN [OUT] | profile SNN_RUN [OUT] | tiles SNN_RUN [OUT] | rowbits SNN_RUN [OUT] | layers SNN_RUN [OUT] | cpu SNN_RUN [OUT] [BATCH]" >&2
  exit 2
  ;;
esac
