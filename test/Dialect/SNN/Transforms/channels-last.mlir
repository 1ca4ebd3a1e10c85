// RUN: snn-opt %s --snn-channels-last --split-input-file --verify-diagnostics | FileCheck %s
// RUN: snn-opt --help | FileCheck %s --check-prefix=HELP
// HELP: --snn-channels-last - Run convolutions, batch norms, neurons and pools on channels-last (NHWC) activations

// A VGG-like net: one transpose at the entry (the image), one per conv
// weight (the params stay [O, I, KH, KW]), one before the flatten; every
// conv, batch norm, LIF and pool in between works on [T, B, H, W, C].
// CHECK-LABEL: func.func @forward
// CHECK-NEXT: %[[X:.*]] = snn.transpose %arg0 {permutation = array<i64: 0, 1, 3, 4, 2>} : tensor<2x3x3x8x8xf32> -> tensor<2x3x8x8x3xf32>
// CHECK-NEXT: %[[W0:.*]] = snn.param "c0.weight"
// CHECK-NEXT: %[[W0T:.*]] = snn.transpose %[[W0]] {permutation = array<i64: 0, 2, 3, 1>} : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xf32>
// CHECK-NEXT: %[[C0:.*]] = snn.conv2d %[[X]], %[[W0T]] {channels_last, padding = array<i64: 1, 1>} : tensor<2x3x8x8x3xf32>, tensor<4x3x3x3xf32> -> tensor<2x3x8x8x4xf32>
// CHECK: %[[N0:.*]] = snn.batch_norm %[[C0]], {{.*}} {spatial_rank = 0 : i64} : tensor<2x3x8x8x4xf32>, tensor<4xf32>
// CHECK-NEXT: %[[S0:.*]] = snn.lif %[[N0]] : tensor<2x3x8x8x4xf32>
// CHECK-NEXT: %[[P0:.*]] = snn.avg_pool2d %[[S0]] {channels_last, kernel_size = array<i64: 2, 2>} : tensor<2x3x8x8x4xf32> -> tensor<2x3x4x4x4xf32>
// CHECK-NEXT: %[[W1:.*]] = snn.param "c1.weight"
// CHECK-NEXT: %[[W1T:.*]] = snn.transpose %[[W1]] {permutation = array<i64: 0, 2, 3, 1>} : tensor<5x4x3x3xf32> -> tensor<5x3x3x4xf32>
// CHECK-NEXT: %[[C1:.*]] = snn.conv2d %[[P0]], %[[W1T]] {channels_last, padding = array<i64: 1, 1>} : tensor<2x3x4x4x4xf32>, tensor<5x3x3x4xf32> -> tensor<2x3x4x4x5xf32>
// CHECK: snn.batch_norm {{.*}} {spatial_rank = 0 : i64} : tensor<2x3x4x4x5xf32>, tensor<5xf32>
// CHECK-NEXT: snn.lif {{.*}} : tensor<2x3x4x4x5xf32>
// CHECK-NEXT: %[[P1:.*]] = snn.avg_pool2d {{.*}} {channels_last, kernel_size = array<i64: 2, 2>} : tensor<2x3x4x4x5xf32> -> tensor<2x3x2x2x5xf32>
// CHECK-NEXT: %[[B:.*]] = snn.transpose %[[P1]] {permutation = array<i64: 0, 1, 4, 2, 3>} : tensor<2x3x2x2x5xf32> -> tensor<2x3x5x2x2xf32>
// CHECK-NEXT: snn.flatten %[[B]] : tensor<2x3x5x2x2xf32> -> tensor<2x3x20xf32>
// CHECK-NOT: snn.transpose
// CHECK: return

// expected-remark @+1 {{rewritten to channels-last: 8 ops, 4 transposes}}
func.func @forward(%x: tensor<2x3x3x8x8xf32>) -> tensor<2x3x10xf32> {
  %w0 = snn.param "c0.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x3x3x3xf32>
  %c0 = snn.conv2d %x, %w0 {padding = array<i64: 1, 1>} : tensor<2x3x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x3x4x8x8xf32>
  %g0 = snn.param "bn0.weight" {init = #snn.init<ones>} : tensor<4xf32>
  %b0 = snn.param "bn0.bias" : tensor<4xf32>
  %m0 = snn.param "bn0.running_mean" {trainable = false} : tensor<4xf32>
  %v0 = snn.param "bn0.running_var" {init = #snn.init<ones>, trainable = false} : tensor<4xf32>
  %n0 = snn.batch_norm %c0, %g0, %b0, %m0, %v0 : tensor<2x3x4x8x8xf32>, tensor<4xf32>
  %s0 = snn.lif %n0 {k = 0.5, c = 0.5} : tensor<2x3x4x8x8xf32>
  %p0 = snn.avg_pool2d %s0 {kernel_size = array<i64: 2, 2>} : tensor<2x3x4x8x8xf32> -> tensor<2x3x4x4x4xf32>
  %w1 = snn.param "c1.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x4x3x3xf32>
  %c1 = snn.conv2d %p0, %w1 {padding = array<i64: 1, 1>} : tensor<2x3x4x4x4xf32>, tensor<5x4x3x3xf32> -> tensor<2x3x5x4x4xf32>
  %g1 = snn.param "bn1.weight" {init = #snn.init<ones>} : tensor<5xf32>
  %b1 = snn.param "bn1.bias" : tensor<5xf32>
  %m1 = snn.param "bn1.running_mean" {trainable = false} : tensor<5xf32>
  %v1 = snn.param "bn1.running_var" {init = #snn.init<ones>, trainable = false} : tensor<5xf32>
  %n1 = snn.batch_norm %c1, %g1, %b1, %m1, %v1 : tensor<2x3x5x4x4xf32>, tensor<5xf32>
  %s1 = snn.lif %n1 {k = 0.5, c = 0.5} : tensor<2x3x5x4x4xf32>
  %p1 = snn.avg_pool2d %s1 {kernel_size = array<i64: 2, 2>} : tensor<2x3x5x4x4xf32> -> tensor<2x3x5x2x2xf32>
  %f = snn.flatten %p1 : tensor<2x3x5x2x2xf32> -> tensor<2x3x20xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x20xf32>
  %h = snn.linear %f, %wf : tensor<2x3x20xf32>, tensor<10x20xf32> -> tensor<2x3x10xf32>
  %o = snn.lif %h : tensor<2x3x10xf32>
  return %o : tensor<2x3x10xf32>
}

// -----

// Nothing to anchor the layout: no convolution.
// CHECK-LABEL: func.func @no_conv
// CHECK-NOT: snn.transpose
// expected-remark @+1 {{not rewritten to channels-last: no snn.conv2d on static [.., C, H, W] activations}}
func.func @no_conv(%x: tensor<2x3x4x8x8xf32>) -> tensor<2x3x4x4x4xf32> {
  %s = snn.lif %x : tensor<2x3x4x8x8xf32>
  %p = snn.avg_pool2d %s {kernel_size = array<i64: 2, 2>} : tensor<2x3x4x8x8xf32> -> tensor<2x3x4x4x4xf32>
  return %p : tensor<2x3x4x4x4xf32>
}

// -----

// A layer with per-neuron thresholds ([C, H, W]) stays channels-first: a
// transpose back in front of it; the max pooling after it follows its
// input's layout and stays channels-first too.
// CHECK-LABEL: func.func @per_neuron
// CHECK: snn.conv2d {{.*}} {channels_last} : tensor<1x2x4x4x1xf32>, tensor<2x1x1x1xf32> -> tensor<1x2x4x4x2xf32>
// CHECK-NEXT: %[[BACK:.*]] = snn.transpose {{.*}} {permutation = array<i64: 0, 1, 4, 2, 3>}
// CHECK-NEXT: %[[S:.*]] = snn.lif %[[BACK]] {v_th = dense
// CHECK-NEXT: snn.max_pool2d %[[S]] {kernel_size = array<i64: 2, 2>} : tensor<1x2x2x4x4xf32> -> tensor<1x2x2x2x2xf32>
// expected-remark @+1 {{rewritten to channels-last: 1 ops, 3 transposes}}
func.func @per_neuron(%x: tensor<1x2x1x4x4xf32>, %w: tensor<2x1x1x1xf32>) -> tensor<1x2x2x2x2xf32> {
  %c = snn.conv2d %x, %w : tensor<1x2x1x4x4xf32>, tensor<2x1x1x1xf32> -> tensor<1x2x2x4x4xf32>
  // expected-remark @+1 {{left in [.., C, H, W] by --snn-channels-last: its 'v_th' has one value per neuron}}
  %s = snn.lif %c {v_th = dense<0.5> : tensor<2x4x4xf32>} : tensor<1x2x2x4x4xf32>
  %p = snn.max_pool2d %s {kernel_size = array<i64: 2, 2>} : tensor<1x2x2x4x4xf32> -> tensor<1x2x2x2x2xf32>
  return %p : tensor<1x2x2x2x2xf32>
}

// -----

// After --snn-fuse (or --snn-autodiff) the pass leaves the function alone:
// the fused kernels and the gradients are built for [.., C, H, W].
// CHECK-LABEL: func.func @after_fuse
// CHECK-NOT: snn.transpose
// CHECK-NOT: channels_last
// expected-remark @+1 {{not rewritten to channels-last: the function has fused layers (run --snn-channels-last before --snn-fuse)}}
func.func @after_fuse(%x: tensor<1x2x1x4x4xf32>, %w: tensor<2x1x1x1xf32>) -> tensor<1x2x2x2x2xf32> {
  %c = snn.conv2d %x, %w : tensor<1x2x1x4x4xf32>, tensor<2x1x1x1xf32> -> tensor<1x2x2x4x4xf32>
  %s = snn.lif %c {snn.fused_pool = {kernel = array<i64: 2, 2>, kind = "avg"}} : tensor<1x2x2x4x4xf32>
  %p = snn.avg_pool2d %s {kernel_size = array<i64: 2, 2>} : tensor<1x2x2x4x4xf32> -> tensor<1x2x2x2x2xf32>
  return %p : tensor<1x2x2x2x2xf32>
}
