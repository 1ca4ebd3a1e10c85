// RUN: snn-opt %s --snn-neuron-to-host="save-h=0 backward=0" | FileCheck %s
// RUN: snn-opt %s --snn-neuron-to-host="backward=0" | FileCheck %s --check-prefix=SAVE

// The inference forward of 4 steps keeps each thread's scan (its 4 strided
// streams of x and s suit the prefetchers better than a state buffer).
// CHECK-LABEL: func.func @snn_forward_0_lif_fwd(
// CHECK-NOT: memref.alloca
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args

// The training forward (saving H) takes the steps outside blocks of threads.
// SAVE-LABEL: func.func @snn_forward_0_lif_fwd_h(
// SAVE: memref.alloca() : memref<128xvector<8xf32>>
// SAVE: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// SAVE-NEXT: scf.for
func.func @forward(%x: tensor<4x4x256xf32>) -> tensor<4x4x256xf32> {
  %s = snn.lif %x {k = 0.5, c = 1.0} : tensor<4x4x256xf32>
  return %s : tensor<4x4x256xf32>
}
