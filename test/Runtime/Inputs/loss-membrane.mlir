// A membrane readout for the membrane losses (loss_ce_membrane,
// loss_ce_membrane_max): 5 classes, T = 4, batch 1.
func.func @forward(%x: tensor<4x1x6xf32>) -> tensor<4x1x5xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x6xf32>
  %h = snn.linear %x, %w : tensor<4x1x6xf32>, tensor<5x6xf32> -> tensor<4x1x5xf32>
  %o = snn.li %h {k = 0.4, c = 1.0} : tensor<4x1x5xf32>
  return %o : tensor<4x1x5xf32>
}
