// Batch norm at the sizes that break vectorized or single-block code: 3
// channels of 32x32 (M*S = 9216 per channel: two statistics parts of 5 and
// 4 rows), 6 channels of 8x8, 7 channels after a linear layer
// (spatial_rank 0: S = 1, scalar accesses), each in front of a LIF layer,
// trained through a conv and a linear layer.
func.func @forward(%x: tensor<3x3x3x32x32xf32>) -> tensor<3x3x7xf32> {
  %g1 = snn.param "bn1.weight" {init = #snn.init<ones>} : tensor<3xf32>
  %b1 = snn.param "bn1.bias" {init = #snn.init<zeros>} : tensor<3xf32>
  %rm1 = snn.param "bn1.running_mean" {trainable = false} : tensor<3xf32>
  %rv1 = snn.param "bn1.running_var" {init = #snn.init<ones>, trainable = false} : tensor<3xf32>
  %n1 = snn.batch_norm %x, %g1, %b1, %rm1, %rv1 : tensor<3x3x3x32x32xf32>, tensor<3xf32>
  %s1 = snn.lif %n1 {k = 0.5, c = 1.0, v_th = 0.4, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<3x3x3x32x32xf32>
  %p1 = snn.sum_pool2d %s1 {kernel_size = array<i64: 4, 4>} : tensor<3x3x3x32x32xf32> -> tensor<3x3x3x8x8xf32>
  %w = snn.param "conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<6x3x3x3xf32>
  %c = snn.conv2d %p1, %w {padding = array<i64: 1, 1>} : tensor<3x3x3x8x8xf32>, tensor<6x3x3x3xf32> -> tensor<3x3x6x8x8xf32>
  %g2 = snn.param "bn2.weight" {init = #snn.init<ones>} : tensor<6xf32>
  %b2 = snn.param "bn2.bias" {init = #snn.init<zeros>} : tensor<6xf32>
  %rm2 = snn.param "bn2.running_mean" {trainable = false} : tensor<6xf32>
  %rv2 = snn.param "bn2.running_var" {init = #snn.init<ones>, trainable = false} : tensor<6xf32>
  %n2 = snn.batch_norm %c, %g2, %b2, %rm2, %rv2 : tensor<3x3x6x8x8xf32>, tensor<6xf32>
  %s2 = snn.lif %n2 {k = 0.5, c = 1.0, v_th = 0.4, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<3x3x6x8x8xf32>
  %f = snn.flatten %s2 : tensor<3x3x6x8x8xf32> -> tensor<3x3x384xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<normal>, init_scale = 0.5} : tensor<7x384xf32>
  %h = snn.linear %f, %wf : tensor<3x3x384xf32>, tensor<7x384xf32> -> tensor<3x3x7xf32>
  %g3 = snn.param "bn3.weight" {init = #snn.init<ones>} : tensor<7xf32>
  %b3 = snn.param "bn3.bias" {init = #snn.init<zeros>} : tensor<7xf32>
  %rm3 = snn.param "bn3.running_mean" {trainable = false} : tensor<7xf32>
  %rv3 = snn.param "bn3.running_var" {init = #snn.init<ones>, trainable = false} : tensor<7xf32>
  %n3 = snn.batch_norm %h, %g3, %b3, %rm3, %rv3 {spatial_rank = 0 : i64} : tensor<3x3x7xf32>, tensor<7xf32>
  %o = snn.lif %n3 {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<fast_sigmoid, alpha = 5.0>} : tensor<3x3x7xf32>
  return %o : tensor<3x3x7xf32>
}
