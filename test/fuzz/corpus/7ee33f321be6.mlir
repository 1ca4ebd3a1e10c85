func.func @lif_rank(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = snn.lif %x : tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}
