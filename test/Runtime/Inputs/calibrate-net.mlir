// Spike input (4 steps, batch 2, 96 channels) -> 40 LIF -> 5 LI.
func.func @forward(%x: tensor<4x2x96xf32>) -> tensor<4x2x5xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<40x96xf32>
  %h1 = snn.linear %x, %w1 : tensor<4x2x96xf32>, tensor<40x96xf32> -> tensor<4x2x40xf32>
  %s1 = snn.lif %h1 {k = 0.5, c = 1.0, snn.name = "lif1"} : tensor<4x2x40xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x40xf32>
  %h2 = snn.linear %s1, %w2 : tensor<4x2x40xf32>, tensor<5x40xf32> -> tensor<4x2x5xf32>
  %y = snn.li %h2 {k = 0.5, c = 1.0, snn.name = "out"} : tensor<4x2x5xf32>
  return %y : tensor<4x2x5xf32>
}
