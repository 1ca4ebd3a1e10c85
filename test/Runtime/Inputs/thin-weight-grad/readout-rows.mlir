// A readout over 2048 rows (T = 16, batch 128): 24 inputs -> 32 LIF -> 5 LI.
// The readout's weight gradient gw [5, 32] sums over all 2048 rows: on the
// GPU in 8 chunks of 256 rows (`gw_chunks`).
func.func @forward(%x: tensor<16x128x24xf32>) -> tensor<16x128x5xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<32x24xf32>
  %h1 = snn.linear %x, %w1 : tensor<16x128x24xf32>, tensor<32x24xf32> -> tensor<16x128x32xf32>
  %s1 = snn.lif %h1 {k = 0.2, c = 1.0, v_th = 0.3, snn.name = "lif1"} : tensor<16x128x32xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x32xf32>
  %b2 = snn.param "fc2.bias" {init = #snn.init<zeros>} : tensor<5xf32>
  %h2 = snn.linear %s1, %w2, %b2 : tensor<16x128x32xf32>, tensor<5x32xf32>, tensor<5xf32> -> tensor<16x128x5xf32>
  %y = snn.li %h2 {k = 0.2, c = 1.0, snn.name = "out"} : tensor<16x128x5xf32>
  return %y : tensor<16x128x5xf32>
}
