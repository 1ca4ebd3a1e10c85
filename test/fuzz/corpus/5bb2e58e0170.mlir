func.func @linear_input_rank(%x: tensor<8xf32>, %w: tensor<4x8xf32>) -> tensor<4xf32> {
  %y = snn.linear %x, %w : tensor<8xf32>, tensor<4x8xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
