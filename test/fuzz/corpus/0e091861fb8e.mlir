func.func @synapse_leak_range(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %s = snn.cuba_lif %x {k_syn = 2.0} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}
