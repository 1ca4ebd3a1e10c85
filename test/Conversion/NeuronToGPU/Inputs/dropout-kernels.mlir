// A training dropout and its backward (test input of op-kernels.mlir).
func.func @dropout(%x: tensor<2x3x4xf32>, %g: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %y = snn.dropout %x {p = 0.25} : tensor<2x3x4xf32>
  %gx = snn.dropout_bwd %g, %y : tensor<2x3x4xf32>
  return %y, %gx : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
