// A conv net for the pooling fusion in training, without batch norm: a lif
// layer with 2x3 average windows (3-wide window rows), a soft-reset cuba_lif
// layer (two state variables, a saved I) with 2x2 sum windows, then a linear
// classifier with lif outputs. T = 4, batch 4, 2x8x12 inputs.
func.func @forward(%x: tensor<4x4x2x8x12xf32>) -> tensor<4x4x5xf32> {
  %w1 = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x2x3x3xf32>
  %c1 = snn.conv2d %x, %w1 {padding = array<i64: 1, 1>}
      : tensor<4x4x2x8x12xf32>, tensor<4x2x3x3xf32> -> tensor<4x4x4x8x12xf32>
  %s1 = snn.lif %c1 {k = 0.5, c = 1.0, v_th = 0.6, surrogate = #snn.surrogate<atan, alpha = 2.0>, snn.name = "lif1"} : tensor<4x4x4x8x12xf32>
  %p1 = snn.avg_pool2d %s1 {kernel_size = array<i64: 2, 3>}
      : tensor<4x4x4x8x12xf32> -> tensor<4x4x4x4x4xf32>
  %w2 = snn.param "conv2.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x4x3x3xf32>
  %c2 = snn.conv2d %p1, %w2 {padding = array<i64: 1, 1>}
      : tensor<4x4x4x4x4xf32>, tensor<4x4x3x3xf32> -> tensor<4x4x4x4x4xf32>
  %s2 = snn.cuba_lif %c2 {k_syn = 0.3, c_syn = 1.5, v_th = 0.4, reset = #snn.reset<soft>, snn.name = "layer2"} : tensor<4x4x4x4x4xf32>
  %p2 = snn.sum_pool2d %s2 {kernel_size = array<i64: 2, 2>}
      : tensor<4x4x4x4x4xf32> -> tensor<4x4x4x2x2xf32>
  %f = snn.flatten %p2 : tensor<4x4x4x2x2xf32> -> tensor<4x4x16xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x16xf32>
  %bf = snn.param "fc.bias" : tensor<5xf32>
  %h = snn.linear %f, %wf, %bf
      : tensor<4x4x16xf32>, tensor<5x16xf32>, tensor<5xf32> -> tensor<4x4x5xf32>
  %o = snn.lif %h {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<fast_sigmoid, alpha = 5.0>, snn.name = "out"} : tensor<4x4x5xf32>
  return %o : tensor<4x4x5xf32>
}
