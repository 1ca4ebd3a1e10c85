// RUN: snn-opt %s --snn-neuron-to-host | FileCheck %s

// A host neuron kernel runs the GPU grid's threads [begin, end), the end
// clamped to its thread count: N = 12 neurons, 4 per thread, 3 threads.
// Its grain (threads worth a CPU thread) is 16384 neuron steps / (T W).
// CHECK-LABEL: func.func @snn_forward_0_lif_fwd_h(
// CHECK-SAME: memref<48xf32>, %{{.*}}: memref<48xf32>, %{{.*}}: memref<48xf32>, %[[BEGIN:[^:]*]]: index, %[[END:[^:]*]]: index)
// CHECK-SAME: snn.host_grain = 1024 : i64, snn.host_items = 3 : i64
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[LO:.*]] = arith.maxsi %[[BEGIN]], %[[C0]]
// CHECK: %[[FIRST:.*]] = arith.minsi %[[LO]], %[[C3]]
// CHECK: %[[HI:.*]] = arith.maxsi %[[END]], %[[C0]]
// CHECK: %[[LAST:.*]] = arith.minsi %[[HI]], %[[C3]]
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %[[LAST]]
// CHECK-LABEL: func.func @snn_forward_0_lif_bwd(
// CHECK-SAME: %{{[^:]*}}: index, %{{[^:]*}}: index)
// CHECK-SAME: snn.host_items = 3 : i64
func.func @forward(%x: tensor<4x2x6xf32>) -> tensor<4x2x6xf32> {
  %s = snn.lif %x {k = 0.5, c = 1.0} : tensor<4x2x6xf32>
  return %s : tensor<4x2x6xf32>
}
