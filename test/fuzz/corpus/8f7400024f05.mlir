func.func @linear_bias(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<5xf32>) -> tensor<2x4xf32> {
  %y = snn.linear %x, %w, %b : tensor<2x8xf32>, tensor<4x8xf32>, tensor<5xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
