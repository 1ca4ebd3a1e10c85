func.func @flatten_count(%x: tensor<4x2x3x3xf32>) -> tensor<4x2x8xf32> {
  %y = snn.flatten %x : tensor<4x2x3x3xf32> -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}
