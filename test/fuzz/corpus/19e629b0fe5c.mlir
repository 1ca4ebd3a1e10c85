func.func @dropout_p(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = snn.dropout %x {p = 1.0} : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
