// Event-driven weight gradients for event-bits-kernels.test (on bits) and
// event-lists-kernels.test (on row lists): fc1
// reads the network input (occupancy bits and values; K = 70, one column
// per thread, 10000 events in one list), fc2 lif1's spikes (K = 1100: two
// columns per thread, its 10000 events in chunks).
func.func @forward(%x: tensor<100x100x70xf32>) -> tensor<100x100x5xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<1100x70xf32>
  %h1 = snn.linear %x, %w1 : tensor<100x100x70xf32>, tensor<1100x70xf32> -> tensor<100x100x1100xf32>
  %s1 = snn.lif %h1 {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<100x100x1100xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x1100xf32>
  %h2 = snn.linear %s1, %w2 : tensor<100x100x1100xf32>, tensor<5x1100xf32> -> tensor<100x100x5xf32>
  %s2 = snn.lif %h2 {k = 0.5, c = 0.5, snn.name = "lif2"} : tensor<100x100x5xf32>
  return %s2 : tensor<100x100x5xf32>
}
