// RUN: snn-opt %s | FileCheck %s
// RUN: snn-opt %s | snn-opt | FileCheck %s
// RUN: snn-opt %s -canonicalize | FileCheck %s --check-prefix=CANON

// CHECK-LABEL: func.func @round_trip
// CHECK: snn.transpose %{{.*}} {permutation = array<i64: 0, 1, 3, 4, 2>} : tensor<4x2x3x5x6xf32> -> tensor<4x2x5x6x3xf32>
// CHECK: snn.avg_pool2d %{{.*}} {channels_last, kernel_size = array<i64: 2, 2>} : tensor<4x2x4x6x3xf32> -> tensor<4x2x2x3x3xf32>
// CHECK: snn.max_pool2d_bwd %{{.*}}, %{{.*}} {channels_last, kernel_size = array<i64: 2, 2>} : tensor<4x2x2x3x3xf32> -> tensor<4x2x4x6x3xf32>
func.func @round_trip(%x: tensor<4x2x3x5x6xf32>, %p: tensor<4x2x4x6x3xf32>, %g: tensor<4x2x2x3x3xf32>)
    -> (tensor<4x2x5x6x3xf32>, tensor<4x2x2x3x3xf32>, tensor<4x2x4x6x3xf32>) {
  %t = snn.transpose %x {permutation = array<i64: 0, 1, 3, 4, 2>} : tensor<4x2x3x5x6xf32> -> tensor<4x2x5x6x3xf32>
  %a = snn.avg_pool2d %p {channels_last, kernel_size = array<i64: 2, 2>} : tensor<4x2x4x6x3xf32> -> tensor<4x2x2x3x3xf32>
  %gx = snn.max_pool2d_bwd %g, %p {channels_last, kernel_size = array<i64: 2, 2>} : tensor<4x2x2x3x3xf32> -> tensor<4x2x4x6x3xf32>
  return %t, %a, %gx : tensor<4x2x5x6x3xf32>, tensor<4x2x2x3x3xf32>, tensor<4x2x4x6x3xf32>
}

// A transpose and its inverse cancel; an identity permutation is nothing.
// CANON-LABEL: func.func @fold_pair
// CANON-NOT: snn.transpose
// CANON: return %arg0, %arg0
func.func @fold_pair(%x: tensor<4x2x3x5x6xf32>) -> (tensor<4x2x3x5x6xf32>, tensor<4x2x3x5x6xf32>) {
  %t = snn.transpose %x {permutation = array<i64: 0, 1, 3, 4, 2>} : tensor<4x2x3x5x6xf32> -> tensor<4x2x5x6x3xf32>
  %b = snn.transpose %t {permutation = array<i64: 0, 1, 4, 2, 3>} : tensor<4x2x5x6x3xf32> -> tensor<4x2x3x5x6xf32>
  %i = snn.transpose %x {permutation = array<i64: 0, 1, 2, 3, 4>} : tensor<4x2x3x5x6xf32> -> tensor<4x2x3x5x6xf32>
  return %b, %i : tensor<4x2x3x5x6xf32>, tensor<4x2x3x5x6xf32>
}

// Two transposes that do not cancel become one.
// CANON-LABEL: func.func @compose
// CANON-NEXT: %[[T:.*]] = snn.transpose %arg0 {permutation = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CANON-NEXT: return %[[T]]
func.func @compose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %t = snn.transpose %x {permutation = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %u = snn.transpose %t {permutation = array<i64: 1, 2, 0>} : tensor<3x4x2xf32> -> tensor<4x2x3xf32>
  return %u : tensor<4x2x3xf32>
}
