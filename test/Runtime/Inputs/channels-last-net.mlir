// A small conv net for the --snn-channels-last end-to-end test: two blocks
// of conv -> batch norm -> lif -> 2x2 average pooling (the first tiles its
// 10x10 map, the second's windows leave the last row and column of its 5x5
// map out), then flatten -> linear -> lif. T = 3, batch 4, 3x10x10 inputs.
func.func @forward(%x: tensor<3x4x3x10x10xf32>) -> tensor<3x4x5xf32> {
  %w1 = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<6x3x3x3xf32>
  %c1 = snn.conv2d %x, %w1 {padding = array<i64: 1, 1>} : tensor<3x4x3x10x10xf32>, tensor<6x3x3x3xf32> -> tensor<3x4x6x10x10xf32>
  %g1 = snn.param "bn1.weight" {init = #snn.init<ones>} : tensor<6xf32>
  %be1 = snn.param "bn1.bias" : tensor<6xf32>
  %rm1 = snn.param "bn1.running_mean" {trainable = false} : tensor<6xf32>
  %rv1 = snn.param "bn1.running_var" {init = #snn.init<ones>, trainable = false} : tensor<6xf32>
  %n1 = snn.batch_norm %c1, %g1, %be1, %rm1, %rv1 : tensor<3x4x6x10x10xf32>, tensor<6xf32>
  %s1 = snn.lif %n1 {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<3x4x6x10x10xf32>
  %p1 = snn.avg_pool2d %s1 {kernel_size = array<i64: 2, 2>} : tensor<3x4x6x10x10xf32> -> tensor<3x4x6x5x5xf32>
  %w2 = snn.param "conv2.weight" {init = #snn.init<kaiming_uniform>} : tensor<7x6x3x3xf32>
  %c2 = snn.conv2d %p1, %w2 {padding = array<i64: 1, 1>} : tensor<3x4x6x5x5xf32>, tensor<7x6x3x3xf32> -> tensor<3x4x7x5x5xf32>
  %g2 = snn.param "bn2.weight" {init = #snn.init<ones>} : tensor<7xf32>
  %be2 = snn.param "bn2.bias" : tensor<7xf32>
  %rm2 = snn.param "bn2.running_mean" {trainable = false} : tensor<7xf32>
  %rv2 = snn.param "bn2.running_var" {init = #snn.init<ones>, trainable = false} : tensor<7xf32>
  %n2 = snn.batch_norm %c2, %g2, %be2, %rm2, %rv2 : tensor<3x4x7x5x5xf32>, tensor<7xf32>
  %s2 = snn.lif %n2 {k = 0.5, c = 1.0, v_th = 0.3, snn.name = "lif2"} : tensor<3x4x7x5x5xf32>
  %p2 = snn.avg_pool2d %s2 {kernel_size = array<i64: 2, 2>} : tensor<3x4x7x5x5xf32> -> tensor<3x4x7x2x2xf32>
  %flat = snn.flatten %p2 : tensor<3x4x7x2x2xf32> -> tensor<3x4x28xf32>
  %w3 = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x28xf32>
  %b3 = snn.param "fc.bias" : tensor<5xf32>
  %fc = snn.linear %flat, %w3, %b3 : tensor<3x4x28xf32>, tensor<5x28xf32>, tensor<5xf32> -> tensor<3x4x5xf32>
  %out = snn.lif %fc {k = 0.5, c = 1.0, v_th = 0.3, snn.name = "lif3"} : tensor<3x4x5xf32>
  return %out : tensor<3x4x5xf32>
}
