// RUN: snn-opt %s --snn-neuron-to-gpu --split-input-file | FileCheck %s
// RUN: not snn-opt %s --snn-neuron-to-gpu="recompute-chunk=4" --split-input-file 2>&1 | FileCheck %s --check-prefix=RECOMPUTE

// The chained kernels lower to PTX like the others, without local memory.
// RUN: snn-opt %s --split-input-file --snn-neuron-to-gpu --convert-scf-to-cf \
// RUN:   --nvvm-attach-target="chip=sm_90 O=3" \
// RUN:   --convert-gpu-to-nvvm="use-bare-ptr-memref-call-conv=1" \
// RUN:   --reconcile-unrealized-casts --gpu-module-to-binary="format=isa" \
// RUN:   | %python %S/Inputs/extract_ptx.py | FileCheck %s --check-prefix=PTX
// PTX: .entry snn_net_0_lif_fwd_h(
// PTX-NOT: .local
// PTX: .entry snn_net_0_lif_bwd(
// PTX-NOT: .local

// RECOMPUTE: error: recompute-chunk does not support a layer split in time (init/final state): its first chunk would need the initial state; compile without recompute-chunk

// A layer split in time (init/final state, --snn-split-time): after the
// usual arguments the forward reads the initial state and writes the final
// one, the backward reads the final state's gradient and writes the initial
// state's ([N] each, in the op's order: i then v for cuba_lif). The scan
// starts from the loaded state and stores what it carries out of the loop.
// CHECK-LABEL: gpu.func @snn_net_0_lif_fwd_h(
// CHECK-SAME: %{{.*}}: memref<256xf32> {llvm.noalias}, %{{.*}}: memref<256xf32> {llvm.noalias}, %{{.*}}: memref<256xf32> {llvm.noalias}, %[[V0:.*]]: memref<64xf32> {llvm.noalias}, %[[VT:.*]]: memref<64xf32> {llvm.noalias})
// CHECK: %[[INIT:.*]] = vector.load %[[V0]]
// CHECK: %[[LOOP:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]])
// CHECK: vector.store %[[LOOP]], %[[VT]]
// CHECK-LABEL: gpu.func @snn_net_0_lif_bwd(
// CHECK-SAME: %{{.*}}: memref<256xf32> {llvm.noalias}, %{{.*}}: memref<256xf32> {llvm.noalias}, %{{.*}}: memref<256xf32> {llvm.noalias}, %[[GVT:.*]]: memref<64xf32> {llvm.noalias}, %[[GV0:.*]]: memref<64xf32> {llvm.noalias})
// CHECK: %[[GINIT:.*]] = vector.load %[[GVT]]
// CHECK: %[[GLOOP:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[GINIT]])
// CHECK: vector.store %[[GLOOP]], %[[GV0]]
func.func @net(%x: tensor<4x2x32xf32>, %v0: tensor<2x32xf32>) -> tensor<4x2x32xf32> {
  %s, %vT = snn.lif %x init(%v0 : tensor<2x32xf32>) {k = 0.5, c = 0.5} : tensor<4x2x32xf32> -> tensor<2x32xf32>
  return %s : tensor<4x2x32xf32>
}

// -----

// cuba_lif: two state tensors each way, the current first.
// CHECK-LABEL: gpu.func @snn_net_0_cuba_lif_fwd_h(
// CHECK-SAME: memref<64xf32> {llvm.noalias}, %{{.*}}: memref<64xf32> {llvm.noalias}, %{{.*}}: memref<64xf32> {llvm.noalias}, %{{.*}}: memref<64xf32> {llvm.noalias})
// CHECK-LABEL: gpu.func @snn_net_0_cuba_lif_bwd(
// CHECK-SAME: memref<64xf32> {llvm.noalias}, %{{.*}}: memref<64xf32> {llvm.noalias}, %{{.*}}: memref<64xf32> {llvm.noalias}, %{{.*}}: memref<64xf32> {llvm.noalias})
func.func @net(%x: tensor<4x2x32xf32>, %i0: tensor<2x32xf32>, %v0: tensor<2x32xf32>) -> tensor<4x2x32xf32> {
  %s, %iT, %vT = snn.cuba_lif %x init(%i0, %v0 : tensor<2x32xf32>, tensor<2x32xf32>) {k = 0.5, c = 0.5} : tensor<4x2x32xf32> -> tensor<2x32xf32>, tensor<2x32xf32>
  return %s : tensor<4x2x32xf32>
}
