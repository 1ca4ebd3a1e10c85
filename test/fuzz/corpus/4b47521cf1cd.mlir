func.func @conv_groups_input(%x: tensor<2x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<2x4x6x6xf32> {
  %y = snn.conv2d %x, %w {groups = 2} : tensor<2x3x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}
