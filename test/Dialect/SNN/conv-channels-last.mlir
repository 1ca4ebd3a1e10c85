// RUN: snn-opt %s | FileCheck %s
// RUN: snn-opt %s | snn-opt | FileCheck %s
// RUN: snn-opt %s -mlir-print-op-generic | snn-opt | FileCheck %s

// Channels-last (NHWC) convolutions: x [T, B, H, W, C], w [O, KH, KW, C],
// y [T, B, OH, OW, O]; the backward carries the attribute too.

// CHECK-LABEL: func.func @nhwc
func.func @nhwc(%x: tensor<2x3x8x6x3xf32>, %gy: tensor<2x3x4x3x5xf32>)
    -> (tensor<2x3x4x3x5xf32>, tensor<2x3x8x6x3xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>) {
  %w = snn.param "conv.weight" : tensor<5x3x3x3xf32>
  %b = snn.param "conv.bias" : tensor<5xf32>
  // CHECK: snn.conv2d %{{.*}}, %{{.*}}, %{{.*}} {channels_last, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<2x3x8x6x3xf32>, tensor<5x3x3x3xf32>, tensor<5xf32> -> tensor<2x3x4x3x5xf32>
  %y = snn.conv2d %x, %w, %b {channels_last, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>}
       : tensor<2x3x8x6x3xf32>, tensor<5x3x3x3xf32>, tensor<5xf32> -> tensor<2x3x4x3x5xf32>
  // CHECK: snn.conv2d_bwd %{{.*}}, %{{.*}}, %{{.*}} {channels_last, has_bias = true, need_gx = true, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}
  %gx, %gw, %gb = snn.conv2d_bwd %gy, %x, %w {channels_last, has_bias = true, need_gx = true, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>}
      : tensor<2x3x4x3x5xf32>, tensor<2x3x8x6x3xf32>, tensor<5x3x3x3xf32> -> tensor<2x3x8x6x3xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>
  return %y, %gx, %gw, %gb : tensor<2x3x4x3x5xf32>, tensor<2x3x8x6x3xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>
}

// Asymmetric padding and dilation, no bias, a [N, H, W, C] input.
// CHECK-LABEL: func.func @nhwc_asymmetric
func.func @nhwc_asymmetric(%x: tensor<4x7x5x2xf32>, %w: tensor<6x2x2x2xf32>) -> tensor<4x7x4x6xf32> {
  // CHECK: snn.conv2d %{{.*}}, %{{.*}} {channels_last, dilation = array<i64: 1, 2>, padding = array<i64: 0, 1, 1, 0>} : tensor<4x7x5x2xf32>, tensor<6x2x2x2xf32> -> tensor<4x7x4x6xf32>
  %y = snn.conv2d %x, %w {channels_last, padding = array<i64: 0, 1, 1, 0>, dilation = array<i64: 1, 2>}
       : tensor<4x7x5x2xf32>, tensor<6x2x2x2xf32> -> tensor<4x7x4x6xf32>
  return %y : tensor<4x7x4x6xf32>
}
