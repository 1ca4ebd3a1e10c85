func.func @neuron_types(%x: tensor<2x3xf32>, %v: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %s, %vn = "snn.lif_step"(%x, %v) : (tensor<2x3xf32>, tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>)
  return %s : tensor<2x3xf32>
}
