func.func @conv_groups_output(%x: tensor<2x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<2x3x6x6xf32> {
  %y = snn.conv2d %x, %w {groups = 2} : tensor<2x4x8x8xf32>, tensor<3x2x3x3xf32> -> tensor<2x3x6x6xf32>
  return %y : tensor<2x3x6x6xf32>
}
