// RUN: snn-opt %s --snn-autodiff | FileCheck %s

// The backward of a channels-last convolution runs in its layout: the
// conv2d_bwd carries channels_last and its gradients are NHWC (gx) and
// [O, KH, KW, C] (gw); an NCHW convolution's backward stays without it.

// CHECK-LABEL: func.func @forward
// CHECK-LABEL: func.func @train_step
// CHECK: snn.conv2d_bwd %{{.*}} {channels_last, has_bias = false, need_gx = true, padding = array<i64: 1, 1>} : tensor<2x3x4x4x5xf32>, tensor<2x3x4x4x2xf32>, tensor<5x3x3x2xf32> -> tensor<2x3x4x4x2xf32>, tensor<5x3x3x2xf32>
// CHECK: snn.conv2d_bwd %{{.*}} {channels_last, has_bias = true, need_gx = false, stride = array<i64: 2, 2>} : tensor<2x3x4x4x2xf32>, tensor<2x3x9x9x1xf32>, tensor<2x3x3x1xf32> -> tensor<2x3x3x1xf32>, tensor<2xf32>
func.func @forward(%x: tensor<2x3x9x9x1xf32>) -> tensor<2x3x10xf32> {
  %w = snn.param "conv1.weight" {init = #snn.init<kaiming_uniform>} : tensor<2x3x3x1xf32>
  %b = snn.param "conv1.bias" : tensor<2xf32>
  %c = snn.conv2d %x, %w, %b {channels_last, stride = array<i64: 2, 2>} : tensor<2x3x9x9x1xf32>, tensor<2x3x3x1xf32>, tensor<2xf32> -> tensor<2x3x4x4x2xf32>
  %s = snn.lif %c : tensor<2x3x4x4x2xf32>
  %w2 = snn.param "conv2.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x3x3x2xf32>
  %c2 = snn.conv2d %s, %w2 {channels_last, padding = array<i64: 1, 1>} : tensor<2x3x4x4x2xf32>, tensor<5x3x3x2xf32> -> tensor<2x3x4x4x5xf32>
  %s2 = snn.lif %c2 : tensor<2x3x4x4x5xf32>
  %f = snn.flatten %s2 : tensor<2x3x4x4x5xf32> -> tensor<2x3x80xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x80xf32>
  %h = snn.linear %f, %wf : tensor<2x3x80xf32>, tensor<10x80xf32> -> tensor<2x3x10xf32>
  %o = snn.lif %h : tensor<2x3x10xf32>
  return %o : tensor<2x3x10xf32>
}
