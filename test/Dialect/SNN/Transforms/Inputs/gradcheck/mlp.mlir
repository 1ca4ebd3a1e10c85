// linear -> LIF (sigmoid) -> linear -> LI readout (membrane cross-entropy)
func.func @forward(%x: tensor<5x3x6xf32>) -> tensor<5x3x4xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<7x6xf32>
  %b1 = snn.param "fc1.bias" {init = #snn.init<uniform>, init_scale = 0.4} : tensor<7xf32>
  %h1 = snn.linear %x, %w1, %b1 : tensor<5x3x6xf32>, tensor<7x6xf32>, tensor<7xf32> -> tensor<5x3x7xf32>
  %s1 = snn.lif %h1 {k = 0.3, c = 1.5, v_th = 0.5} : tensor<5x3x7xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x7xf32>
  %h2 = snn.linear %s1, %w2 : tensor<5x3x7xf32>, tensor<4x7xf32> -> tensor<5x3x4xf32>
  %o = snn.li %h2 {k = 0.4, c = 1.0} : tensor<5x3x4xf32>
  return %o : tensor<5x3x4xf32>
}
