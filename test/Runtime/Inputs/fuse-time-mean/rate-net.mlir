// A spiking output layer whose rate the loss reads (ce_rate, mse_rate), 36
// steps: 6 inputs, 8 output neurons, batch 4 (32 neurons: 4 per thread).
func.func @forward(%x: tensor<36x4x6xf32>) -> tensor<36x4x8xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x6xf32>
  %h = snn.linear %x, %w : tensor<36x4x6xf32>, tensor<8x6xf32> -> tensor<36x4x8xf32>
  %s = snn.lif %h {k = 0.3, c = 1.0, snn.name = "out"} : tensor<36x4x8xf32>
  return %s : tensor<36x4x8xf32>
}
