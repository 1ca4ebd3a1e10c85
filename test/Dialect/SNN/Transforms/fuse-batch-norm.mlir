// RUN: snn-opt %s --snn-fuse="recompute=false" --split-input-file --verify-diagnostics | FileCheck %s
// RUN: snn-opt %s --snn-fuse="batch-norm=false pool=false" --split-input-file | FileCheck %s --check-prefix=OFF
// OFF-NOT: snn.fused_
// RUN: snn-opt %s --snn-fuse="batch-norm-backward=false recompute=false" --split-input-file 2>/dev/null | FileCheck %s --check-prefix=OFFBWD
// OFFBWD-NOT: backward = true

// A batch norm whose output only a lif, if, li or cuba_lif layer reads is
// applied by that layer: it gets snn.fused_batch_norm with the batch norm's
// spatial rank and eps, and both ops stay (the module emitter writes no y).
// CHECK-LABEL: func.func @fusable
// CHECK: snn.lif %{{.*}} {snn.fused_batch_norm = {eps = 1.000000e-05 : f64, spatial_rank = 2 : i64}}
// CHECK: snn.if %{{.*}} {snn.fused_batch_norm = {eps = 1.000000e-03 : f64, spatial_rank = 2 : i64}}
// CHECK: snn.li %{{.*}} {snn.fused_batch_norm = {eps = 1.000000e-05 : f64, spatial_rank = 0 : i64}}
// CHECK: snn.cuba_lif %{{.*}} {snn.fused_batch_norm = {eps = 1.000000e-05 : f64, spatial_rank = 2 : i64}}
func.func @fusable(%x: tensor<4x2x3x8x8xf32>, %f: tensor<4x2x5xf32>, %g: tensor<3xf32>, %g5: tensor<5xf32>) -> (tensor<4x2x3x8x8xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x5xf32>, tensor<4x2x3x8x8xf32>) {
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+1 {{fused with the preceding snn.batch_norm: the 0.0 MiB normalized tensor is not written}}
  %s = snn.lif %y : tensor<4x2x3x8x8xf32>
  %y2 = snn.batch_norm %x, %g, %g, %g, %g {eps = 1.0e-3} : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+1 {{fused with the preceding snn.batch_norm}}
  %i = snn.if %y2 : tensor<4x2x3x8x8xf32>
  %y3 = snn.batch_norm %f, %g5, %g5, %g5, %g5 {spatial_rank = 0 : i64} : tensor<4x2x5xf32>, tensor<5xf32>
  // expected-remark @+1 {{fused with the preceding snn.batch_norm}}
  %l = snn.li %y3 : tensor<4x2x5xf32>
  %y4 = snn.batch_norm %x, %g, %g, %g, %g : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+1 {{fused with the preceding snn.batch_norm}}
  %c = snn.cuba_lif %y4 : tensor<4x2x3x8x8xf32>
  return %s, %i, %l, %c : tensor<4x2x3x8x8xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x5xf32>, tensor<4x2x3x8x8xf32>
}

// -----

// In training the layer applies the batch norm too: snn.batch_norm_bwd
// names the batch norm's output only to find its saved statistics (it reads
// x), and the neuron backward reads the saved membrane. The layer's input
// gradient goes to the snn.batch_norm_bwd alone, and a thread's 4 neurons
// lie in one channel: the neuron backward computes the batch norm
// backward's sums (backward).
// CHECK-LABEL: func.func @trained
// CHECK: snn.lif %{{.*}} {snn.fused_batch_norm = {backward = true, eps = 1.000000e-05 : f64, spatial_rank = 2 : i64}}
// CHECK: snn.batch_norm_bwd
// OFFBWD-LABEL: func.func @trained
// OFFBWD: snn.lif %{{.*}} {snn.fused_batch_norm = {eps = 1.000000e-05 : f64, spatial_rank = 2 : i64}}
func.func @trained(%x: tensor<4x2x3x8x8xf32>, %g: tensor<3xf32>, %gs: tensor<4x2x3x8x8xf32>) -> (tensor<4x2x3x8x8xf32>, tensor<3xf32>) {
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+2 {{fused with the preceding snn.batch_norm}}
  // expected-remark @+1 {{batch norm backward fused: the neuron backward sums gY and gY xhat per channel (the batch norm's statistics kernel is not run)}}
  %s = snn.lif %y : tensor<4x2x3x8x8xf32>
  %gy = snn.neuron_bwd %gs, %s : tensor<4x2x3x8x8xf32>
  %gx, %gg, %gb = snn.batch_norm_bwd %gy, %x, %g, %y : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  return %gx, %gg : tensor<4x2x3x8x8xf32>, tensor<3xf32>
}

// -----

// Both fusions on one layer (inference): the layer reads x, normalizes it
// on load and writes the pooled spikes only.
// CHECK-LABEL: func.func @with_pool
// CHECK: snn.lif %{{.*}} {snn.fused_batch_norm = {{{.*}}}, snn.fused_pool = {kernel = array<i64: 2, 2>, kind = "avg"}}
func.func @with_pool(%x: tensor<4x2x3x8x8xf32>, %g: tensor<3xf32>) -> tensor<4x2x3x4x4xf32> {
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+2 {{fused with the preceding snn.batch_norm}}
  // expected-remark @+1 {{fused with the following snn.avg_pool2d}}
  %s = snn.lif %y : tensor<4x2x3x8x8xf32>
  %p = snn.avg_pool2d %s {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  return %p : tensor<4x2x3x4x4xf32>
}

// -----

// The normalized tensor must be written when something else reads it (here
// a residual add).
// CHECK-LABEL: func.func @shared
// CHECK-NOT: snn.fused_batch_norm
func.func @shared(%x: tensor<4x2x3x8x8xf32>, %g: tensor<3xf32>) -> (tensor<4x2x3x8x8xf32>, tensor<4x2x3x8x8xf32>) {
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+1 {{not fused with the preceding snn.batch_norm: the batch norm's output has 1 other user(s) besides the layer}}
  %s = snn.lif %y : tensor<4x2x3x8x8xf32>
  %a = snn.add %y, %s : tensor<4x2x3x8x8xf32>
  return %s, %a : tensor<4x2x3x8x8xf32>, tensor<4x2x3x8x8xf32>
}

// -----

// Two layers on one batch norm: each sees the other as a reader.
// CHECK-LABEL: func.func @two_layers
// CHECK-NOT: snn.fused_batch_norm
func.func @two_layers(%x: tensor<4x2x3x8x8xf32>, %g: tensor<3xf32>) -> (tensor<4x2x3x8x8xf32>, tensor<4x2x3x8x8xf32>) {
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+1 {{not fused with the preceding snn.batch_norm: the batch norm's output has 1 other user(s) besides the layer}}
  %s = snn.lif %y : tensor<4x2x3x8x8xf32>
  // expected-remark @+1 {{not fused with the preceding snn.batch_norm: the batch norm's output has 1 other user(s) besides the layer}}
  %t = snn.if %y : tensor<4x2x3x8x8xf32>
  return %s, %t : tensor<4x2x3x8x8xf32>, tensor<4x2x3x8x8xf32>
}

// -----

// Not fused: a batch norm before a pooling or a convolution (no neuron
// kernel to apply it; no remark, the pass looks at neuron layers), and a
// neuron layer without a batch norm in front of it.
// CHECK-LABEL: func.func @not_a_neuron
// CHECK-NOT: snn.fused_batch_norm
func.func @not_a_neuron(%x: tensor<4x2x3x8x8xf32>, %g: tensor<3xf32>) -> (tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>) {
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  %p = snn.max_pool2d %y {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  %s = snn.lif %x : tensor<4x2x3x8x8xf32>
  return %p, %s : tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>
}

// -----

// snn.plif is left alone (its kernel ABI puts the decay weight first).
// CHECK-LABEL: func.func @plif
// CHECK-NOT: snn.fused_batch_norm
func.func @plif(%x: tensor<4x2x3x8x8xf32>, %g: tensor<3xf32>, %w: tensor<1xf32>) -> tensor<4x2x3x8x8xf32> {
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+1 {{not fused with the preceding snn.batch_norm: snn.plif is not fused with its batch norm yet}}
  %s = snn.plif %y, %w : tensor<4x2x3x8x8xf32>, tensor<1xf32>
  return %s : tensor<4x2x3x8x8xf32>
}

// -----

// A pooled layer's backward threads hold KH KW = 4 neurons of one channel
// (its 8x8 map: 16 threads): fused with both, the backward sums too.
// CHECK-LABEL: func.func @trained_pool
// CHECK: snn.lif %{{.*}} {snn.fused_batch_norm = {backward = true, {{.*}}}, snn.fused_pool = {kernel = array<i64: 2, 2>, kind = "avg"}}
func.func @trained_pool(%x: tensor<4x2x3x8x8xf32>, %g: tensor<3xf32>, %gp: tensor<4x2x3x4x4xf32>) -> (tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>) {
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+3 {{fused with the preceding snn.batch_norm}}
  // expected-remark @+2 {{fused (train) with the following snn.avg_pool2d}}
  // expected-remark @+1 {{batch norm backward fused}}
  %s = snn.lif %y : tensor<4x2x3x8x8xf32>
  %p = snn.avg_pool2d %s {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  %gs = snn.avg_pool2d_bwd %gp {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x4x4xf32> -> tensor<4x2x3x8x8xf32>
  %gy = snn.neuron_bwd %gs, %s : tensor<4x2x3x8x8xf32>
  %gx, %gg, %gb = snn.batch_norm_bwd %gy, %x, %g, %y : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  return %p, %gx : tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>
}

// -----

// The backward is not fused (the forward is): the gradient the neuron
// backward writes has another reader besides snn.batch_norm_bwd, or a
// channel's 3x3 positions are not a multiple of a thread's 4 neurons. A
// channel's 6x6 positions, 9 threads (padded to 16 slots), are fused.
// CHECK-LABEL: func.func @trained_unfused
// CHECK: snn.lif %{{.*}} {snn.fused_batch_norm = {eps = 1.000000e-05 : f64, spatial_rank = 2 : i64}}
// CHECK: snn.lif %{{.*}} {snn.fused_batch_norm = {eps = 1.000000e-05 : f64, spatial_rank = 2 : i64}}
// CHECK: snn.lif %{{.*}} {snn.fused_batch_norm = {backward = true, eps = 1.000000e-05 : f64, spatial_rank = 2 : i64}}
func.func @trained_unfused(%x: tensor<4x2x3x8x8xf32>, %x3: tensor<4x2x4x3x3xf32>, %x6: tensor<4x2x3x6x6xf32>, %g: tensor<3xf32>, %g4: tensor<4xf32>, %gs: tensor<4x2x3x8x8xf32>, %gs3: tensor<4x2x4x3x3xf32>, %gs6: tensor<4x2x3x6x6xf32>) -> (tensor<4x2x3x8x8xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x4x3x3xf32>, tensor<4x2x3x6x6xf32>) {
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+2 {{fused with the preceding snn.batch_norm}}
  // expected-remark @+1 {{batch norm backward not fused: the gradient of the batch norm's output has other users than its snn.batch_norm_bwd}}
  %s = snn.lif %y : tensor<4x2x3x8x8xf32>
  %gy = snn.neuron_bwd %gs, %s : tensor<4x2x3x8x8xf32>
  %gx, %gg, %gb = snn.batch_norm_bwd %gy, %x, %g, %y : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  %y3 = snn.batch_norm %x3, %g4, %g4, %g4, %g4 : tensor<4x2x4x3x3xf32>, tensor<4xf32>
  // expected-remark @+2 {{fused with the preceding snn.batch_norm}}
  // expected-remark @+1 {{batch norm backward not fused: a backward thread's 4 neurons span two channels (a channel has 9 positions)}}
  %s3 = snn.lif %y3 : tensor<4x2x4x3x3xf32>
  %gy3 = snn.neuron_bwd %gs3, %s3 : tensor<4x2x4x3x3xf32>
  %gx3, %gg3, %gb3 = snn.batch_norm_bwd %gy3, %x3, %g4, %y3 : tensor<4x2x4x3x3xf32>, tensor<4xf32>
  %y6 = snn.batch_norm %x6, %g, %g, %g, %g : tensor<4x2x3x6x6xf32>, tensor<3xf32>
  // expected-remark @+2 {{fused with the preceding snn.batch_norm}}
  // expected-remark @+1 {{batch norm backward fused}}
  %s6 = snn.lif %y6 : tensor<4x2x3x6x6xf32>
  %gy6 = snn.neuron_bwd %gs6, %s6 : tensor<4x2x3x6x6xf32>
  %gx6, %gg6, %gb6 = snn.batch_norm_bwd %gy6, %x6, %g, %y6 : tensor<4x2x3x6x6xf32>, tensor<3xf32>
  return %gy, %gx, %gx3, %gx6 : tensor<4x2x3x8x8xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x4x3x3xf32>, tensor<4x2x3x6x6xf32>
}
