// The pooling fusion on channels-last ([T, B, H, W, C]) maps: a linear layer
// over the channels, a batch norm with spatial_rank = 0, a lif layer with
// 2x3 average windows (batch norm, lif and pooling in one kernel), a
// soft-reset cuba_lif layer over 5 channels (a window's neurons 5 apart)
// with 2x2 sum windows, then a transpose back to [T, B, C, H, W], a flatten
// and a linear classifier with lif outputs. T = 4, batch 4, 8x12x2 inputs.
func.func @forward(%x: tensor<4x4x8x12x2xf32>) -> tensor<4x4x5xf32> {
  %w1 = snn.param "mix1.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x2xf32>
  %c1 = snn.linear %x, %w1 : tensor<4x4x8x12x2xf32>, tensor<4x2xf32> -> tensor<4x4x8x12x4xf32>
  %g1 = snn.param "bn1.weight" {init = #snn.init<ones>} : tensor<4xf32>
  %be1 = snn.param "bn1.bias" : tensor<4xf32>
  %rm1 = snn.param "bn1.running_mean" {trainable = false} : tensor<4xf32>
  %rv1 = snn.param "bn1.running_var" {init = #snn.init<ones>, trainable = false} : tensor<4xf32>
  %n1 = snn.batch_norm %c1, %g1, %be1, %rm1, %rv1 {spatial_rank = 0} : tensor<4x4x8x12x4xf32>, tensor<4xf32>
  %s1 = snn.lif %n1 {k = 0.5, c = 1.0, v_th = 0.6, surrogate = #snn.surrogate<atan, alpha = 2.0>, snn.name = "lif1"} : tensor<4x4x8x12x4xf32>
  %p1 = snn.avg_pool2d %s1 {channels_last, kernel_size = array<i64: 2, 3>}
      : tensor<4x4x8x12x4xf32> -> tensor<4x4x4x4x4xf32>
  %w2 = snn.param "mix2.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x4xf32>
  %c2 = snn.linear %p1, %w2 : tensor<4x4x4x4x4xf32>, tensor<5x4xf32> -> tensor<4x4x4x4x5xf32>
  %s2 = snn.cuba_lif %c2 {k_syn = 0.3, c_syn = 1.5, v_th = 0.4, reset = #snn.reset<soft>, snn.name = "layer2"} : tensor<4x4x4x4x5xf32>
  %p2 = snn.sum_pool2d %s2 {channels_last, kernel_size = array<i64: 2, 2>}
      : tensor<4x4x4x4x5xf32> -> tensor<4x4x2x2x5xf32>
  %t2 = snn.transpose %p2 {permutation = array<i64: 0, 1, 4, 2, 3>} : tensor<4x4x2x2x5xf32> -> tensor<4x4x5x2x2xf32>
  %f = snn.flatten %t2 : tensor<4x4x5x2x2xf32> -> tensor<4x4x20xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x20xf32>
  %bf = snn.param "fc.bias" : tensor<5xf32>
  %h = snn.linear %f, %wf, %bf
      : tensor<4x4x20xf32>, tensor<5x20xf32>, tensor<5xf32> -> tensor<4x4x5xf32>
  %o = snn.lif %h {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<fast_sigmoid, alpha = 5.0>, snn.name = "out"} : tensor<4x4x5xf32>
  return %o : tensor<4x4x5xf32>
}
