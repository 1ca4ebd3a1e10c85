func.func @linear_features(%x: tensor<8x64x700xf32>, %w: tensor<512x784xf32>) -> tensor<8x64x512xf32> {
  %y = snn.linear %x, %w : tensor<8x64x700xf32>, tensor<512x784xf32> -> tensor<8x64x512xf32>
  return %y : tensor<8x64x512xf32>
}
