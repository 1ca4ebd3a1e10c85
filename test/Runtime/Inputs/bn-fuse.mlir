// Batch norm + LIF at the sizes that exercise every path of the fused
// kernels (--snn-fuse): 3 channels of 30x30 (S = 900, a thread's 4 lanes
// share a channel; two statistics parts) followed by a 2x2 average pooling
// (fused too in inference); 5 channels of 15x15 (S = 225: the lanes of a
// thread straddle channels) into a cuba_lif layer with soft reset (the
// normalized input feeds its synaptic current); 8 channels after a linear layer
// (spatial_rank 0, S = 1: a channel per lane). Trained through two
// convolutions and a linear layer.
func.func @forward(%x: tensor<3x4x2x30x30xf32>) -> tensor<3x4x8xf32> {
  %w0 = snn.param "conv0.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x2x3x3xf32>
  %c0 = snn.conv2d %x, %w0 {padding = array<i64: 1, 1>} : tensor<3x4x2x30x30xf32>, tensor<3x2x3x3xf32> -> tensor<3x4x3x30x30xf32>
  %g1 = snn.param "bn1.weight" {init = #snn.init<ones>} : tensor<3xf32>
  %b1 = snn.param "bn1.bias" {init = #snn.init<zeros>} : tensor<3xf32>
  %rm1 = snn.param "bn1.running_mean" {trainable = false} : tensor<3xf32>
  %rv1 = snn.param "bn1.running_var" {init = #snn.init<ones>, trainable = false} : tensor<3xf32>
  %n1 = snn.batch_norm %c0, %g1, %b1, %rm1, %rv1 : tensor<3x4x3x30x30xf32>, tensor<3xf32>
  %s1 = snn.lif %n1 {k = 0.5, c = 1.0, v_th = 0.4, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<3x4x3x30x30xf32>
  %p1 = snn.avg_pool2d %s1 {kernel_size = array<i64: 2, 2>} : tensor<3x4x3x30x30xf32> -> tensor<3x4x3x15x15xf32>
  %w = snn.param "conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x3x3x3xf32>
  %c = snn.conv2d %p1, %w {padding = array<i64: 1, 1>} : tensor<3x4x3x15x15xf32>, tensor<5x3x3x3xf32> -> tensor<3x4x5x15x15xf32>
  %g2 = snn.param "bn2.weight" {init = #snn.init<ones>} : tensor<5xf32>
  %b2 = snn.param "bn2.bias" {init = #snn.init<zeros>} : tensor<5xf32>
  %rm2 = snn.param "bn2.running_mean" {trainable = false} : tensor<5xf32>
  %rv2 = snn.param "bn2.running_var" {init = #snn.init<ones>, trainable = false} : tensor<5xf32>
  %n2 = snn.batch_norm %c, %g2, %b2, %rm2, %rv2 {eps = 1.0e-3} : tensor<3x4x5x15x15xf32>, tensor<5xf32>
  %s2 = snn.cuba_lif %n2 {k_syn = 0.3, c_syn = 1.5, v_th = 0.6, reset = #snn.reset<soft>, surrogate = #snn.surrogate<sigmoid, alpha = 4.0>} : tensor<3x4x5x15x15xf32>
  %f = snn.flatten %s2 : tensor<3x4x5x15x15xf32> -> tensor<3x4x1125xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<normal>, init_scale = 0.5} : tensor<8x1125xf32>
  %h = snn.linear %f, %wf : tensor<3x4x1125xf32>, tensor<8x1125xf32> -> tensor<3x4x8xf32>
  %g3 = snn.param "bn3.weight" {init = #snn.init<ones>} : tensor<8xf32>
  %b3 = snn.param "bn3.bias" {init = #snn.init<zeros>} : tensor<8xf32>
  %rm3 = snn.param "bn3.running_mean" {trainable = false} : tensor<8xf32>
  %rv3 = snn.param "bn3.running_var" {init = #snn.init<ones>, trainable = false} : tensor<8xf32>
  %n3 = snn.batch_norm %h, %g3, %b3, %rm3, %rv3 {spatial_rank = 0 : i64} : tensor<3x4x8xf32>, tensor<8xf32>
  %o = snn.lif %n3 {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<fast_sigmoid, alpha = 5.0>} : tensor<3x4x8xf32>
  return %o : tensor<3x4x8xf32>
}
