// linear -> LIF -> dropout(0.3) -> linear -> LI readout: the training step
// draws a dropout mask (a generated kernel) and its backward applies it.
func.func @forward(%x: tensor<5x4x6xf32>) -> tensor<5x4x3xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<40x6xf32>
  %b1 = snn.param "fc1.bias" {init = #snn.init<uniform>, init_scale = 0.4} : tensor<40xf32>
  %h1 = snn.linear %x, %w1, %b1 : tensor<5x4x6xf32>, tensor<40x6xf32>, tensor<40xf32> -> tensor<5x4x40xf32>
  %s1 = snn.lif %h1 {k = 0.3, c = 1.5, v_th = 0.5} : tensor<5x4x40xf32>
  %d1 = snn.dropout %s1 {p = 0.3} : tensor<5x4x40xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x40xf32>
  %h2 = snn.linear %d1, %w2 : tensor<5x4x40xf32>, tensor<3x40xf32> -> tensor<5x4x3xf32>
  %o = snn.li %h2 {k = 0.4, c = 1.0} : tensor<5x4x3xf32>
  return %o : tensor<5x4x3xf32>
}
