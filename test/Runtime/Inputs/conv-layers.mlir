// The glue kernels of convolution and linear layers at awkward sizes: batch
// 1, odd H x W (7 x 5), 2 groups with a bias, stride (2, 1), padding 1 and
// dilation (1, 2); then a 2x2 convolution with a bias and no padding, and a
// linear layer with a bias.
func.func @forward(%x: tensor<2x1x4x7x5xf32>) -> tensor<2x1x3xf32> {
  %w = snn.param "conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<6x2x3x3xf32>
  %b = snn.param "conv.bias" {init = #snn.init<constant>, init_scale = 0.3} : tensor<6xf32>
  %c = snn.conv2d %x, %w, %b {stride = array<i64: 2, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 2>, groups = 2} : tensor<2x1x4x7x5xf32>, tensor<6x2x3x3xf32>, tensor<6xf32> -> tensor<2x1x6x4x3xf32>
  %s = snn.lif %c {k = 0.5, c = 1.0, v_th = 0.4, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<2x1x6x4x3xf32>
  %w2 = snn.param "conv2.weight" {init = #snn.init<normal>, init_scale = 0.7} : tensor<4x6x2x2xf32>
  %b2 = snn.param "conv2.bias" {init = #snn.init<constant>, init_scale = 0.1} : tensor<4xf32>
  %c2 = snn.conv2d %s, %w2, %b2 : tensor<2x1x6x4x3xf32>, tensor<4x6x2x2xf32>, tensor<4xf32> -> tensor<2x1x4x3x2xf32>
  %s2 = snn.lif %c2 {k = 0.5, c = 1.0, v_th = 0.3} : tensor<2x1x4x3x2xf32>
  %f = snn.flatten %s2 : tensor<2x1x4x3x2xf32> -> tensor<2x1x24xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<normal>, init_scale = 0.8} : tensor<3x24xf32>
  %bf = snn.param "fc.bias" {init = #snn.init<constant>, init_scale = 0.2} : tensor<3xf32>
  %h = snn.linear %f, %wf, %bf : tensor<2x1x24xf32>, tensor<3x24xf32>, tensor<3xf32> -> tensor<2x1x3xf32>
  %o = snn.lif %h {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<fast_sigmoid, alpha = 5.0>} : tensor<2x1x3xf32>
  return %o : tensor<2x1x3xf32>
}
