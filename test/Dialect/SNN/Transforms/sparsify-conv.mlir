// RUN: snn-opt %s --snn-sparsify -split-input-file -verify-diagnostics | FileCheck %s
// RUN: snn-opt %s --snn-sparsify="crossover=0.4" -split-input-file 2>/dev/null | FileCheck %s --check-prefix=EXPLICIT
// RUN: snn-opt %s --snn-sparsify="target=cuda" -split-input-file 2>&1 | FileCheck %s --check-prefix=CUDA

// With target=cpu (the default) a convolution on spikes, NCHW or NHWC, is
// rewritten; one on data, or grouped, stays dense with a remark.
// CHECK-LABEL: func.func @convs
// CHECK: %[[C:.*]] = snn.conv2d %{{.*}} {padding = array<i64: 1, 1>} : tensor<2x3x4x8x8xf32>
// CHECK: %[[S:.*]] = snn.lif %[[C]]
// CHECK: snn.conv2d %[[S]], %{{.*}} {event_driven = 2.500000e-01 : f64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}
// CHECK: snn.conv2d %[[S]], %{{.*}} {groups = 4 : i64}
// CHECK: snn.conv2d %{{.*}} {channels_last, event_driven = 2.500000e-01 : f64}
// EXPLICIT-LABEL: func.func @convs
// EXPLICIT: snn.conv2d %{{.*}} {event_driven = 4.000000e-01 : f64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}
// On a GPU cuDNN runs every convolution: all stay dense, with a remark.
// CUDA: remark: snn-sparsify: left dense: event-driven convolutions run on the CPU only (target=cpu); on a GPU cuDNN runs this layer
// (the remarks come before the output, the backward's too)
// CUDA: remark: snn-sparsify: weight gradient left dense: event-driven convolutions run on the CPU only (target=cpu)
// CUDA-LABEL: func.func @convs
// CUDA-NOT: event_driven
func.func @convs(%x: tensor<2x3x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %w2: tensor<8x4x3x3xf32>,
                 %wg: tensor<8x1x3x3xf32>, %xl: tensor<2x3x8x8x4xf32>, %wl: tensor<8x3x3x4xf32>)
    -> (tensor<2x3x8x4x4xf32>, tensor<2x3x8x6x6xf32>, tensor<2x3x6x6x8xf32>) {
  // expected-remark @+1 {{snn-sparsify: left dense: its input is a function argument (data, not spikes; pass input-is-spikes if it is spike data)}}
  %c = snn.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<2x3x4x8x8xf32>, tensor<4x4x3x3xf32> -> tensor<2x3x4x8x8xf32>
  %s = snn.lif %c : tensor<2x3x4x8x8xf32>
  %y = snn.conv2d %s, %w2 {padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<2x3x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<2x3x8x4x4xf32>
  // expected-remark @+1 {{snn-sparsify: left dense: a grouped convolution (groups = 4)}}
  %g = snn.conv2d %s, %wg {groups = 4} : tensor<2x3x4x8x8xf32>, tensor<8x1x3x3xf32> -> tensor<2x3x8x6x6xf32>
  %sl = snn.lif %xl : tensor<2x3x8x8x4xf32>
  %yl = snn.conv2d %sl, %wl {channels_last} : tensor<2x3x8x8x4xf32>, tensor<8x3x3x4xf32> -> tensor<2x3x6x6x8xf32>
  return %y, %g, %yl : tensor<2x3x8x4x4xf32>, tensor<2x3x8x6x6xf32>, tensor<2x3x6x6x8xf32>
}

// -----

// After --snn-autodiff: the weight gradient of a convolution on spikes is
// marked; one on data stays dense with a remark.
// CHECK-LABEL: func.func @backward
// CHECK: snn.conv2d_bwd %{{.*}}, %[[S:.*]], %{{.*}} {event_driven = 2.500000e-01 : f64, has_bias = false, need_gx = true}
// CHECK: snn.conv2d_bwd %{{.*}} {has_bias = false, need_gx = false}
func.func @backward(%x: tensor<2x3x4x6x6xf32>, %gy: tensor<2x3x8x4x4xf32>, %w: tensor<8x4x3x3xf32>)
    -> (tensor<2x3x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8x4x3x3xf32>) {
  %s = snn.lif %x : tensor<2x3x4x6x6xf32>
  %g:2 = snn.conv2d_bwd %gy, %s, %w {has_bias = false, need_gx = true} : tensor<2x3x8x4x4xf32>, tensor<2x3x4x6x6xf32>, tensor<8x4x3x3xf32> -> tensor<2x3x4x6x6xf32>, tensor<8x4x3x3xf32>
  // expected-remark @+1 {{snn-sparsify: weight gradient left dense: its input is a function argument (data, not spikes; pass input-is-spikes if it is spike data)}}
  %d = snn.conv2d_bwd %gy, %x, %w {has_bias = false, need_gx = false} : tensor<2x3x8x4x4xf32>, tensor<2x3x4x6x6xf32>, tensor<8x4x3x3xf32> -> tensor<8x4x3x3xf32>
  return %g#0, %g#1, %d : tensor<2x3x4x6x6xf32>, tensor<8x4x3x3xf32>, tensor<8x4x3x3xf32>
}
