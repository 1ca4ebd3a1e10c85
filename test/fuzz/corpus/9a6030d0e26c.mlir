func.func @conv_kernel_too_large(%x: tensor<2x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x1x1xf32> {
  %y = snn.conv2d %x, %w : tensor<2x3x2x2xf32>, tensor<4x3x3x3xf32> -> tensor<2x4x1x1xf32>
  return %y : tensor<2x4x1x1xf32>
}
