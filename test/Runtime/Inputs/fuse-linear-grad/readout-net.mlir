// 24 inputs -> 40 LIF -> 16 LIF -> 5 LI
// readout, T = 6, batch 3: both hidden layers' spike gradients come from a
// thin linear backward (16 and 5 outputs), which --snn-fuse moves into
// their neuron backwards.
func.func @forward(%x: tensor<6x3x24xf32>) -> tensor<6x3x5xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<40x24xf32>
  %h1 = snn.linear %x, %w1 : tensor<6x3x24xf32>, tensor<40x24xf32> -> tensor<6x3x40xf32>
  %s1 = snn.lif %h1 {k = 0.2, c = 1.0, v_th = 0.3, snn.name = "lif1"} : tensor<6x3x40xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<16x40xf32>
  %b2 = snn.param "fc2.bias" {init = #snn.init<zeros>} : tensor<16xf32>
  %h2 = snn.linear %s1, %w2, %b2 : tensor<6x3x40xf32>, tensor<16x40xf32>, tensor<16xf32> -> tensor<6x3x16xf32>
  %s2 = snn.lif %h2 {k = 0.2, c = 1.0, v_th = 0.3, snn.name = "lif2"} : tensor<6x3x16xf32>
  %w3 = snn.param "fc3.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x16xf32>
  %h3 = snn.linear %s2, %w3 : tensor<6x3x16xf32>, tensor<5x16xf32> -> tensor<6x3x5xf32>
  %y = snn.li %h3 {k = 0.2, c = 1.0, snn.name = "out"} : tensor<6x3x5xf32>
  return %y : tensor<6x3x5xf32>
}
