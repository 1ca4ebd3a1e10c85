// A small spiking conv net for the time split tests: conv3x3 + LIF + 2x2
// max pooling, conv3x3 + LIF, then a linear LIF layer whose spikes are the
// output, over T = 5 steps (no batch norm, no recurrence: --snn-split-time
// trains it).
func.func @forward(%x: tensor<5x3x1x8x8xf32>) -> tensor<5x3x3xf32> {
  %w1 = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x1x3x3xf32>
  %c1 = snn.conv2d %x, %w1 {padding = array<i64: 1, 1>}
      : tensor<5x3x1x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<5x3x4x8x8xf32>
  %s1 = snn.lif %c1 {k = 0.5, c = 0.5, v_th = 0.5, snn.name = "lif1"} : tensor<5x3x4x8x8xf32>
  %p1 = snn.max_pool2d %s1 {kernel_size = array<i64: 2, 2>}
      : tensor<5x3x4x8x8xf32> -> tensor<5x3x4x4x4xf32>
  %w2 = snn.param "conv2.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x4x3x3xf32>
  %c2 = snn.conv2d %p1, %w2 {padding = array<i64: 1, 1>}
      : tensor<5x3x4x4x4xf32>, tensor<4x4x3x3xf32> -> tensor<5x3x4x4x4xf32>
  %s2 = snn.lif %c2 {k = 0.5, c = 2.0, v_th = 0.25, snn.name = "lif2"} : tensor<5x3x4x4x4xf32>
  %flat = snn.flatten %s2 : tensor<5x3x4x4x4xf32> -> tensor<5x3x64xf32>
  %w3 = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x64xf32>
  %fc = snn.linear %flat, %w3 : tensor<5x3x64xf32>, tensor<3x64xf32> -> tensor<5x3x3xf32>
  %out = snn.lif %fc {k = 0.5, c = 2.0, v_th = 0.25, snn.name = "lif3"} : tensor<5x3x3xf32>
  return %out : tensor<5x3x3xf32>
}
