// The other spiking models with generated kernels: 24 inputs -> 40 CUBA LIF
// -> 16 PLIF (a learned leak per neuron) -> 5 LI, T = 6, batch 3; both hidden
// layers' spike gradients come from thin linears.
func.func @forward(%x: tensor<6x3x24xf32>) -> tensor<6x3x5xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<40x24xf32>
  %h1 = snn.linear %x, %w1 : tensor<6x3x24xf32>, tensor<40x24xf32> -> tensor<6x3x40xf32>
  %s1 = snn.cuba_lif %h1 {k = 0.2, c = 1.0, k_syn = 0.3, c_syn = 1.5, v_th = 0.3, snn.name = "cuba1"} : tensor<6x3x40xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<16x40xf32>
  %h2 = snn.linear %s1, %w2 : tensor<6x3x40xf32>, tensor<16x40xf32> -> tensor<6x3x16xf32>
  %k2 = snn.param "plif2.w" {init = #snn.init<constant>, init_scale = -0.5} : tensor<16xf32>
  %s2 = snn.plif %h2, %k2 {v_th = 0.3, snn.name = "plif2"} : tensor<6x3x16xf32>, tensor<16xf32>
  %w3 = snn.param "fc3.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x16xf32>
  %h3 = snn.linear %s2, %w3 : tensor<6x3x16xf32>, tensor<5x16xf32> -> tensor<6x3x5xf32>
  %y = snn.li %h3 {k = 0.2, c = 1.0, snn.name = "out"} : tensor<6x3x5xf32>
  return %y : tensor<6x3x5xf32>
}
