func.func @leak_range(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %s = snn.lif %x {k = 1.5} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}
