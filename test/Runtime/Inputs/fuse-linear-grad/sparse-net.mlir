// The SHD net's shape at a small size: 20 inputs -> 64 LIF -> 32 LIF -> 4 LI
// readout, T = 8, batch 3; with --snn-sparsify the hidden layers are
// event-driven (lif2's gradient comes from the dense readout backward).
func.func @forward(%x: tensor<8x3x20xf32>) -> tensor<8x3x4xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<64x20xf32>
  %h1 = snn.linear %x, %w1 : tensor<8x3x20xf32>, tensor<64x20xf32> -> tensor<8x3x64xf32>
  %s1 = snn.lif %h1 {k = 0.2, c = 1.0, v_th = 0.3, snn.name = "lif1"} : tensor<8x3x64xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<32x64xf32>
  %h2 = snn.linear %s1, %w2 : tensor<8x3x64xf32>, tensor<32x64xf32> -> tensor<8x3x32xf32>
  %s2 = snn.lif %h2 {k = 0.2, c = 1.0, v_th = 0.3, snn.name = "lif2"} : tensor<8x3x32xf32>
  %w3 = snn.param "fc3.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x32xf32>
  %h3 = snn.linear %s2, %w3 : tensor<8x3x32xf32>, tensor<4x32xf32> -> tensor<8x3x4xf32>
  %y = snn.li %h3 {k = 0.2, c = 1.0, snn.name = "out"} : tensor<8x3x4xf32>
  return %y : tensor<8x3x4xf32>
}
