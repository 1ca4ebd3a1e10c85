// A leaky-integrator readout over 40 steps (the losses take the time mean
// first from 32 steps on): 7 inputs, a LIF layer of 12, 5 classes, batch 3
// (15 readout neurons: one per thread).
func.func @forward(%x: tensor<40x3x7xf32>) -> tensor<40x3x5xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<12x7xf32>
  %h1 = snn.linear %x, %w1 : tensor<40x3x7xf32>, tensor<12x7xf32> -> tensor<40x3x12xf32>
  %s1 = snn.lif %h1 {k = 0.2, c = 1.0, snn.name = "lif1"} : tensor<40x3x12xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x12xf32>
  %h2 = snn.linear %s1, %w2 : tensor<40x3x12xf32>, tensor<5x12xf32> -> tensor<40x3x5xf32>
  %o = snn.li %h2 {k = 0.1, c = 1.0, snn.name = "readout"} : tensor<40x3x5xf32>
  return %o : tensor<40x3x5xf32>
}
