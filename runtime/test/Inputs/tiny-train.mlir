// The runtime tests' module: x[4, 8, 6] -> linear(16) -> LIF (atan) ->
// linear(2) -> LI readout. The tests compile it with
// --snn-autodiff="loss=ce_membrane optimizer=sgd" --snn-compile="target=cpu".
func.func @forward(%x: tensor<4x8x6xf32>) -> tensor<4x8x2xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<16x6xf32>
  %b1 = snn.param "fc1.bias" {init = #snn.init<uniform>, init_scale = 0.4} : tensor<16xf32>
  %a1 = snn.linear %x, %w1, %b1 : tensor<4x8x6xf32>, tensor<16x6xf32>, tensor<16xf32> -> tensor<4x8x16xf32>
  %s1 = snn.lif %a1 {k = 0.5, c = 1.0, v_th = 0.5, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<4x8x16xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<2x16xf32>
  %b2 = snn.param "fc2.bias" {init = #snn.init<uniform>, init_scale = 0.25} : tensor<2xf32>
  %a2 = snn.linear %s1, %w2, %b2 : tensor<4x8x16xf32>, tensor<2x16xf32>, tensor<2xf32> -> tensor<4x8x2xf32>
  %y = snn.li %a2 {k = 0.2, c = 1.0} : tensor<4x8x2xf32>
  return %y : tensor<4x8x2xf32>
}
