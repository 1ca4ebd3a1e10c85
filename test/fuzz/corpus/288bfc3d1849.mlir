func.func @bn_channels(%x: tensor<2x3x4x4xf32>, %g: tensor<4xf32>) -> tensor<2x3x4x4xf32> {
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<2x3x4x4xf32>, tensor<4xf32>
  return %y : tensor<2x3x4x4xf32>
}
