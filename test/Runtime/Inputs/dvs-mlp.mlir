// A spiking MLP on DVS128 Gesture pooled to 8x8: [2, 8, 8] = 128 input
// channels per step (polarity, y, x), 11 gesture classes.
func.func @forward(%x: tensor<8x4x128xf32>) -> tensor<8x4x11xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<32x128xf32>
  %h1 = snn.linear %x, %w1 : tensor<8x4x128xf32>, tensor<32x128xf32> -> tensor<8x4x32xf32>
  %s1 = snn.lif %h1 {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<8x4x32xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<11x32xf32>
  %h2 = snn.linear %s1, %w2 : tensor<8x4x32xf32>, tensor<11x32xf32> -> tensor<8x4x11xf32>
  %out = snn.li %h2 {k = 0.5, c = 0.5, snn.name = "readout"} : tensor<8x4x11xf32>
  return %out : tensor<8x4x11xf32>
}
