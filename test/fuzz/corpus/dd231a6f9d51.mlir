func.func @stateless(%x: tensor<4x2x3x8x8xf32>, %y: tensor<4x2x16xf32>) -> tensor<4x2x10xf32> {
  %w = snn.param "conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<6x3x3x3xf32>
  %b = snn.param "conv.bias" {init = #snn.init<uniform>, init_scale = 0.1} : tensor<6xf32>
  %c = snn.conv2d %x, %w, %b {padding = array<i64: 1, 1>}
       : tensor<4x2x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32> -> tensor<4x2x6x8x8xf32>
  %wg = snn.param "gconv.weight" {init = #snn.init<normal>, init_scale = 0.02} : tensor<6x2x3x3xf32>
  %cg = snn.conv2d %c, %wg {stride = array<i64: 2, 2>, padding = array<i64: 2, 2>,
                            dilation = array<i64: 2, 2>, groups = 3}
        : tensor<4x2x6x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<4x2x6x4x4xf32>
  %g = snn.param "bn.weight" {init = #snn.init<ones>} : tensor<6xf32>
  %be = snn.param "bn.bias" : tensor<6xf32>
  %rm = snn.param "bn.running_mean" {trainable = false} : tensor<6xf32>
  %rv = snn.param "bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<6xf32>
  %n = snn.batch_norm %cg, %g, %be, %rm, %rv {eps = 1.0e-3, momentum = 0.05}
       : tensor<4x2x6x4x4xf32>, tensor<6xf32>
  %p0 = snn.avg_pool2d %n {kernel_size = array<i64: 2, 2>} : tensor<4x2x6x4x4xf32> -> tensor<4x2x6x2x2xf32>
  %p1 = snn.sum_pool2d %p0 {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>}
        : tensor<4x2x6x2x2xf32> -> tensor<4x2x6x2x2xf32>
  %p2 = snn.max_pool2d %p1 {kernel_size = array<i64: 2, 2>} : tensor<4x2x6x2x2xf32> -> tensor<4x2x6x1x1xf32>
  %f = snn.flatten %p2 : tensor<4x2x6x1x1xf32> -> tensor<4x2x6xf32>
  %d = snn.dropout %f {p = 0.2, shared_across_time} : tensor<4x2x6xf32>
  %w2 = snn.param "fc.weight" {value = dense<0.5> : tensor<16x6xf32>} : tensor<16x6xf32>
  %l = snn.linear %d, %w2 : tensor<4x2x6xf32>, tensor<16x6xf32> -> tensor<4x2x16xf32>
  %a = snn.add %l, %y : tensor<4x2x16xf32>
  %sc = snn.scale %a {scale = 0.5} : tensor<4x2x16xf32>
  %w3 = snn.param "out.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x16xf32>
  %b3 = snn.param "out.bias" {init = #snn.init<constant>, init_scale = 0.0} : tensor<10xf32>
  %o = snn.linear %sc, %w3, %b3 : tensor<4x2x16xf32>, tensor<10x16xf32>, tensor<10xf32> -> tensor<4x2x10xf32>
  %g1 = snn.param "bn1.weight" {init = #snn.init<ones>} : tensor<10xf32>
  %n1 = snn.batch_norm %o, %g1, %g1, %g1, %g1 {spatial_rank = 0} : tensor<4x2x10xf32>, tensor<10xf32>
  return %n1 : tensor<4x2x10xf32>
}
