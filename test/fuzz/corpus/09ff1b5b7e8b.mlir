func.func @linear_result(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x5xf32> {
  %y = snn.linear %x, %w : tensor<2x8xf32>, tensor<4x8xf32> -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}
