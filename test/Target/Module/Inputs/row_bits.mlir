func.func @forward(%x: tensor<6x3x40xf32>) -> tensor<6x3x5xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<96x40xf32>
  %h1 = snn.linear %x, %w1 : tensor<6x3x40xf32>, tensor<96x40xf32> -> tensor<6x3x96xf32>
  %s1 = snn.lif %h1 {k = 0.3, c = 1.0, snn.name = "lif1"} : tensor<6x3x96xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<256x96xf32>
  %h2 = snn.linear %s1, %w2 : tensor<6x3x96xf32>, tensor<256x96xf32> -> tensor<6x3x256xf32>
  %s2 = snn.lif %h2 {k = 0.3, c = 1.0, snn.name = "lif2"} : tensor<6x3x256xf32>
  %w3 = snn.param "fc3.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x256xf32>
  %h3 = snn.linear %s2, %w3 : tensor<6x3x256xf32>, tensor<5x256xf32> -> tensor<6x3x5xf32>
  %o = snn.li %h3 {k = 0.3, c = 1.0, snn.name = "readout"} : tensor<6x3x5xf32>
  return %o : tensor<6x3x5xf32>
}
