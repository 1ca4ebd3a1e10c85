// A multi-step MLP with a LIF hidden layer and a leaky-integrator readout,
// whose state snn-run --record records.
func.func @forward(%x: tensor<5x2x6xf32>) -> tensor<5x2x3xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x6xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x8xf32>
  %h1 = snn.linear %x, %w1 : tensor<5x2x6xf32>, tensor<8x6xf32> -> tensor<5x2x8xf32>
  %s1 = snn.lif %h1 {k = 0.5, c = 0.5, snn.name = "hidden"} : tensor<5x2x8xf32>
  %h2 = snn.linear %s1, %w2 : tensor<5x2x8xf32>, tensor<3x8xf32> -> tensor<5x2x3xf32>
  %m = snn.li %h2 {k = 0.2, c = 1.0, snn.name = "readout"} : tensor<5x2x3xf32>
  return %m : tensor<5x2x3xf32>
}
