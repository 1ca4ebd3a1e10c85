// A spiking output for the rate losses (loss_ce_rate, loss_mse_rate): 7
// classes (odd, below a warp), T = 3, B = 5.
func.func @forward(%x: tensor<3x5x6xf32>) -> tensor<3x5x7xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<7x6xf32>
  %h = snn.linear %x, %w : tensor<3x5x6xf32>, tensor<7x6xf32> -> tensor<3x5x7xf32>
  %s = snn.lif %h {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<3x5x7xf32>
  return %s : tensor<3x5x7xf32>
}
