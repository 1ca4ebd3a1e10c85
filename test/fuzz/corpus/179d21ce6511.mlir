func.func @per_neuron_shape(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %s = snn.lif %x {v_th = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}
