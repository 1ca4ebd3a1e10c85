// SpikingJelly's small conv net of bench/sj_equivalence.py: two blocks of
// conv3x3 + BatchNorm2d (training: statistics over T*B*H*W) + LIF + maxpool2,
// then flatten, linear and LIF; T=4, batch 8, 28x28 input.
func.func @forward(%x: tensor<4x8x1x28x28xf32>) -> tensor<4x8x10xf32> {
  %w1 = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x1x3x3xf32>
  %c1 = snn.conv2d %x, %w1 {padding = array<i64: 1, 1>} : tensor<4x8x1x28x28xf32>, tensor<8x1x3x3xf32> -> tensor<4x8x8x28x28xf32>
  %g1 = snn.param "bn1.weight" {init = #snn.init<ones>} : tensor<8xf32>
  %be1 = snn.param "bn1.bias" : tensor<8xf32>
  %rm1 = snn.param "bn1.running_mean" {trainable = false} : tensor<8xf32>
  %rv1 = snn.param "bn1.running_var" {init = #snn.init<ones>, trainable = false} : tensor<8xf32>
  %n1 = snn.batch_norm %c1, %g1, %be1, %rm1, %rv1 : tensor<4x8x8x28x28xf32>, tensor<8xf32>
  %s1 = snn.lif %n1 {k = 0.5, c = 0.5, surrogate = #snn.surrogate<sigmoid, alpha = 4.0>, snn.name = "lif1"} : tensor<4x8x8x28x28xf32>
  %p1 = snn.max_pool2d %s1 {kernel_size = array<i64: 2, 2>} : tensor<4x8x8x28x28xf32> -> tensor<4x8x8x14x14xf32>
  %w2 = snn.param "conv2.weight" {init = #snn.init<kaiming_uniform>} : tensor<16x8x3x3xf32>
  %c2 = snn.conv2d %p1, %w2 {padding = array<i64: 1, 1>} : tensor<4x8x8x14x14xf32>, tensor<16x8x3x3xf32> -> tensor<4x8x16x14x14xf32>
  %g2 = snn.param "bn2.weight" {init = #snn.init<ones>} : tensor<16xf32>
  %be2 = snn.param "bn2.bias" : tensor<16xf32>
  %rm2 = snn.param "bn2.running_mean" {trainable = false} : tensor<16xf32>
  %rv2 = snn.param "bn2.running_var" {init = #snn.init<ones>, trainable = false} : tensor<16xf32>
  %n2 = snn.batch_norm %c2, %g2, %be2, %rm2, %rv2 : tensor<4x8x16x14x14xf32>, tensor<16xf32>
  %s2 = snn.lif %n2 {k = 0.5, c = 0.5, surrogate = #snn.surrogate<sigmoid, alpha = 4.0>, snn.name = "lif2"} : tensor<4x8x16x14x14xf32>
  %p2 = snn.max_pool2d %s2 {kernel_size = array<i64: 2, 2>} : tensor<4x8x16x14x14xf32> -> tensor<4x8x16x7x7xf32>
  %f = snn.flatten %p2 : tensor<4x8x16x7x7xf32> -> tensor<4x8x784xf32>
  %w3 = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x784xf32>
  %b3 = snn.param "fc.bias" : tensor<10xf32>
  %h3 = snn.linear %f, %w3, %b3 : tensor<4x8x784xf32>, tensor<10x784xf32>, tensor<10xf32> -> tensor<4x8x10xf32>
  %s3 = snn.lif %h3 {k = 0.5, c = 0.5, surrogate = #snn.surrogate<sigmoid, alpha = 4.0>, snn.name = "lif3"} : tensor<4x8x10xf32>
  return %s3 : tensor<4x8x10xf32>
}
