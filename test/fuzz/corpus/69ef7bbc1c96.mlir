func.func @flatten_leading(%x: tensor<4x2x3x3xf32>) -> tensor<4x3x6xf32> {
  %y = snn.flatten %x : tensor<4x2x3x3xf32> -> tensor<4x3x6xf32>
  return %y : tensor<4x3x6xf32>
}
