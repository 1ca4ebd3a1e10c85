// Models without a NIR equivalent are rejected at the offending op.
// REQUIRES: snn-translate
// RUN: not snn-translate --export-nir %s -split-input-file -o %t.nir 2>&1 | FileCheck %s

// CHECK: error: 'snn.param' op 'fc.weight' has no value; pass a trained checkpoint with --export-nir-weights
func.func @forward(%x: tensor<4x2x3xf32>) -> tensor<4x2x2xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<2x3xf32>
  %h = snn.linear %x, %w : tensor<4x2x3xf32>, tensor<2x3xf32> -> tensor<4x2x2xf32>
  return %h : tensor<4x2x2xf32>
}

// -----

// CHECK: error: 'snn.max_pool2d' op has no NIR equivalent
func.func @forward(%x: tensor<4x2x1x4x4xf32>) -> tensor<4x2x1x2x2xf32> {
  %p = snn.max_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<4x2x1x4x4xf32> -> tensor<4x2x1x2x2xf32>
  return %p : tensor<4x2x1x2x2xf32>
}

// -----

// CHECK: error: 'snn.plif' op has a learned leak (PLIF), which NIR cannot express
func.func @forward(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %w = snn.param "plif.w" {value = dense<0.0> : tensor<1xf32>} : tensor<1xf32>
  %s = snn.plif %x, %w : tensor<4x2x3xf32>, tensor<1xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

// CHECK: error: NIR export needs a function @forward (the model)
func.func @a() { return }
func.func @b() { return }

// -----

// CHECK: error: 'snn.reshape' op has no NIR equivalent (only the reshapes around a convolution with a kernel of height 1, a Conv1d, and those that merge a run of dims, a Flatten, do)
func.func @forward(%x: tensor<4x2x6xf32>) -> tensor<4x2x2x3xf32> {
  %r = snn.reshape %x : tensor<4x2x6xf32> -> tensor<4x2x2x3xf32>
  return %r : tensor<4x2x2x3xf32>
}

// -----

// CHECK: error: 'snn.conv2d' op has asymmetric padding [1, 0, 0, 0] that is not PyTorch's 'same' (stride 1, the odd pad after): NIR convolutions pad symmetrically
func.func @forward(%x: tensor<4x2x1x6x6xf32>) -> tensor<4x2x2x6x6xf32> {
  %w = snn.param "conv.weight" {value = dense<1.0> : tensor<2x1x2x1xf32>} : tensor<2x1x2x1xf32>
  %c = snn.conv2d %x, %w {padding = array<i64: 1, 0, 0, 0>} : tensor<4x2x1x6x6xf32>, tensor<2x1x2x1xf32> -> tensor<4x2x2x6x6xf32>
  return %c : tensor<4x2x2x6x6xf32>
}

// -----

// NIR is NCHW: a channels-last convolution is refused.
// CHECK: error: 'snn.conv2d' op is channels_last (NHWC); NIR export needs the NCHW form (export before --snn-channels-last)
func.func @forward(%x: tensor<4x2x4x4x1xf32>) -> tensor<4x2x2x2x2xf32> {
  %w = snn.param "conv.weight" {value = dense<0.5> : tensor<2x3x3x1xf32>} : tensor<2x3x3x1xf32>
  %c = snn.conv2d %x, %w {channels_last} : tensor<4x2x4x4x1xf32>, tensor<2x3x3x1xf32> -> tensor<4x2x2x2x2xf32>
  return %c : tensor<4x2x2x2x2xf32>
}
