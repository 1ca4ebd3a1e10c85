// RUN: snn-opt %s --snn-fuse-elementwise | FileCheck %s
// RUN: snn-opt --help | FileCheck %s --check-prefix=HELP
// HELP: --snn-fuse-elementwise

// The scale moves into c (default 0.5 for lif, 1 for if); the reset mode does
// not matter since c scales only the input.
// CHECK-LABEL: func.func @scalar_gain
// CHECK-SAME: (%[[X:.*]]: tensor<4x2x3xf32>)
// CHECK-NOT: snn.scale
// CHECK: %[[A:.*]] = snn.lif %[[X]] {c = 1.500000e+00 : f64} : tensor<4x2x3xf32>
// CHECK: %[[B:.*]] = snn.lif %[[X]] {c = 7.500000e-01 : f64, reset = #snn.reset<soft>} : tensor<4x2x3xf32>
// CHECK: %[[C:.*]] = snn.if %[[X]] {c = -2.000000e+00 : f64, detach_reset} : tensor<4x2x3xf32>
// CHECK: %[[D:.*]] = snn.li %[[X]] {c = 3.750000e-01 : f64, k = 1.000000e-01 : f64} : tensor<4x2x3xf32>
// CHECK: %[[E:.*]] = snn.cuba_lif %[[X]] {c_syn = 6.000000e+00 : f64} : tensor<4x2x3xf32>
func.func @scalar_gain(%x: tensor<4x2x3xf32>)
    -> (tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>) {
  %s3 = snn.scale %x {scale = 3.0} : tensor<4x2x3xf32>
  %a = snn.lif %s3 : tensor<4x2x3xf32>
  %b = snn.lif %s3 {c = 0.25, reset = #snn.reset<soft>} : tensor<4x2x3xf32>
  %m2 = snn.scale %x {scale = -2.0} : tensor<4x2x3xf32>
  %c = snn.if %m2 {detach_reset} : tensor<4x2x3xf32>
  %d = snn.li %s3 {k = 0.1, c = 0.125} : tensor<4x2x3xf32>
  %s6 = snn.scale %x {scale = 6.0} : tensor<4x2x3xf32>
  %e = snn.cuba_lif %s6 : tensor<4x2x3xf32>
  return %a, %b, %c, %d, %e : tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>
}

// A per-neuron gain is scaled element by element; a chain of scales folds
// step by step.
// CHECK-LABEL: func.func @per_neuron_gain
// CHECK-SAME: (%[[X:.*]]: tensor<4x2x3xf32>)
// CHECK-NOT: snn.scale
// CHECK: snn.lif %[[X]] {c = dense<[5.000000e-01, -1.000000e+00, 2.000000e+00]> : tensor<3xf32>} : tensor<4x2x3xf32>
func.func @per_neuron_gain(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %a = snn.scale %x {scale = 0.5} : tensor<4x2x3xf32>
  %b = snn.scale %a {scale = 2.0} : tensor<4x2x3xf32>
  %s = snn.lif %b {c = dense<[0.5, -1.0, 2.0]> : tensor<3xf32>} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

// Step forms inside a time loop fold the same way.
// CHECK-LABEL: func.func @step_form
// CHECK: ^bb0(%[[XT:.*]]: tensor<2x3xf32>, %[[V:.*]]: tensor<2x3xf32>, %[[I:.*]]: tensor<2x3xf32>, %[[U:.*]]: tensor<2x3xf32>):
// CHECK-NOT: snn.scale
// CHECK: snn.lif_step %[[XT]], %[[V]] {c = 1.000000e+00 : f64}
// CHECK: snn.cuba_lif_step %[[XT]], %[[I]], %[[U]] {c_syn = 2.000000e+00 : f64}
func.func @step_form(%x: tensor<5x2x3xf32>, %z: tensor<2x3xf32>) -> tensor<5x2x3xf32> {
  %out:4 = snn.time_loop ins(%x : tensor<5x2x3xf32>) iter_args(%z, %z, %z : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
      -> tensor<5x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %v: tensor<2x3xf32>, %i: tensor<2x3xf32>, %u: tensor<2x3xf32>):
    %sc = snn.scale %xt {scale = 2.0} : tensor<2x3xf32>
    %s, %vn = snn.lif_step %sc, %v : tensor<2x3xf32>
    %s2, %in, %un = snn.cuba_lif_step %sc, %i, %u : tensor<2x3xf32>
    snn.yield %s2, %vn, %in, %un : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %out#0 : tensor<5x2x3xf32>
}

// Negative cases: PLIF's gain is sigmoid(w) or 1, not an attribute; a scale
// with another user stays for that user; a scale that does not feed a
// neuron's input is left alone.
// CHECK-LABEL: func.func @not_folded
// CHECK: %[[S:.*]] = snn.scale %{{.*}} {scale = 3.000000e+00 : f64}
// CHECK: snn.plif %[[S]], %{{.*}} : tensor<4x2x3xf32>, tensor<1xf32>
// CHECK: snn.lif %{{.*}} {c = 1.500000e+00 : f64}
// CHECK: snn.linear %[[S]]
func.func @not_folded(%x: tensor<4x2x3xf32>, %w: tensor<1xf32>, %fc: tensor<3x3xf32>)
    -> (tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>) {
  %s = snn.scale %x {scale = 3.0} : tensor<4x2x3xf32>
  %p = snn.plif %s, %w : tensor<4x2x3xf32>, tensor<1xf32>
  %l = snn.lif %s : tensor<4x2x3xf32>
  %y = snn.linear %s, %fc : tensor<4x2x3xf32>, tensor<3x3xf32> -> tensor<4x2x3xf32>
  return %p, %l, %y : tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>
}
