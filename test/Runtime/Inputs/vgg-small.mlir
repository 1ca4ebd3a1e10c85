// A VGG-like spiking net small enough for a CPU test: conv + batch norm +
// LIF blocks each followed by a tiling pooling (2x2 average, then 3x3 sum),
// then a linear classifier with LIF output neurons. T = 4, batch 8, 3x12x12.

func.func @forward(%x: tensor<4x8x3x12x12xf32>) -> tensor<4x8x10xf32> {
  %w1 = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x3x3x3xf32>
  %c1 = snn.conv2d %x, %w1 {padding = array<i64: 1, 1>}
      : tensor<4x8x3x12x12xf32>, tensor<8x3x3x3xf32> -> tensor<4x8x8x12x12xf32>
  %g1 = snn.param "bn1.weight" {init = #snn.init<ones>} : tensor<8xf32>
  %be1 = snn.param "bn1.bias" : tensor<8xf32>
  %rm1 = snn.param "bn1.running_mean" {trainable = false} : tensor<8xf32>
  %rv1 = snn.param "bn1.running_var" {init = #snn.init<ones>, trainable = false} : tensor<8xf32>
  %n1 = snn.batch_norm %c1, %g1, %be1, %rm1, %rv1 : tensor<4x8x8x12x12xf32>, tensor<8xf32>
  %s1 = snn.lif %n1 {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<4x8x8x12x12xf32>
  %p1 = snn.avg_pool2d %s1 {kernel_size = array<i64: 2, 2>}
      : tensor<4x8x8x12x12xf32> -> tensor<4x8x8x6x6xf32>
  %w2 = snn.param "conv2.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x8x3x3xf32>
  %c2 = snn.conv2d %p1, %w2 {padding = array<i64: 1, 1>}
      : tensor<4x8x8x6x6xf32>, tensor<8x8x3x3xf32> -> tensor<4x8x8x6x6xf32>
  %s2 = snn.lif %c2 {k = 0.5, c = 1.0, v_th = 0.3, snn.name = "lif2"} : tensor<4x8x8x6x6xf32>
  %p2 = snn.sum_pool2d %s2 {kernel_size = array<i64: 3, 3>}
      : tensor<4x8x8x6x6xf32> -> tensor<4x8x8x2x2xf32>
  %flat = snn.flatten %p2 : tensor<4x8x8x2x2xf32> -> tensor<4x8x32xf32>
  %w3 = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x32xf32>
  %b3 = snn.param "fc.bias" : tensor<10xf32>
  %fc = snn.linear %flat, %w3, %b3
      : tensor<4x8x32xf32>, tensor<10x32xf32>, tensor<10xf32> -> tensor<4x8x10xf32>
  %out = snn.lif %fc {k = 0.5, c = 1.0, v_th = 0.3, snn.name = "lif3"} : tensor<4x8x10xf32>
  return %out : tensor<4x8x10xf32>
}
