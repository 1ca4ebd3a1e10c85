func.func @bn_rank(%x: tensor<3x4x4xf32>, %g: tensor<3xf32>) -> tensor<3x4x4xf32> {
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<3x4x4xf32>, tensor<3xf32>
  return %y : tensor<3x4x4xf32>
}
