// RUN: snn-opt %s --snn-fuse --split-input-file --verify-diagnostics | FileCheck %s
// RUN: snn-opt --help | FileCheck %s --check-prefix=HELP
// HELP: --snn-fuse - Fuse spiking layers with the batch norm before them, the average/sum pooling

// Tiling average and sum poolings of lif, if and cuba_lif spikes are
// fused: each layer names its pooling's kind and window in snn.fused_pool,
// and both ops stay (the module emitter writes them as one neuron op).
// CHECK-LABEL: func.func @fusable
// CHECK: snn.lif %{{.*}} {snn.fused_pool = {kernel = array<i64: 2, 2>, kind = "avg"}}
// CHECK-NEXT: snn.avg_pool2d
// CHECK: snn.if %{{.*}} {snn.fused_pool = {kernel = array<i64: 2, 2>, kind = "sum"}}
// CHECK-NEXT: snn.sum_pool2d
// CHECK: snn.cuba_lif %{{.*}} {snn.fused_pool = {kernel = array<i64: 4, 4>, kind = "avg"}}
// CHECK-NEXT: snn.avg_pool2d
func.func @fusable(%x: tensor<4x2x3x8x8xf32>) -> (tensor<4x2x3x4x4xf32>, tensor<4x2x3x4x4xf32>, tensor<4x2x3x2x2xf32>) {
  // expected-remark @+1 {{fused with the following snn.avg_pool2d: the 0.0 MiB spike tensor is not written}}
  %s = snn.lif %x : tensor<4x2x3x8x8xf32>
  %p = snn.avg_pool2d %s {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  // expected-remark @+1 {{fused with the following snn.sum_pool2d}}
  %i = snn.if %x : tensor<4x2x3x8x8xf32>
  %q = snn.sum_pool2d %i {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  // expected-remark @+1 {{fused with the following snn.avg_pool2d}}
  %c = snn.cuba_lif %x : tensor<4x2x3x8x8xf32>
  %r = snn.avg_pool2d %c {kernel_size = array<i64: 4, 4>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x2x2xf32>
  return %p, %q, %r : tensor<4x2x3x4x4xf32>, tensor<4x2x3x4x4xf32>, tensor<4x2x3x2x2xf32>
}

// -----

// In training the neuron backward reads the saved membrane, not the spikes:
// its use does not prevent the fusion. The layer is fused when the gradient
// of its spikes is exactly its pooling's backward (the fused neuron backward
// reads the pooled gradient); the pooling and its backward stay in the IR.
// CHECK-LABEL: func.func @trained
// CHECK: snn.lif %{{.*}} {snn.fused_pool = {kernel = array<i64: 2, 2>, kind = "avg"}}
// CHECK-NEXT: snn.avg_pool2d
// CHECK-NEXT: snn.avg_pool2d_bwd
// CHECK-NEXT: snn.neuron_bwd
// CHECK: snn.cuba_lif %{{.*}} {snn.fused_pool = {kernel = array<i64: 2, 4>, kind = "sum"}}
// CHECK-NEXT: snn.sum_pool2d
// CHECK-NEXT: snn.sum_pool2d_bwd
// CHECK-NEXT: snn.neuron_bwd
func.func @trained(%x: tensor<4x2x3x8x8xf32>, %gp: tensor<4x2x3x4x4xf32>, %gq: tensor<4x2x3x4x2xf32>)
    -> (tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x3x4x2xf32>, tensor<4x2x3x8x8xf32>) {
  // expected-remark @+1 {{fused (train) with the following snn.avg_pool2d: the 0.0 MiB spike tensor and its gradient are not written}}
  %s = snn.lif %x : tensor<4x2x3x8x8xf32>
  %p = snn.avg_pool2d %s {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  %gs = snn.avg_pool2d_bwd %gp {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x4x4xf32> -> tensor<4x2x3x8x8xf32>
  %gx = snn.neuron_bwd %gs, %s : tensor<4x2x3x8x8xf32>
  // expected-remark @+1 {{fused (train) with the following snn.sum_pool2d}}
  %c = snn.cuba_lif %x : tensor<4x2x3x8x8xf32>
  %q = snn.sum_pool2d %c {kernel_size = array<i64: 2, 4>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x2xf32>
  %gc = snn.sum_pool2d_bwd %gq {kernel_size = array<i64: 2, 4>} : tensor<4x2x3x4x2xf32> -> tensor<4x2x3x8x8xf32>
  %gy = snn.neuron_bwd %gc, %c : tensor<4x2x3x8x8xf32>
  return %p, %gx, %q, %gy : tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x3x4x2xf32>, tensor<4x2x3x8x8xf32>
}

// -----

// Training layers whose spike gradient is not the pooling's backward alone
// stay unfused: a gradient from elsewhere, a backward of another window, a
// pooling backward read by another op too, and max pooling.
// CHECK-LABEL: func.func @trained_unfused
// CHECK-NOT: snn.fused_pool
func.func @trained_unfused(%x: tensor<4x2x3x8x8xf32>, %g: tensor<4x2x3x8x8xf32>, %gp: tensor<4x2x3x4x4xf32>)
    -> (tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>,
        tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>) {
  // expected-remark @+1 {{not fused with the following snn.avg_pool2d (train): the gradient of the spikes is not the backward of that pooling}}
  %a = snn.lif %x : tensor<4x2x3x8x8xf32>
  %pa = snn.avg_pool2d %a {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  %ga = snn.neuron_bwd %g, %a : tensor<4x2x3x8x8xf32>
  // expected-remark @+1 {{not fused with the following snn.avg_pool2d (train): the gradient of the spikes is not the backward of that pooling}}
  %b = snn.lif %x : tensor<4x2x3x8x8xf32>
  %pb = snn.avg_pool2d %b {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  %gsb = snn.sum_pool2d_bwd %gp {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x4x4xf32> -> tensor<4x2x3x8x8xf32>
  %gb = snn.neuron_bwd %gsb, %b : tensor<4x2x3x8x8xf32>
  // expected-remark @+1 {{not fused with the following snn.avg_pool2d (train): the pooling's backward has other users besides the neuron backward}}
  %c = snn.lif %x : tensor<4x2x3x8x8xf32>
  %pc = snn.avg_pool2d %c {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  %gsc = snn.avg_pool2d_bwd %gp {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x4x4xf32> -> tensor<4x2x3x8x8xf32>
  %gc = snn.neuron_bwd %gsc, %c : tensor<4x2x3x8x8xf32>
  // expected-remark @+1 {{not fused with the following snn.max_pool2d (train): max pooling's backward needs the unpooled spikes to find each window's maximum}}
  %d = snn.lif %x : tensor<4x2x3x8x8xf32>
  %pd = snn.max_pool2d %d {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  %gsd = snn.max_pool2d_bwd %gp, %d {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x4x4xf32> -> tensor<4x2x3x8x8xf32>
  %gd = snn.neuron_bwd %gsd, %d : tensor<4x2x3x8x8xf32>
  return %pa, %ga, %pb, %gb, %pc, %gsc, %gc, %pd, %gd
      : tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>,
        tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>
}

// -----

// Windows that overlap, are padded, or leave part of the input out.
// CHECK-LABEL: func.func @not_tiling
// CHECK-NOT: snn.fused_pool
func.func @not_tiling(%x: tensor<4x2x3x5x5xf32>) -> (tensor<4x2x3x2x2xf32>, tensor<4x2x3x3x3xf32>, tensor<4x2x3x2x2xf32>) {
  // expected-remark @+1 {{not fused with the following snn.avg_pool2d: its windows overlap or leave gaps (kernel 3x3, stride 2x2)}}
  %a = snn.lif %x : tensor<4x2x3x5x5xf32>
  %pa = snn.avg_pool2d %a {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>} : tensor<4x2x3x5x5xf32> -> tensor<4x2x3x2x2xf32>
  // expected-remark @+1 {{not fused with the following snn.sum_pool2d: its windows are padded (1x1)}}
  %b = snn.lif %x : tensor<4x2x3x5x5xf32>
  %pb = snn.sum_pool2d %b {kernel_size = array<i64: 2, 2>, padding = array<i64: 1, 1>} : tensor<4x2x3x5x5xf32> -> tensor<4x2x3x3x3xf32>
  // expected-remark @+1 {{not fused with the following snn.avg_pool2d: its 2x2 windows do not tile the 5x5 input}}
  %c = snn.lif %x : tensor<4x2x3x5x5xf32>
  %pc = snn.avg_pool2d %c {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x5x5xf32> -> tensor<4x2x3x2x2xf32>
  return %pa, %pb, %pc : tensor<4x2x3x2x2xf32>, tensor<4x2x3x3x3xf32>, tensor<4x2x3x2x2xf32>
}

// -----

// Max pooling, spikes read elsewhere too, and neurons without spikes or
// without a generated kernel stay unfused; a neuron without a pooling gets
// no remark.
// CHECK-LABEL: func.func @other_cases
// CHECK-NOT: snn.fused_pool
func.func @other_cases(%x: tensor<4x2x3x8x8xf32>, %w: tensor<1xf32>)
    -> (tensor<4x2x3x4x4xf32>, tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x3x4x4xf32>, tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>) {
  // expected-remark @+1 {{not fused with the following snn.max_pool2d: max pooling's backward needs the unpooled spikes to find each window's maximum}}
  %a = snn.lif %x : tensor<4x2x3x8x8xf32>
  %pa = snn.max_pool2d %a {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  // expected-remark @+1 {{not fused with the following snn.avg_pool2d: the spikes have 1 other user(s) besides the pooling}}
  %b = snn.lif %x : tensor<4x2x3x8x8xf32>
  %pb = snn.avg_pool2d %b {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  // expected-remark @+1 {{not fused with the following snn.avg_pool2d: snn.li outputs its membrane, not spikes}}
  %c = snn.li %x : tensor<4x2x3x8x8xf32>
  %pc = snn.avg_pool2d %c {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  // expected-remark @+1 {{not fused with the following snn.avg_pool2d: snn.plif has no generated neuron kernel to fuse into}}
  %d = snn.plif %x, %w : tensor<4x2x3x8x8xf32>, tensor<1xf32>
  %pd = snn.avg_pool2d %d {kernel_size = array<i64: 2, 2>} : tensor<4x2x3x8x8xf32> -> tensor<4x2x3x4x4xf32>
  %e = snn.lif %x : tensor<4x2x3x8x8xf32>
  return %pa, %pb, %b, %pc, %pd, %e : tensor<4x2x3x4x4xf32>, tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>, tensor<4x2x3x4x4xf32>, tensor<4x2x3x4x4xf32>, tensor<4x2x3x8x8xf32>
}

// -----

// Channels-last pooling (--snn-channels-last) is fused too: the attribute
// says so, and the windows tile the [H, W] of [.., H, W, C] (6x4 by 2x2
// here, which would not tile a [.., 4, 3] map). A batch norm with
// spatial_rank = 0 in front is fused as well.
// CHECK-LABEL: func.func @channels_last
// CHECK: snn.lif {{.*}}snn.fused_batch_norm = {{.*}}snn.fused_pool = {channels_last, kernel = array<i64: 2, 2>, kind = "avg"}
// CHECK-NEXT: snn.avg_pool2d
// CHECK: snn.if %{{.*}} {snn.fused_pool = {channels_last, kernel = array<i64: 2, 2>, kind = "sum"}}
// CHECK-NEXT: snn.sum_pool2d
func.func @channels_last(%x: tensor<4x2x6x4x3xf32>, %g: tensor<3xf32>) -> (tensor<4x2x3x2x3xf32>, tensor<4x2x3x2x3xf32>) {
  %n = snn.batch_norm %x, %g, %g, %g, %g {spatial_rank = 0} : tensor<4x2x6x4x3xf32>, tensor<3xf32>
  // expected-remark @+2 {{fused with the preceding snn.batch_norm}}
  // expected-remark @+1 {{fused with the following snn.avg_pool2d}}
  %s = snn.lif %n : tensor<4x2x6x4x3xf32>
  %p = snn.avg_pool2d %s {channels_last, kernel_size = array<i64: 2, 2>} : tensor<4x2x6x4x3xf32> -> tensor<4x2x3x2x3xf32>
  // expected-remark @+1 {{fused with the following snn.sum_pool2d}}
  %s2 = snn.if %x : tensor<4x2x6x4x3xf32>
  %q = snn.sum_pool2d %s2 {channels_last, kernel_size = array<i64: 2, 2>} : tensor<4x2x6x4x3xf32> -> tensor<4x2x3x2x3xf32>
  return %p, %q : tensor<4x2x3x2x3xf32>, tensor<4x2x3x2x3xf32>
}

// -----

// Channels last, the windows must tile [H, W], not the trailing [W, C].
// CHECK-LABEL: func.func @channels_last_no_tiling
// CHECK-NOT: snn.fused_pool
func.func @channels_last_no_tiling(%x: tensor<4x2x6x6x4xf32>) -> tensor<4x2x1x1x4xf32> {
  // expected-remark @+1 {{not fused with the following snn.avg_pool2d: its 4x4 windows do not tile the 6x6 input}}
  %s = snn.lif %x : tensor<4x2x6x6x4xf32>
  %p = snn.avg_pool2d %s {channels_last, kernel_size = array<i64: 4, 4>} : tensor<4x2x6x6x4xf32> -> tensor<4x2x1x1x4xf32>
  return %p : tensor<4x2x1x1x4xf32>
}
