func.func @plif_w(%x: tensor<4x2x3xf32>, %w: tensor<2xf32>) -> tensor<4x2x3xf32> {
  %s = snn.plif %x, %w : tensor<4x2x3xf32>, tensor<2xf32>
  return %s : tensor<4x2x3xf32>
}
