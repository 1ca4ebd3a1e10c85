// Spiking VGG-11 for 32x32x3 images (CIFAR-10), multi-step form: T = 4,
// batch 64. Blocks of conv3x3 (no bias) + batch norm + LIF (SpikingJelly
// LIFNode(tau=2): k = c = 0.5, hard reset to 0), average pooling after the
// stages, and a linear classifier whose output spikes are rate-decoded.

func.func @forward(%x: tensor<4x64x3x32x32xf32>) -> tensor<4x64x10xf32> {
  // Block 0: 3 -> 64 channels at 32x32.
  %w0 = snn.param "features.0.conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<64x3x3x3xf32>
  %c0 = snn.conv2d %x, %w0 {padding = array<i64: 1, 1>} : tensor<4x64x3x32x32xf32>, tensor<64x3x3x3xf32> -> tensor<4x64x64x32x32xf32>
  %g0 = snn.param "features.0.bn.weight" {init = #snn.init<ones>} : tensor<64xf32>
  %be0 = snn.param "features.0.bn.bias" : tensor<64xf32>
  %rm0 = snn.param "features.0.bn.running_mean" {trainable = false} : tensor<64xf32>
  %rv0 = snn.param "features.0.bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<64xf32>
  %n0 = snn.batch_norm %c0, %g0, %be0, %rm0, %rv0 : tensor<4x64x64x32x32xf32>, tensor<64xf32>
  %s0 = snn.lif %n0 {k = 0.5, c = 0.5, snn.name = "features.0.lif"} : tensor<4x64x64x32x32xf32>
  %pool0 = snn.avg_pool2d %s0 {kernel_size = array<i64: 2, 2>} : tensor<4x64x64x32x32xf32> -> tensor<4x64x64x16x16xf32>
  // Block 1: 64 -> 128 channels at 16x16.
  %w1 = snn.param "features.1.conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<128x64x3x3xf32>
  %c1 = snn.conv2d %pool0, %w1 {padding = array<i64: 1, 1>} : tensor<4x64x64x16x16xf32>, tensor<128x64x3x3xf32> -> tensor<4x64x128x16x16xf32>
  %g1 = snn.param "features.1.bn.weight" {init = #snn.init<ones>} : tensor<128xf32>
  %be1 = snn.param "features.1.bn.bias" : tensor<128xf32>
  %rm1 = snn.param "features.1.bn.running_mean" {trainable = false} : tensor<128xf32>
  %rv1 = snn.param "features.1.bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<128xf32>
  %n1 = snn.batch_norm %c1, %g1, %be1, %rm1, %rv1 : tensor<4x64x128x16x16xf32>, tensor<128xf32>
  %s1 = snn.lif %n1 {k = 0.5, c = 0.5, snn.name = "features.1.lif"} : tensor<4x64x128x16x16xf32>
  %pool1 = snn.avg_pool2d %s1 {kernel_size = array<i64: 2, 2>} : tensor<4x64x128x16x16xf32> -> tensor<4x64x128x8x8xf32>
  // Block 2: 128 -> 256 channels at 8x8.
  %w2 = snn.param "features.2.conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<256x128x3x3xf32>
  %c2 = snn.conv2d %pool1, %w2 {padding = array<i64: 1, 1>} : tensor<4x64x128x8x8xf32>, tensor<256x128x3x3xf32> -> tensor<4x64x256x8x8xf32>
  %g2 = snn.param "features.2.bn.weight" {init = #snn.init<ones>} : tensor<256xf32>
  %be2 = snn.param "features.2.bn.bias" : tensor<256xf32>
  %rm2 = snn.param "features.2.bn.running_mean" {trainable = false} : tensor<256xf32>
  %rv2 = snn.param "features.2.bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<256xf32>
  %n2 = snn.batch_norm %c2, %g2, %be2, %rm2, %rv2 : tensor<4x64x256x8x8xf32>, tensor<256xf32>
  %s2 = snn.lif %n2 {k = 0.5, c = 0.5, snn.name = "features.2.lif"} : tensor<4x64x256x8x8xf32>
  // Block 3: 256 -> 256 channels at 8x8.
  %w3 = snn.param "features.3.conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<256x256x3x3xf32>
  %c3 = snn.conv2d %s2, %w3 {padding = array<i64: 1, 1>} : tensor<4x64x256x8x8xf32>, tensor<256x256x3x3xf32> -> tensor<4x64x256x8x8xf32>
  %g3 = snn.param "features.3.bn.weight" {init = #snn.init<ones>} : tensor<256xf32>
  %be3 = snn.param "features.3.bn.bias" : tensor<256xf32>
  %rm3 = snn.param "features.3.bn.running_mean" {trainable = false} : tensor<256xf32>
  %rv3 = snn.param "features.3.bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<256xf32>
  %n3 = snn.batch_norm %c3, %g3, %be3, %rm3, %rv3 : tensor<4x64x256x8x8xf32>, tensor<256xf32>
  %s3 = snn.lif %n3 {k = 0.5, c = 0.5, snn.name = "features.3.lif"} : tensor<4x64x256x8x8xf32>
  %pool2 = snn.avg_pool2d %s3 {kernel_size = array<i64: 2, 2>} : tensor<4x64x256x8x8xf32> -> tensor<4x64x256x4x4xf32>
  // Block 4: 256 -> 512 channels at 4x4.
  %w4 = snn.param "features.4.conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<512x256x3x3xf32>
  %c4 = snn.conv2d %pool2, %w4 {padding = array<i64: 1, 1>} : tensor<4x64x256x4x4xf32>, tensor<512x256x3x3xf32> -> tensor<4x64x512x4x4xf32>
  %g4 = snn.param "features.4.bn.weight" {init = #snn.init<ones>} : tensor<512xf32>
  %be4 = snn.param "features.4.bn.bias" : tensor<512xf32>
  %rm4 = snn.param "features.4.bn.running_mean" {trainable = false} : tensor<512xf32>
  %rv4 = snn.param "features.4.bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<512xf32>
  %n4 = snn.batch_norm %c4, %g4, %be4, %rm4, %rv4 : tensor<4x64x512x4x4xf32>, tensor<512xf32>
  %s4 = snn.lif %n4 {k = 0.5, c = 0.5, snn.name = "features.4.lif"} : tensor<4x64x512x4x4xf32>
  // Block 5: 512 -> 512 channels at 4x4.
  %w5 = snn.param "features.5.conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<512x512x3x3xf32>
  %c5 = snn.conv2d %s4, %w5 {padding = array<i64: 1, 1>} : tensor<4x64x512x4x4xf32>, tensor<512x512x3x3xf32> -> tensor<4x64x512x4x4xf32>
  %g5 = snn.param "features.5.bn.weight" {init = #snn.init<ones>} : tensor<512xf32>
  %be5 = snn.param "features.5.bn.bias" : tensor<512xf32>
  %rm5 = snn.param "features.5.bn.running_mean" {trainable = false} : tensor<512xf32>
  %rv5 = snn.param "features.5.bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<512xf32>
  %n5 = snn.batch_norm %c5, %g5, %be5, %rm5, %rv5 : tensor<4x64x512x4x4xf32>, tensor<512xf32>
  %s5 = snn.lif %n5 {k = 0.5, c = 0.5, snn.name = "features.5.lif"} : tensor<4x64x512x4x4xf32>
  %pool3 = snn.avg_pool2d %s5 {kernel_size = array<i64: 2, 2>} : tensor<4x64x512x4x4xf32> -> tensor<4x64x512x2x2xf32>
  // Block 6: 512 -> 512 channels at 2x2.
  %w6 = snn.param "features.6.conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<512x512x3x3xf32>
  %c6 = snn.conv2d %pool3, %w6 {padding = array<i64: 1, 1>} : tensor<4x64x512x2x2xf32>, tensor<512x512x3x3xf32> -> tensor<4x64x512x2x2xf32>
  %g6 = snn.param "features.6.bn.weight" {init = #snn.init<ones>} : tensor<512xf32>
  %be6 = snn.param "features.6.bn.bias" : tensor<512xf32>
  %rm6 = snn.param "features.6.bn.running_mean" {trainable = false} : tensor<512xf32>
  %rv6 = snn.param "features.6.bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<512xf32>
  %n6 = snn.batch_norm %c6, %g6, %be6, %rm6, %rv6 : tensor<4x64x512x2x2xf32>, tensor<512xf32>
  %s6 = snn.lif %n6 {k = 0.5, c = 0.5, snn.name = "features.6.lif"} : tensor<4x64x512x2x2xf32>
  // Block 7: 512 -> 512 channels at 2x2.
  %w7 = snn.param "features.7.conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<512x512x3x3xf32>
  %c7 = snn.conv2d %s6, %w7 {padding = array<i64: 1, 1>} : tensor<4x64x512x2x2xf32>, tensor<512x512x3x3xf32> -> tensor<4x64x512x2x2xf32>
  %g7 = snn.param "features.7.bn.weight" {init = #snn.init<ones>} : tensor<512xf32>
  %be7 = snn.param "features.7.bn.bias" : tensor<512xf32>
  %rm7 = snn.param "features.7.bn.running_mean" {trainable = false} : tensor<512xf32>
  %rv7 = snn.param "features.7.bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<512xf32>
  %n7 = snn.batch_norm %c7, %g7, %be7, %rm7, %rv7 : tensor<4x64x512x2x2xf32>, tensor<512xf32>
  %s7 = snn.lif %n7 {k = 0.5, c = 0.5, snn.name = "features.7.lif"} : tensor<4x64x512x2x2xf32>
  %pool4 = snn.avg_pool2d %s7 {kernel_size = array<i64: 2, 2>} : tensor<4x64x512x2x2xf32> -> tensor<4x64x512x1x1xf32>
  %flat = snn.flatten %pool4 : tensor<4x64x512x1x1xf32> -> tensor<4x64x512xf32>
  %wfc = snn.param "classifier.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x512xf32>
  %bfc = snn.param "classifier.bias" {init = #snn.init<uniform>, init_scale = 0.04419417382} : tensor<10xf32>
  %fc = snn.linear %flat, %wfc, %bfc : tensor<4x64x512xf32>, tensor<10x512xf32>, tensor<10xf32> -> tensor<4x64x10xf32>
  %out = snn.lif %fc {k = 0.5, c = 0.5, snn.name = "classifier.lif"} : tensor<4x64x10xf32>
  return %out : tensor<4x64x10xf32>
}
