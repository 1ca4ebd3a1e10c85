// RUN: snn-opt %s --snn-fold-scale-chains | FileCheck %s
// RUN: snn-opt --help | FileCheck %s --check-prefix=HELP
// HELP: --snn-fold-scale-chains

// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[S:.*]] = snn.scale %[[X]] {scale = -1.200000e+01 : f64} : tensor<2x3xf32>
// CHECK-NEXT: return %[[S]]
func.func @chain(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = snn.scale %x {scale = 2.0} : tensor<2x3xf32>
  %b = snn.scale %a {scale = 3.0} : tensor<2x3xf32>
  %c = snn.scale %b {scale = -2.0} : tensor<2x3xf32>
  return %c : tensor<2x3xf32>
}

// A product of 1 leaves no scale at all.
// CHECK-LABEL: func.func @cancel
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @cancel(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = snn.scale %x {scale = 4.0} : tensor<2x3xf32>
  %b = snn.scale %a {scale = 0.25} : tensor<2x3xf32>
  return %b : tensor<2x3xf32>
}

// The inner scale stays while something else reads it.
// CHECK-LABEL: func.func @shared
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-DAG: %[[A:.*]] = snn.scale %[[X]] {scale = 2.000000e+00 : f64}
// CHECK-DAG: %[[B:.*]] = snn.scale %[[X]] {scale = 1.000000e+01 : f64}
// CHECK: return %[[A]], %[[B]]
func.func @shared(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %a = snn.scale %x {scale = 2.0} : tensor<2x3xf32>
  %b = snn.scale %a {scale = 5.0} : tensor<2x3xf32>
  return %a, %b : tensor<2x3xf32>, tensor<2x3xf32>
}

// Nothing to merge: a single scale, and a scale of another op's result.
// CHECK-LABEL: func.func @no_chain
// CHECK: snn.scale %{{.*}} {scale = 2.000000e+00 : f64}
// CHECK: snn.add
// CHECK: snn.scale %{{.*}} {scale = 3.000000e+00 : f64}
func.func @no_chain(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = snn.scale %x {scale = 2.0} : tensor<2x3xf32>
  %s = snn.add %a, %x : tensor<2x3xf32>
  %b = snn.scale %s {scale = 3.0} : tensor<2x3xf32>
  return %b : tensor<2x3xf32>
}
