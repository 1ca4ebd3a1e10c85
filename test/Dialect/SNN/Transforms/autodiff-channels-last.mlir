// RUN: snn-opt %s --snn-autodiff="optimizer=sgd" | FileCheck %s
// The backward inherits --snn-channels-last's layout (the pass before autodiff).
// RUN: snn-opt %S/../../../Runtime/Inputs/channels-last-net.mlir --snn-channels-last --snn-autodiff="optimizer=sgd" 2>/dev/null | FileCheck %s --check-prefix=NET

// NHWC pool and batch norm backwards; each conv weight's gradient
// transposed back to the param's [O, I, KH, KW].
// NET-LABEL: func.func @train_step
// NET: snn.avg_pool2d_bwd {{.*}} {channels_last, kernel_size = array<i64: 2, 2>} : tensor<3x4x2x2x7xf32> -> tensor<3x4x5x5x7xf32>
// NET: snn.batch_norm_bwd {{.*}} : tensor<3x4x5x5x7xf32>, tensor<7xf32>
// NET: snn.transpose {{.*}} {permutation = array<i64: 0, 3, 1, 2>} : tensor<7x3x3x6xf32> -> tensor<7x6x3x3xf32>
// NET: snn.avg_pool2d_bwd {{.*}} {channels_last, kernel_size = array<i64: 2, 2>} : tensor<3x4x5x5x6xf32> -> tensor<3x4x10x10x6xf32>
// NET: snn.transpose {{.*}} {permutation = array<i64: 0, 3, 1, 2>} : tensor<6x3x3x3xf32> -> tensor<6x3x3x3xf32>
// NET: snn.sgd

// The gradients of channels-last pools are channels-last pools' backward
// (same window, channels_last kept); the gradient of a transpose is the
// transpose by the inverse permutation.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[G:.*]] = snn.reshape {{.*}} : tensor<2x3x12xf32> -> tensor<2x3x4x1x3xf32>
// CHECK: %[[GT:.*]] = snn.transpose %[[G]] {permutation = array<i64: 0, 1, 3, 4, 2>} : tensor<2x3x4x1x3xf32> -> tensor<2x3x1x3x4xf32>
// CHECK: %[[GA:.*]] = snn.avg_pool2d_bwd %[[GT]] {channels_last, kernel_size = array<i64: 2, 2>} : tensor<2x3x1x3x4xf32> -> tensor<2x3x2x6x4xf32>
// CHECK: %[[GS:.*]] = snn.neuron_bwd %[[GA]]
// CHECK: snn.max_pool2d_bwd %[[GS]], %{{.*}} {channels_last, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<2x3x2x6x4xf32> -> tensor<2x3x3x11x4xf32>
// CHECK: snn.linear_bwd
func.func @forward(%x: tensor<2x3x3x11x2xf32>) -> tensor<2x3x5xf32> {
  %w = snn.param "mix.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x2xf32>
  %c = snn.linear %x, %w : tensor<2x3x3x11x2xf32>, tensor<4x2xf32> -> tensor<2x3x3x11x4xf32>
  %m = snn.max_pool2d %c {channels_last, kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<2x3x3x11x4xf32> -> tensor<2x3x2x6x4xf32>
  %s = snn.lif %m : tensor<2x3x2x6x4xf32>
  %a = snn.avg_pool2d %s {channels_last, kernel_size = array<i64: 2, 2>} : tensor<2x3x2x6x4xf32> -> tensor<2x3x1x3x4xf32>
  %t = snn.transpose %a {permutation = array<i64: 0, 1, 4, 2, 3>} : tensor<2x3x1x3x4xf32> -> tensor<2x3x4x1x3xf32>
  %f = snn.flatten %t : tensor<2x3x4x1x3xf32> -> tensor<2x3x12xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x12xf32>
  %h = snn.linear %f, %wf : tensor<2x3x12xf32>, tensor<5x12xf32> -> tensor<2x3x5xf32>
  %o = snn.lif %h : tensor<2x3x5xf32>
  return %o : tensor<2x3x5xf32>
}
