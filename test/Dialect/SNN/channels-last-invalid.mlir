// RUN: snn-opt %s -split-input-file -verify-diagnostics

func.func @transpose_rank(%x: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  // expected-error @+1 {{permutation [1, 0] of 2 dims for an input of rank 3 and a result of rank 3; all three must agree}}
  %t = snn.transpose %x {permutation = array<i64: 1, 0>} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  return %t : tensor<3x2x4xf32>
}

// -----

func.func @transpose_not_permutation(%x: tensor<2x3x4xf32>) -> tensor<3x3x4xf32> {
  // expected-error @+1 {{permutation [1, 1, 2] is not a permutation of 0..2}}
  %t = snn.transpose %x {permutation = array<i64: 1, 1, 2>} : tensor<2x3x4xf32> -> tensor<3x3x4xf32>
  return %t : tensor<3x3x4xf32>
}

// -----

func.func @transpose_shape(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  // expected-error @+1 {{result has shape [3, 4, 2] but permuting [2, 3, 4] by [2, 0, 1] gives [4, 2, 3]}}
  %t = snn.transpose %x {permutation = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  return %t : tensor<3x4x2xf32>
}

// -----

// Channels last, the window runs over dims -3 and -2: [4, 6] pooled by 2x2
// is [2, 3], the 5 channels stay last.
func.func @pool_channels_last_shape(%x: tensor<2x3x4x6x5xf32>) -> tensor<2x3x4x3x5xf32> {
  // expected-error @+1 {{result has shape [2, 3, 4, 3, 5] but pooling gives [2, 3, 2, 3, 5] (channels_last: [..., OH, OW, C])}}
  %y = snn.avg_pool2d %x {channels_last, kernel_size = array<i64: 2, 2>} : tensor<2x3x4x6x5xf32> -> tensor<2x3x4x3x5xf32>
  return %y : tensor<2x3x4x3x5xf32>
}

// -----

func.func @pool_channels_last_rank(%x: tensor<4x6x5xf32>) -> tensor<2x3x5xf32> {
  // expected-error @+1 {{expects an input [..., H, W, C] with at least one leading (batch) dim, got [4, 6, 5]}}
  %y = snn.max_pool2d %x {channels_last, kernel_size = array<i64: 2, 2>} : tensor<4x6x5xf32> -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

func.func @pool_bwd_channels_last(%g: tensor<2x2x3x5xf32>) -> tensor<2x5x4x6xf32> {
  // expected-error @+1 {{must be [..., OH, OW, C] and [..., H, W, C]}}
  %gx = snn.sum_pool2d_bwd %g {channels_last, kernel_size = array<i64: 2, 2>} : tensor<2x2x3x5xf32> -> tensor<2x5x4x6xf32>
  return %gx : tensor<2x5x4x6xf32>
}
