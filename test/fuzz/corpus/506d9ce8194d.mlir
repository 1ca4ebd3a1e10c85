func.func @flatten_rank(%x: tensor<2x3xf32>) -> tensor<2x3x1xf32> {
  %y = snn.flatten %x : tensor<2x3xf32> -> tensor<2x3x1xf32>
  return %y : tensor<2x3x1xf32>
}
