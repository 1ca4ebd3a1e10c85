// The feed-forward SHD-sized network of issue 15's benchmarks: 700 input
// channels, two LIF layers of 1472 neurons (2944 in all, the IPU poster's
// size), a leaky-integrator readout of 20 classes; T = 100, batch 128.
func.func @forward(%x: tensor<100x128x700xf32>) -> tensor<100x128x20xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<1472x700xf32>
  %h1 = snn.linear %x, %w1 : tensor<100x128x700xf32>, tensor<1472x700xf32> -> tensor<100x128x1472xf32>
  %s1 = snn.lif %h1 {k = 0.1, c = 1.0, snn.name = "lif1"} : tensor<100x128x1472xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<1472x1472xf32>
  %h2 = snn.linear %s1, %w2 : tensor<100x128x1472xf32>, tensor<1472x1472xf32> -> tensor<100x128x1472xf32>
  %s2 = snn.lif %h2 {k = 0.1, c = 1.0, snn.name = "lif2"} : tensor<100x128x1472xf32>
  %w3 = snn.param "fc3.weight" {init = #snn.init<kaiming_uniform>} : tensor<20x1472xf32>
  %h3 = snn.linear %s2, %w3 : tensor<100x128x1472xf32>, tensor<20x1472xf32> -> tensor<100x128x20xf32>
  %o = snn.li %h3 {k = 0.1, c = 1.0, snn.name = "readout"} : tensor<100x128x20xf32>
  return %o : tensor<100x128x20xf32>
}
