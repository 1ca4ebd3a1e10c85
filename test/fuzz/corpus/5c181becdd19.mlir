func.func @dropout_negative(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = snn.dropout %x {p = -0.1} : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
