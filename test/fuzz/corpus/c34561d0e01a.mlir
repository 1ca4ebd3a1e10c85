func.func @leak_range_per_neuron(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %s = snn.li %x {k = dense<[0.5, -0.5, 0.1]> : tensor<3xf32>} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}
