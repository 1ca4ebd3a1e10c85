// Convolutions with asymmetric padding ("same" of an even kernel, as NIR and
// PyTorch pad it: the odd pad after): a 2x4 kernel padded [0, 1, 1, 2] keeps
// 6x6, a strided 3x2 kernel padded [1, 0, 2, 1] -> LIF -> linear -> LIF.
func.func @forward(%x: tensor<3x2x1x6x6xf32>) -> tensor<3x2x3xf32> {
  %w = snn.param "conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<2x1x2x4xf32>
  %b = snn.param "conv.bias" {init = #snn.init<constant>, init_scale = 0.3} : tensor<2xf32>
  %c = snn.conv2d %x, %w, %b {padding = array<i64: 0, 1, 1, 2>} : tensor<3x2x1x6x6xf32>, tensor<2x1x2x4xf32>, tensor<2xf32> -> tensor<3x2x2x6x6xf32>
  %s = snn.lif %c {k = 0.5, c = 1.0, v_th = 0.4, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<3x2x2x6x6xf32>
  %w2 = snn.param "conv2.weight" {init = #snn.init<normal>, init_scale = 0.7} : tensor<2x2x3x2xf32>
  %c2 = snn.conv2d %s, %w2 {stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 2, 1>} : tensor<3x2x2x6x6xf32>, tensor<2x2x3x2xf32> -> tensor<3x2x2x4x3xf32>
  %s2 = snn.lif %c2 {k = 0.5, c = 1.0, v_th = 0.3} : tensor<3x2x2x4x3xf32>
  %f = snn.flatten %s2 : tensor<3x2x2x4x3xf32> -> tensor<3x2x24xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<normal>, init_scale = 0.8} : tensor<3x24xf32>
  %h = snn.linear %f, %wf : tensor<3x2x24xf32>, tensor<3x24xf32> -> tensor<3x2x3xf32>
  %o = snn.lif %h {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<fast_sigmoid, alpha = 5.0>} : tensor<3x2x3xf32>
  return %o : tensor<3x2x3xf32>
}
