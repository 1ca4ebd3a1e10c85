// A small spiking conv net for the data parallel tests (BATCH: see
// dp-mlp.mlir): conv3x3 + LIF + 2x2 max pooling, then a linear LIF readout.
func.func @forward(%x: tensor<2xBATCHx1x8x8xf32>) -> tensor<2xBATCHx3xf32> {
  %w1 = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x1x3x3xf32>
  %c1 = snn.conv2d %x, %w1 {padding = array<i64: 1, 1>}
      : tensor<2xBATCHx1x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<2xBATCHx4x8x8xf32>
  %s1 = snn.lif %c1 {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<2xBATCHx4x8x8xf32>
  %p1 = snn.max_pool2d %s1 {kernel_size = array<i64: 2, 2>}
      : tensor<2xBATCHx4x8x8xf32> -> tensor<2xBATCHx4x4x4xf32>
  %flat = snn.flatten %p1 : tensor<2xBATCHx4x4x4xf32> -> tensor<2xBATCHx64xf32>
  %w2 = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x64xf32>
  %b2 = snn.param "fc.bias" {init = #snn.init<uniform>, init_scale = 0.125} : tensor<3xf32>
  %fc = snn.linear %flat, %w2, %b2
      : tensor<2xBATCHx64xf32>, tensor<3x64xf32>, tensor<3xf32> -> tensor<2xBATCHx3xf32>
  %out = snn.lif %fc {k = 0.5, c = 0.5, snn.name = "lif2"} : tensor<2xBATCHx3xf32>
  return %out : tensor<2xBATCHx3xf32>
}
