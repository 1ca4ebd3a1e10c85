// Batch norm on channels-last maps, [T, B, H, W, C] with spatial_rank 0
// (S = 1: the channels are contiguous), at sizes that break vectorized or
// single-part code: C = 6 (not a multiple of 4: scalar channel reads) and
// C = 8 (4 channels per thread), T = 3, B = 5, 9x13 maps: M = 1755 rows in
// 6 and 7 statistics parts, the last one shorter. Each in front of a LIF
// layer, trained through a channels-last conv and a linear layer.
func.func @forward(%x: tensor<3x5x9x13x6xf32>) -> tensor<3x5x5xf32> {
  %g1 = snn.param "bn1.weight" {init = #snn.init<ones>} : tensor<6xf32>
  %b1 = snn.param "bn1.bias" {init = #snn.init<zeros>} : tensor<6xf32>
  %rm1 = snn.param "bn1.running_mean" {trainable = false} : tensor<6xf32>
  %rv1 = snn.param "bn1.running_var" {init = #snn.init<ones>, trainable = false} : tensor<6xf32>
  %n1 = snn.batch_norm %x, %g1, %b1, %rm1, %rv1 {spatial_rank = 0 : i64} : tensor<3x5x9x13x6xf32>, tensor<6xf32>
  %s1 = snn.lif %n1 {k = 0.5, c = 1.0, v_th = 0.4, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<3x5x9x13x6xf32>
  %w = snn.param "conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x3x3x6xf32>
  %c = snn.conv2d %s1, %w {channels_last, padding = array<i64: 1, 1>} : tensor<3x5x9x13x6xf32>, tensor<8x3x3x6xf32> -> tensor<3x5x9x13x8xf32>
  %g2 = snn.param "bn2.weight" {init = #snn.init<ones>} : tensor<8xf32>
  %b2 = snn.param "bn2.bias" {init = #snn.init<zeros>} : tensor<8xf32>
  %rm2 = snn.param "bn2.running_mean" {trainable = false} : tensor<8xf32>
  %rv2 = snn.param "bn2.running_var" {init = #snn.init<ones>, trainable = false} : tensor<8xf32>
  %n2 = snn.batch_norm %c, %g2, %b2, %rm2, %rv2 {spatial_rank = 0 : i64} : tensor<3x5x9x13x8xf32>, tensor<8xf32>
  %s2 = snn.lif %n2 {k = 0.5, c = 1.0, v_th = 0.4, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<3x5x9x13x8xf32>
  %f = snn.flatten %s2 : tensor<3x5x9x13x8xf32> -> tensor<3x5x936xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<normal>, init_scale = 0.5} : tensor<5x936xf32>
  %h = snn.linear %f, %wf : tensor<3x5x936xf32>, tensor<5x936xf32> -> tensor<3x5x5xf32>
  %o = snn.lif %h {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<fast_sigmoid, alpha = 5.0>} : tensor<3x5x5xf32>
  return %o : tensor<3x5x5xf32>
}
