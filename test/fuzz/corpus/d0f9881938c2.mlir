func.func @bn_momentum(%x: tensor<2x3xf32>, %g: tensor<3xf32>) -> tensor<2x3xf32> {
  %y = snn.batch_norm %x, %g, %g, %g, %g {spatial_rank = 0, momentum = 1.5} : tensor<2x3xf32>, tensor<3xf32>
  return %y : tensor<2x3xf32>
}
