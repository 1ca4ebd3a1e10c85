func.func @surrogate_alpha(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %s = snn.lif %x {surrogate = #snn.surrogate<atan, alpha = 0.0>} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}
