// RUN: snn-opt %s --snn-neuron-to-host=backward | FileCheck %s
// RUN: snn-opt %s --snn-neuron-to-host="backward recompute-chunk=4" | FileCheck %s --check-prefix=RECOMPUTE

// A CPU neuron kernel of 4 x 256 neurons: 128 threads of 8 (one AVX2
// vector each). The step loop runs outside the loop over a block of 128
// threads, so that each step reads 4 KiB of each tensor in order; each
// thread's membrane waits in a stack buffer between steps.
// CHECK-LABEL: func.func @snn_forward_0_lif_fwd_h(
// CHECK-SAME: snn.host_items = 128 : i64
// CHECK: %[[STATE:.*]] = memref.alloca() : memref<128xvector<8xf32>>
// CHECK: scf.for %[[BLOCK:.*]] = %{{.*}} to %[[LAST:.*]] step %c128 {
// CHECK: %[[LEFT:.*]] = arith.subi %[[LAST]], %[[BLOCK]]
// CHECK: %[[COUNT:.*]] = arith.minui %[[LEFT]], %c128
// The initial membranes, then the steps.
// CHECK: scf.for %[[SLOT:.*]] = %c0 to %[[COUNT]] step %c1 {
// CHECK: memref.store %{{.*}}, %[[STATE]][%[[SLOT]]]
// CHECK: scf.for %[[T:.*]] = %c0 to %c13 step %c1 {
// CHECK-NEXT: scf.for %[[ITEM:.*]] = %c0 to %[[COUNT]] step %c1 {
// CHECK: %[[V:.*]] = memref.load %[[STATE]][%[[ITEM]]] : memref<128xvector<8xf32>>
// CHECK: vector.load %arg0
// CHECK: vector.store
// CHECK: memref.store %{{.*}}, %[[STATE]][%[[ITEM]]]

// The backward carries the membrane's gradient the same way, steps in
// reverse.
// CHECK-LABEL: func.func @snn_forward_0_lif_bwd(
// CHECK: memref.alloca() : memref<128xvector<8xf32>>
// CHECK: scf.for %[[T:.*]] = %c0 to %c13 step %c1 {
// CHECK-NEXT: scf.for
// CHECK: arith.subi %c12, %[[T]]

// A backward that recomputes H writes its last chunk before its chunk loop:
// its threads keep their own scans, one after the other.
// RECOMPUTE-LABEL: func.func @snn_forward_0_lif_bwd(
// RECOMPUTE-NOT: memref.alloca
// RECOMPUTE: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 {
// RECOMPUTE: scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args
func.func @forward(%x: tensor<13x4x256xf32>) -> tensor<13x4x256xf32> {
  %s = snn.lif %x {k = 0.5, c = 1.0} : tensor<13x4x256xf32>
  return %s : tensor<13x4x256xf32>
}
