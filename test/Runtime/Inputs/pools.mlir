// Every pooling kernel shape: max, average and sum pooling, each with
// windows that tile the input (a thread per window) and with overlapping
// padded windows (a thread per input element; max pooling's 5x5 windows
// search their maximum in a loop, 3x3 ones unrolled), in front of and
// behind a LIF layer, trained through a conv and a linear layer.
func.func @forward(%x: tensor<3x2x2x8x8xf32>) -> tensor<3x2x3xf32> {
  %w = snn.param "conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x2x3x3xf32>
  %c = snn.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<3x2x2x8x8xf32>, tensor<3x2x3x3xf32> -> tensor<3x2x3x8x8xf32>
  %m1 = snn.max_pool2d %c {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<3x2x3x8x8xf32> -> tensor<3x2x3x4x4xf32>
  %m2 = snn.max_pool2d %c {kernel_size = array<i64: 2, 2>} : tensor<3x2x3x8x8xf32> -> tensor<3x2x3x4x4xf32>
  %m3 = snn.max_pool2d %c {kernel_size = array<i64: 5, 5>, stride = array<i64: 2, 2>, padding = array<i64: 2, 2>} : tensor<3x2x3x8x8xf32> -> tensor<3x2x3x4x4xf32>
  %m12 = snn.add %m1, %m2 : tensor<3x2x3x4x4xf32>
  %m = snn.add %m12, %m3 : tensor<3x2x3x4x4xf32>
  %s = snn.lif %m {k = 0.5, c = 1.0, v_th = 0.4, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<3x2x3x4x4xf32>
  %a1 = snn.avg_pool2d %s {kernel_size = array<i64: 2, 2>} : tensor<3x2x3x4x4xf32> -> tensor<3x2x3x2x2xf32>
  %a2 = snn.avg_pool2d %s {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<3x2x3x4x4xf32> -> tensor<3x2x3x2x2xf32>
  %q1 = snn.sum_pool2d %s {kernel_size = array<i64: 2, 2>} : tensor<3x2x3x4x4xf32> -> tensor<3x2x3x2x2xf32>
  %a = snn.add %a1, %a2 : tensor<3x2x3x2x2xf32>
  %q2 = snn.sum_pool2d %a {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>} : tensor<3x2x3x2x2xf32> -> tensor<3x2x3x2x2xf32>
  %q = snn.add %q1, %q2 : tensor<3x2x3x2x2xf32>
  %f = snn.flatten %q : tensor<3x2x3x2x2xf32> -> tensor<3x2x12xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<normal>, init_scale = 0.5} : tensor<3x12xf32>
  %h = snn.linear %f, %wf : tensor<3x2x12xf32>, tensor<3x12xf32> -> tensor<3x2x3xf32>
  %o = snn.lif %h {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<fast_sigmoid, alpha = 5.0>} : tensor<3x2x3xf32>
  return %o : tensor<3x2x3xf32>
}
