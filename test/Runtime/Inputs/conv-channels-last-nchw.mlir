// conv-channels-last.mlir in NCHW: the same layers, parameter names and
// output order (the last convolution leaves a 1 x 1 plane), the weights
// [O, I, KH, KW] where the twin has [O, KH, KW, I].
func.func @forward(%x: tensor<2x1x3x7x5xf32>) -> tensor<2x1x3xf32> {
  %w = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x3x3x3xf32>
  %b = snn.param "conv1.bias" {init = #snn.init<constant>, init_scale = 0.3} : tensor<4xf32>
  %c = snn.conv2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<2x1x3x7x5xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x1x4x4x3xf32>
  %s = snn.lif %c {k = 0.5, c = 1.0, v_th = 0.4, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<2x1x4x4x3xf32>
  %w2 = snn.param "conv2.weight" {init = #snn.init<normal>, init_scale = 0.7} : tensor<5x4x2x2xf32>
  %c2 = snn.conv2d %s, %w2 {padding = array<i64: 0, 1, 1, 0>, dilation = array<i64: 1, 2>} : tensor<2x1x4x4x3xf32>, tensor<5x4x2x2xf32> -> tensor<2x1x5x4x2xf32>
  %s2 = snn.lif %c2 {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<2x1x5x4x2xf32>
  %w3 = snn.param "conv3.weight" {init = #snn.init<normal>, init_scale = 0.5} : tensor<3x5x4x2xf32>
  %b3 = snn.param "conv3.bias" {init = #snn.init<constant>, init_scale = 0.2} : tensor<3xf32>
  %c3 = snn.conv2d %s2, %w3, %b3 : tensor<2x1x5x4x2xf32>, tensor<3x5x4x2xf32>, tensor<3xf32> -> tensor<2x1x3x1x1xf32>
  %f = snn.flatten %c3 : tensor<2x1x3x1x1xf32> -> tensor<2x1x3xf32>
  %o = snn.lif %f {k = 0.5, c = 1.0, v_th = 0.1, surrogate = #snn.surrogate<fast_sigmoid, alpha = 5.0>} : tensor<2x1x3xf32>
  return %o : tensor<2x1x3xf32>
}
