// The Fashion-MNIST convolutional SNN to train: two blocks of conv3x3 +
// batch norm (statistics over T*B in training) + LIF + 2x2 max pooling, then a
// linear layer into a leaky-integrator readout; T = 4, batch 64. The
// inference example examples/convnet.mlir is the same network with a spiking
// output layer.
//
//   snn-opt examples/fmnist-convnet.mlir --snn-autodiff="optimizer=adam lr=0.001" \
//       --snn-compile="output=convnet.snnmod target=all"
//   snn-run convnet.snnmod train --data /usr/share/datasets/fashion-mnist --epochs 10

func.func @forward(%x: tensor<4x64x1x28x28xf32>) -> tensor<4x64x10xf32> {
  // Block 1: 1 -> 32 channels, 28x28 -> 14x14.
  %w1 = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<32x1x3x3xf32>
  %c1 = snn.conv2d %x, %w1 {padding = array<i64: 1, 1>}
      : tensor<4x64x1x28x28xf32>, tensor<32x1x3x3xf32> -> tensor<4x64x32x28x28xf32>
  %g1 = snn.param "bn1.weight" {init = #snn.init<ones>} : tensor<32xf32>
  %be1 = snn.param "bn1.bias" : tensor<32xf32>
  %rm1 = snn.param "bn1.running_mean" {trainable = false} : tensor<32xf32>
  %rv1 = snn.param "bn1.running_var" {init = #snn.init<ones>, trainable = false} : tensor<32xf32>
  %n1 = snn.batch_norm %c1, %g1, %be1, %rm1, %rv1 : tensor<4x64x32x28x28xf32>, tensor<32xf32>
  %s1 = snn.lif %n1 {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<4x64x32x28x28xf32>
  %p1 = snn.max_pool2d %s1 {kernel_size = array<i64: 2, 2>}
      : tensor<4x64x32x28x28xf32> -> tensor<4x64x32x14x14xf32>
  // Block 2: 32 -> 32 channels, 14x14 -> 7x7.
  %w2 = snn.param "conv2.weight" {init = #snn.init<kaiming_uniform>} : tensor<32x32x3x3xf32>
  %c2 = snn.conv2d %p1, %w2 {padding = array<i64: 1, 1>}
      : tensor<4x64x32x14x14xf32>, tensor<32x32x3x3xf32> -> tensor<4x64x32x14x14xf32>
  %g2 = snn.param "bn2.weight" {init = #snn.init<ones>} : tensor<32xf32>
  %be2 = snn.param "bn2.bias" : tensor<32xf32>
  %rm2 = snn.param "bn2.running_mean" {trainable = false} : tensor<32xf32>
  %rv2 = snn.param "bn2.running_var" {init = #snn.init<ones>, trainable = false} : tensor<32xf32>
  %n2 = snn.batch_norm %c2, %g2, %be2, %rm2, %rv2 : tensor<4x64x32x14x14xf32>, tensor<32xf32>
  %s2 = snn.lif %n2 {k = 0.5, c = 0.5, snn.name = "lif2"} : tensor<4x64x32x14x14xf32>
  %p2 = snn.max_pool2d %s2 {kernel_size = array<i64: 2, 2>}
      : tensor<4x64x32x14x14xf32> -> tensor<4x64x32x7x7xf32>
  // Classifier: 32*7*7 = 1568 -> 10.
  %flat = snn.flatten %p2 : tensor<4x64x32x7x7xf32> -> tensor<4x64x1568xf32>
  %w3 = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x1568xf32>
  %b3 = snn.param "fc.bias" {init = #snn.init<uniform>, init_scale = 0.02525381361} : tensor<10xf32>
  %fc = snn.linear %flat, %w3, %b3
      : tensor<4x64x1568xf32>, tensor<10x1568xf32>, tensor<10xf32> -> tensor<4x64x10xf32>
  %out = snn.li %fc {k = 0.5, c = 0.5, snn.name = "readout"} : tensor<4x64x10xf32>
  return %out : tensor<4x64x10xf32>
}
