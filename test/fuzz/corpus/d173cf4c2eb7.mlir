func.func @linear_weight_rank(%x: tensor<2x8xf32>, %w: tensor<4x8x1xf32>) -> tensor<2x4xf32> {
  %y = snn.linear %x, %w : tensor<2x8xf32>, tensor<4x8x1xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
