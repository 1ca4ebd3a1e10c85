// Channels-last ([T, B, H, W, C]) pooling kernels on odd sizes: a 1x1
// "convolution" (a linear layer over the channels), max pooling with
// overlapping padded windows (a thread per input element in the backward),
// a LIF layer, then average pooling whose windows tile the map, sum pooling
// with overlapping windows and max pooling with tiling windows; each pooled
// map goes back to [T, B, C, H, W] through snn.transpose before its flatten.
func.func @forward(%x: tensor<3x2x7x6x3xf32>) -> tensor<3x2x3xf32> {
  %w = snn.param "mix.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x3xf32>
  %c = snn.linear %x, %w : tensor<3x2x7x6x3xf32>, tensor<4x3xf32> -> tensor<3x2x7x6x4xf32>
  %m = snn.max_pool2d %c {channels_last, kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<3x2x7x6x4xf32> -> tensor<3x2x4x3x4xf32>
  %s = snn.lif %m {k = 0.5, c = 1.0, v_th = 0.4, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<3x2x4x3x4xf32>
  %a = snn.avg_pool2d %s {channels_last, kernel_size = array<i64: 2, 3>} : tensor<3x2x4x3x4xf32> -> tensor<3x2x2x1x4xf32>
  %q = snn.sum_pool2d %s {channels_last, kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<3x2x4x3x4xf32> -> tensor<3x2x2x2x4xf32>
  %mm = snn.max_pool2d %s {channels_last, kernel_size = array<i64: 2, 1>} : tensor<3x2x4x3x4xf32> -> tensor<3x2x2x3x4xf32>
  %at = snn.transpose %a {permutation = array<i64: 0, 1, 4, 2, 3>} : tensor<3x2x2x1x4xf32> -> tensor<3x2x4x2x1xf32>
  %qt = snn.transpose %q {permutation = array<i64: 0, 1, 4, 2, 3>} : tensor<3x2x2x2x4xf32> -> tensor<3x2x4x2x2xf32>
  %mt = snn.transpose %mm {permutation = array<i64: 0, 1, 4, 2, 3>} : tensor<3x2x2x3x4xf32> -> tensor<3x2x4x2x3xf32>
  %af = snn.flatten %at : tensor<3x2x4x2x1xf32> -> tensor<3x2x8xf32>
  %qf = snn.flatten %qt : tensor<3x2x4x2x2xf32> -> tensor<3x2x16xf32>
  %mf = snn.flatten %mt : tensor<3x2x4x2x3xf32> -> tensor<3x2x24xf32>
  %wa = snn.param "fa.weight" {init = #snn.init<normal>, init_scale = 0.5} : tensor<3x8xf32>
  %wq = snn.param "fq.weight" {init = #snn.init<normal>, init_scale = 0.5} : tensor<3x16xf32>
  %wm = snn.param "fm.weight" {init = #snn.init<normal>, init_scale = 0.5} : tensor<3x24xf32>
  %ha = snn.linear %af, %wa : tensor<3x2x8xf32>, tensor<3x8xf32> -> tensor<3x2x3xf32>
  %hq = snn.linear %qf, %wq : tensor<3x2x16xf32>, tensor<3x16xf32> -> tensor<3x2x3xf32>
  %hm = snn.linear %mf, %wm : tensor<3x2x24xf32>, tensor<3x24xf32> -> tensor<3x2x3xf32>
  %h1 = snn.add %ha, %hq : tensor<3x2x3xf32>
  %h = snn.add %h1, %hm : tensor<3x2x3xf32>
  %o = snn.lif %h {k = 0.5, c = 1.0, v_th = 0.3, surrogate = #snn.surrogate<fast_sigmoid, alpha = 5.0>} : tensor<3x2x3xf32>
  return %o : tensor<3x2x3xf32>
}
