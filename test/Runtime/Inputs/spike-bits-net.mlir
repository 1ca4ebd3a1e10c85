// conv -> LIF -> conv -> LIF -> flatten -> linear -> LI readout. Both LIF
// layers feed only a weight layer, so with spike-bits their saved spikes are
// bits; 2*3*5*5 = 150 and 2*3*4*5*5 = 600 spikes per step do not fill whole
// words at every step boundary (150 = 4*32 + 22).
func.func @forward(%x: tensor<3x2x1x5x5xf32>) -> tensor<3x2x4xf32> {
  %w1 = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x1x3x3xf32>
  %c1 = snn.conv2d %x, %w1 {padding = array<i64: 1, 1>} : tensor<3x2x1x5x5xf32>, tensor<3x1x3x3xf32> -> tensor<3x2x3x5x5xf32>
  %s1 = snn.lif %c1 {k = 0.5, c = 1.0, v_th = 0.4, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<3x2x3x5x5xf32>
  %w2 = snn.param "conv2.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x3x3x3xf32>
  %b2 = snn.param "conv2.bias" {init = #snn.init<uniform>, init_scale = 0.3} : tensor<4xf32>
  %c2 = snn.conv2d %s1, %w2, %b2 {padding = array<i64: 1, 1>} : tensor<3x2x3x5x5xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<3x2x4x5x5xf32>
  %s2 = snn.lif %c2 {k = 0.4, c = 1.0, v_th = 0.3, reset = #snn.reset<soft>} : tensor<3x2x4x5x5xf32>
  %f = snn.flatten %s2 : tensor<3x2x4x5x5xf32> -> tensor<3x2x100xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x100xf32>
  %h = snn.linear %f, %wf : tensor<3x2x100xf32>, tensor<4x100xf32> -> tensor<3x2x4xf32>
  %o = snn.li %h {k = 0.3, c = 1.0} : tensor<3x2x4xf32>
  return %o : tensor<3x2x4xf32>
}
