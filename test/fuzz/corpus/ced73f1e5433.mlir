func.func @conv_weight_rank(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<2x4x6x6xf32> {
  %y = snn.conv2d %x, %w : tensor<2x3x8x8xf32>, tensor<4x3x3xf32> -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}
