// RUN: snn-opt %s | snn-opt | FileCheck %s

// The time-split ops and the state operands/results of neuron layers
// round-trip.

// CHECK-LABEL: func.func @chained_lif
// CHECK: %[[V0:.*]] = snn.recv from prev tag 0 or %{{.*}} : tensor<2x3xf32>
// CHECK: %[[S:.*]], %[[VT:.*]] = snn.lif %{{.*}} init(%[[V0]] : tensor<2x3xf32>) {v_th = 2.000000e+00 : f64} : tensor<4x2x3xf32> -> tensor<2x3xf32>
// CHECK: snn.send %[[VT]] to next tag 0 : tensor<2x3xf32>
// CHECK: %[[G:.*]] = snn.recv from next tag 0 or %{{.*}} : tensor<2x3xf32>
// CHECK: %[[GX:.*]], %[[G0:.*]] = snn.neuron_bwd %{{.*}}, %[[S]] final(%[[G]] : tensor<2x3xf32>) : tensor<4x2x3xf32> -> tensor<2x3xf32>
// CHECK: snn.send %[[G0]] to prev tag 0 : tensor<2x3xf32>
func.func @chained_lif(%x: tensor<4x2x3xf32>, %gy: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %init = arith.constant dense<0.0> : tensor<2x3xf32>
  %v0 = snn.recv from prev tag 0 or %init : tensor<2x3xf32>
  %s, %vT = snn.lif %x init(%v0 : tensor<2x3xf32>) {v_th = 2.0} : tensor<4x2x3xf32> -> tensor<2x3xf32>
  snn.send %vT to next tag 0 : tensor<2x3xf32>
  %g = snn.recv from next tag 0 or %init : tensor<2x3xf32>
  %gx, %g0 = snn.neuron_bwd %gy, %s final(%g : tensor<2x3xf32>) : tensor<4x2x3xf32> -> tensor<2x3xf32>
  snn.send %g0 to prev tag 0 : tensor<2x3xf32>
  return %gx : tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @cuba_and_plif_states
// CHECK: snn.cuba_lif %{{.*}} init(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32>) : tensor<4x2x3xf32> -> tensor<2x3xf32>, tensor<2x3xf32>
// CHECK: snn.plif %{{.*}}, %{{.*}} init(%{{.*}} : tensor<2x3xf32>) : tensor<4x2x3xf32>, tensor<1xf32> -> tensor<2x3xf32>
// CHECK: snn.neuron_bwd %{{.*}}, %{{.*}} final(%{{.*}} : tensor<2x3xf32>) : tensor<4x2x3xf32>, tensor<1xf32> -> tensor<2x3xf32>
// CHECK: snn.li %{{.*}} : tensor<4x2x3xf32> -> tensor<2x3xf32>
func.func @cuba_and_plif_states(%x: tensor<4x2x3xf32>, %i0: tensor<2x3xf32>,
                                %v0: tensor<2x3xf32>, %w: tensor<1xf32>) {
  %s, %iT, %vT = snn.cuba_lif %x init(%i0, %v0 : tensor<2x3xf32>, tensor<2x3xf32>) : tensor<4x2x3xf32> -> tensor<2x3xf32>, tensor<2x3xf32>
  %p, %pT = snn.plif %s, %w init(%v0 : tensor<2x3xf32>) : tensor<4x2x3xf32>, tensor<1xf32> -> tensor<2x3xf32>
  %gx, %gw, %g0 = snn.neuron_bwd %p, %p final(%pT : tensor<2x3xf32>) : tensor<4x2x3xf32>, tensor<1xf32> -> tensor<2x3xf32>
  // A final state without an init one: the first rank's layer.
  %m, %mT = snn.li %x : tensor<4x2x3xf32> -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @mean_over_ranks
// CHECK: %[[P:.*]] = snn.time_sum %{{.*}} {scale = 1.250000e-01 : f64} : tensor<3x2x5xf32> -> tensor<1x2x5xf32>
// CHECK: %[[M:.*]] = snn.all_reduce_sum %[[P]] : tensor<1x2x5xf32>
// CHECK: snn.time_broadcast %[[M]] {scale = 1.250000e-01 : f64} : tensor<1x2x5xf32> -> tensor<3x2x5xf32>
func.func @mean_over_ranks(%y: tensor<3x2x5xf32>) -> tensor<3x2x5xf32> {
  %p = snn.time_sum %y {scale = 0.125 : f64} : tensor<3x2x5xf32> -> tensor<1x2x5xf32>
  %m = snn.all_reduce_sum %p : tensor<1x2x5xf32>
  %g = snn.time_broadcast %m {scale = 0.125 : f64} : tensor<1x2x5xf32> -> tensor<3x2x5xf32>
  return %g : tensor<3x2x5xf32>
}
