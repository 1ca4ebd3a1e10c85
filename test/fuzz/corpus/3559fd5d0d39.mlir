func.func @neurons_step(%x: tensor<2x3xf32>, %v: tensor<2x3xf32>, %i: tensor<2x3xf32>,
                        %w: tensor<1xf32>) -> tensor<2x3xf32> {
  %s0, %v0 = snn.lif_step %x, %v {k = 0.1} : tensor<2x3xf32>
  %s1, %v1 = snn.if_step %x, %v0 {reset = #snn.reset<soft>} : tensor<2x3xf32>
  %s2, %v2 = snn.plif_step %x, %v1, %w : tensor<2x3xf32>, tensor<1xf32>
  %v3 = snn.li_step %x, %v2 : tensor<2x3xf32>
  %s4, %i4, %v4 = snn.cuba_lif_step %x, %i, %v3 {k_syn = 0.3} : tensor<2x3xf32>
  return %v4 : tensor<2x3xf32>
}
