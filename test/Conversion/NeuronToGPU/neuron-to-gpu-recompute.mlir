// RUN: snn-opt %s --snn-neuron-to-gpu="recompute-chunk=4" --split-input-file --verify-diagnostics | FileCheck %s
// RUN: not snn-opt %s --snn-neuron-to-gpu="recompute-chunk=65" --split-input-file 2>&1 | FileCheck %s --check-prefix=CHUNK

// CHUNK: error: recompute-chunk must be in [0, 64] (0: save H), not 65

// Recompute (T = 12, chunks of 4): the forward saves the membrane before
// steps 4 and 8 ([2, N] checkpoints) instead of H; the backward reads gs, X
// and the checkpoints: the last chunk first (its start from checkpoint 1),
// then a loop over the other two in reverse, each re-running its 4 steps from
// v_init (chunk 0) or its checkpoint before the 4 reverse steps.
// CHECK-LABEL: gpu.func @snn_net_0_lif_fwd_h(
// CHECK-SAME: %{{.*}}: memref<768xf32> {llvm.noalias}, %{{.*}}: memref<768xf32> {llvm.noalias}, %[[CK:.*]]: memref<128xf32> {llvm.noalias})
// CHECK: arith.remui %{{.*}}, %c4 : index
// CHECK: scf.if
// CHECK: vector.store %{{.*}}, %[[CK]]
// CHECK-LABEL: gpu.func @snn_net_0_lif_bwd(
// CHECK-SAME: %[[GS:.*]]: memref<768xf32> {llvm.noalias}, %[[X:.*]]: memref<768xf32> {llvm.noalias}, %[[CKB:.*]]: memref<128xf32> {llvm.noalias}, %[[GX:.*]]: memref<768xf32> {llvm.noalias})
// CHECK-COUNT-4: vector.load %[[X]]
// CHECK-COUNT-4: vector.load %[[GS]]
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args
// CHECK: scf.if
// CHECK: vector.load %[[CKB]]
// CHECK-COUNT-4: vector.load %[[X]]
// CHECK-COUNT-4: vector.store %{{.*}}, %[[GX]]
func.func @net(%x: tensor<12x2x32xf32>) -> tensor<12x2x32xf32> {
  %s = snn.lif %x {k = 0.5, c = 0.5, v_th = 1.0} : tensor<12x2x32xf32>
  return %s : tensor<12x2x32xf32>
}

// -----

func.func @net(%y: tensor<40x2x4xf32>) -> tensor<40x2x4xf32> {
  // expected-error @below {{recompute-chunk supports lif, if and li layers; a cuba_lif layer would need its synaptic current checkpointed too}}
  %s = snn.cuba_lif %y {k = 0.5, c = 1.0, k_syn = 0.5, c_syn = 1.0} : tensor<40x2x4xf32>
  return %s : tensor<40x2x4xf32>
}
