// SpikingJelly's 784-128-10 MLP of bench/sj_equivalence.py: LIFNode(tau=2,
// decay_input, v_th=1, hard reset to 0, Sigmoid(alpha=4)), T=4, batch 8.
func.func @forward(%x: tensor<4x8x784xf32>) -> tensor<4x8x10xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<128x784xf32>
  %b1 = snn.param "fc1.bias" : tensor<128xf32>
  %h1 = snn.linear %x, %w1, %b1 : tensor<4x8x784xf32>, tensor<128x784xf32>, tensor<128xf32> -> tensor<4x8x128xf32>
  %s1 = snn.lif %h1 {k = 0.5, c = 0.5, v_th = 1.0, v_reset = 0.0, surrogate = #snn.surrogate<sigmoid, alpha = 4.0>, snn.name = "lif1"} : tensor<4x8x128xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x128xf32>
  %b2 = snn.param "fc2.bias" : tensor<10xf32>
  %h2 = snn.linear %s1, %w2, %b2 : tensor<4x8x128xf32>, tensor<10x128xf32>, tensor<10xf32> -> tensor<4x8x10xf32>
  %s2 = snn.lif %h2 {k = 0.5, c = 0.5, v_th = 1.0, v_reset = 0.0, surrogate = #snn.surrogate<sigmoid, alpha = 4.0>, snn.name = "lif2"} : tensor<4x8x10xf32>
  return %s2 : tensor<4x8x10xf32>
}
