func.func @bn_param_types(%x: tensor<2x3xf32>, %g: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  %y = "snn.batch_norm"(%x, %g, %b, %g, %g) {spatial_rank = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
