// linear -> PLIF (one learned leak per feature, decay_input, sigmoid) ->
// linear -> PLIF (one learned leak for the layer, no decay_input, v_leak,
// soft reset, atan) (spike-rate cross-entropy)
func.func @forward(%x: tensor<6x3x8xf32>) -> tensor<6x3x4xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<12x8xf32>
  %b1 = snn.param "fc1.bias" {init = #snn.init<uniform>, init_scale = 0.4} : tensor<12xf32>
  %h1 = snn.linear %x, %w1, %b1 : tensor<6x3x8xf32>, tensor<12x8xf32>, tensor<12xf32> -> tensor<6x3x12xf32>
  %k1 = snn.param "plif1.w" {init = #snn.init<constant>, init_scale = 0.5} : tensor<12xf32>
  %s1 = snn.plif %h1, %k1 {v_th = 0.5} : tensor<6x3x12xf32>, tensor<12xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x12xf32>
  %h2 = snn.linear %s1, %w2 : tensor<6x3x12xf32>, tensor<4x12xf32> -> tensor<6x3x4xf32>
  %k2 = snn.param "plif2.w" {init = #snn.init<constant>, init_scale = -0.5} : tensor<1xf32>
  %o = snn.plif %h2, %k2 {decay_input = false, v_leak = 0.1, v_th = 0.4, reset = #snn.reset<soft>, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<6x3x4xf32>, tensor<1xf32>
  return %o : tensor<6x3x4xf32>
}
