// The conv net of fuse-bn/train-net.mlir with a soft-reset lif in place of
// its cuba_lif (--snn-compile recompute=C recomputes lif and if layers), T =
// 4, batch 2, 2x24x64, a backward thread holding 4 neurons:
//   conv -> bn -> lif (max pooling after it: not fused), 24x64 maps: 384
//     threads a channel plane in 512 slots, two runs of 256;
//   conv -> bn -> lif -> 2x2 average pooling (one kernel), 6x16 maps: 24
//     threads in 32 slots;
//   conv -> bn -> soft-reset lif, 3x8 maps: 6 threads in 8 slots;
//   linear -> lif.

func.func @forward(%x: tensor<4x2x2x24x64xf32>) -> tensor<4x2x10xf32> {
  %w1 = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x2x3x3xf32>
  %c1 = snn.conv2d %x, %w1 {padding = array<i64: 1, 1>}
      : tensor<4x2x2x24x64xf32>, tensor<4x2x3x3xf32> -> tensor<4x2x4x24x64xf32>
  %g1 = snn.param "bn1.weight" {init = #snn.init<ones>} : tensor<4xf32>
  %be1 = snn.param "bn1.bias" : tensor<4xf32>
  %rm1 = snn.param "bn1.running_mean" {trainable = false} : tensor<4xf32>
  %rv1 = snn.param "bn1.running_var" {init = #snn.init<ones>, trainable = false} : tensor<4xf32>
  %n1 = snn.batch_norm %c1, %g1, %be1, %rm1, %rv1 : tensor<4x2x4x24x64xf32>, tensor<4xf32>
  %s1 = snn.lif %n1 {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<4x2x4x24x64xf32>
  %p1 = snn.max_pool2d %s1 {kernel_size = array<i64: 4, 4>}
      : tensor<4x2x4x24x64xf32> -> tensor<4x2x4x6x16xf32>
  %w2 = snn.param "conv2.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x4x3x3xf32>
  %c2 = snn.conv2d %p1, %w2 {padding = array<i64: 1, 1>}
      : tensor<4x2x4x6x16xf32>, tensor<8x4x3x3xf32> -> tensor<4x2x8x6x16xf32>
  %g2 = snn.param "bn2.weight" {init = #snn.init<ones>} : tensor<8xf32>
  %be2 = snn.param "bn2.bias" : tensor<8xf32>
  %rm2 = snn.param "bn2.running_mean" {trainable = false} : tensor<8xf32>
  %rv2 = snn.param "bn2.running_var" {init = #snn.init<ones>, trainable = false} : tensor<8xf32>
  %n2 = snn.batch_norm %c2, %g2, %be2, %rm2, %rv2 : tensor<4x2x8x6x16xf32>, tensor<8xf32>
  %s2 = snn.lif %n2 {k = 0.5, c = 1.0, v_th = 0.5, snn.name = "lif2"} : tensor<4x2x8x6x16xf32>
  %p2 = snn.avg_pool2d %s2 {kernel_size = array<i64: 2, 2>}
      : tensor<4x2x8x6x16xf32> -> tensor<4x2x8x3x8xf32>
  %w3 = snn.param "conv3.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x8x3x3xf32>
  %c3 = snn.conv2d %p2, %w3 {padding = array<i64: 1, 1>}
      : tensor<4x2x8x3x8xf32>, tensor<8x8x3x3xf32> -> tensor<4x2x8x3x8xf32>
  %g3 = snn.param "bn3.weight" {init = #snn.init<ones>} : tensor<8xf32>
  %be3 = snn.param "bn3.bias" : tensor<8xf32>
  %rm3 = snn.param "bn3.running_mean" {trainable = false} : tensor<8xf32>
  %rv3 = snn.param "bn3.running_var" {init = #snn.init<ones>, trainable = false} : tensor<8xf32>
  %n3 = snn.batch_norm %c3, %g3, %be3, %rm3, %rv3 : tensor<4x2x8x3x8xf32>, tensor<8xf32>
  %s3 = snn.lif %n3 {k = 0.5, c = 1.5, v_th = 0.5, reset = #snn.reset<soft>, snn.name = "lif3"} : tensor<4x2x8x3x8xf32>
  %flat = snn.flatten %s3 : tensor<4x2x8x3x8xf32> -> tensor<4x2x192xf32>
  %w4 = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x192xf32>
  %b4 = snn.param "fc.bias" : tensor<10xf32>
  %fc = snn.linear %flat, %w4, %b4
      : tensor<4x2x192xf32>, tensor<10x192xf32>, tensor<10xf32> -> tensor<4x2x10xf32>
  %out = snn.lif %fc {k = 0.5, c = 1.0, v_th = 0.3, snn.name = "lif4"} : tensor<4x2x10xf32>
  return %out : tensor<4x2x10xf32>
}
