// conv -> batch norm (training statistics) -> LIF (atan, soft reset) -> avg
// pool -> flatten -> linear -> LIF (spike-rate cross-entropy)
func.func @forward(%x: tensor<3x2x1x6x6xf32>) -> tensor<3x2x3xf32> {
  %w = snn.param "conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<2x1x3x3xf32>
  %c = snn.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<3x2x1x6x6xf32>, tensor<2x1x3x3xf32> -> tensor<3x2x2x6x6xf32>
  %g = snn.param "bn.weight" {init = #snn.init<ones>} : tensor<2xf32>
  %b = snn.param "bn.bias" {init = #snn.init<constant>, init_scale = 0.3} : tensor<2xf32>
  %rm = snn.param "bn.running_mean" {trainable = false} : tensor<2xf32>
  %rv = snn.param "bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<2xf32>
  %n = snn.batch_norm %c, %g, %b, %rm, %rv : tensor<3x2x2x6x6xf32>, tensor<2xf32>
  %s = snn.lif %n {k = 0.5, c = 1.0, v_th = 0.6, reset = #snn.reset<soft>, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<3x2x2x6x6xf32>
  %p = snn.avg_pool2d %s {kernel_size = array<i64: 2, 2>} : tensor<3x2x2x6x6xf32> -> tensor<3x2x2x3x3xf32>
  %f = snn.flatten %p : tensor<3x2x2x3x3xf32> -> tensor<3x2x18xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<normal>, init_scale = 0.8} : tensor<3x18xf32>
  %bf = snn.param "fc.bias" {init = #snn.init<constant>, init_scale = 0.4} : tensor<3xf32>
  %h = snn.linear %f, %wf, %bf : tensor<3x2x18xf32>, tensor<3x18xf32>, tensor<3xf32> -> tensor<3x2x3xf32>
  %o = snn.lif %h {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<fast_sigmoid, alpha = 5.0>} : tensor<3x2x3xf32>
  return %o : tensor<3x2x3xf32>
}
