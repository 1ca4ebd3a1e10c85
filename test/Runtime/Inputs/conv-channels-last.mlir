// Channels-last (NHWC) convolutions at awkward sizes: T = 2, batch 1, an odd
// 7 x 5 x 3 input; stride 2 with padding 1 and a bias; asymmetric padding
// [0, 1, 1, 0] with dilation (1, 2) and no bias (cuDNN cannot pad
// asymmetrically: the GPU runs it as im2col + GEMM); a convolution over the
// whole plane with a bias. Its NCHW twin is conv-channels-last-nchw.mlir.
func.func @forward(%x: tensor<2x1x7x5x3xf32>) -> tensor<2x1x3xf32> {
  %w = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x3x3x3xf32>
  %b = snn.param "conv1.bias" {init = #snn.init<constant>, init_scale = 0.3} : tensor<4xf32>
  %c = snn.conv2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, channels_last} : tensor<2x1x7x5x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x1x4x3x4xf32>
  %s = snn.lif %c {k = 0.5, c = 1.0, v_th = 0.4, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<2x1x4x3x4xf32>
  %w2 = snn.param "conv2.weight" {init = #snn.init<normal>, init_scale = 0.7} : tensor<5x2x2x4xf32>
  %c2 = snn.conv2d %s, %w2 {padding = array<i64: 0, 1, 1, 0>, dilation = array<i64: 1, 2>, channels_last} : tensor<2x1x4x3x4xf32>, tensor<5x2x2x4xf32> -> tensor<2x1x4x2x5xf32>
  %s2 = snn.lif %c2 {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<2x1x4x2x5xf32>
  %w3 = snn.param "conv3.weight" {init = #snn.init<normal>, init_scale = 0.5} : tensor<3x4x2x5xf32>
  %b3 = snn.param "conv3.bias" {init = #snn.init<constant>, init_scale = 0.2} : tensor<3xf32>
  %c3 = snn.conv2d %s2, %w3, %b3 {channels_last} : tensor<2x1x4x2x5xf32>, tensor<3x4x2x5xf32>, tensor<3xf32> -> tensor<2x1x1x1x3xf32>
  %f = snn.flatten %c3 : tensor<2x1x1x1x3xf32> -> tensor<2x1x3xf32>
  %o = snn.lif %f {k = 0.5, c = 1.0, v_th = 0.1, surrogate = #snn.surrogate<fast_sigmoid, alpha = 5.0>} : tensor<2x1x3xf32>
  return %o : tensor<2x1x3xf32>
}
