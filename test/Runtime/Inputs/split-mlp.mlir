// A small spiking MLP for the time split tests (--snn-split-time): two LIF
// layers and a leaky readout over T = 7 steps, which 2 and 3 ranks do not
// divide. The thresholds make both LIF layers fire on inputs in [0, 4).

func.func @forward(%x: tensor<7x4x6xf32>) -> tensor<7x4x4xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x6xf32>
  %b1 = snn.param "fc1.bias" {init = #snn.init<uniform>, init_scale = 0.25} : tensor<8xf32>
  %h1 = snn.linear %x, %w1, %b1
      : tensor<7x4x6xf32>, tensor<8x6xf32>, tensor<8xf32> -> tensor<7x4x8xf32>
  %s1 = snn.lif %h1 {k = 0.5, c = 0.5, v_th = 0.5, snn.name = "lif1"} : tensor<7x4x8xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x8xf32>
  %h2 = snn.linear %s1, %w2 : tensor<7x4x8xf32>, tensor<8x8xf32> -> tensor<7x4x8xf32>
  %s2 = snn.lif %h2 {k = 0.5, c = 2.0, v_th = 0.25, snn.name = "lif2"} : tensor<7x4x8xf32>
  %w3 = snn.param "fc3.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x8xf32>
  %h3 = snn.linear %s2, %w3 : tensor<7x4x8xf32>, tensor<4x8xf32> -> tensor<7x4x4xf32>
  %out = snn.li %h3 {k = 0.5, c = 0.5, snn.name = "readout"} : tensor<7x4x4xf32>
  return %out : tensor<7x4x4xf32>
}
