// RUN: snn-opt %s | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: snn-opt %s | snn-opt | FileCheck %s
// RUN: snn-opt %s -mlir-print-op-generic | snn-opt | FileCheck %s

// CHECK-LABEL: func.func @neurons_multi_step
func.func @neurons_multi_step(%x: tensor<4x2x3xf32>, %w1: tensor<1xf32>, %wn: tensor<3xf32>)
    -> (tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>,
        tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>) {
  // CHECK: snn.lif %{{.*}} : tensor<4x2x3xf32>
  %0 = snn.lif %x : tensor<4x2x3xf32>
  // CHECK: snn.lif %{{.*}} {c = 1.000000e+00 : f64, detach_reset, k = 2.500000e-01 : f64, reset = #snn.reset<soft>, strict, surrogate = #snn.surrogate<fast_sigmoid, alpha = 1.000000e+01 : f64, theta_grad = 5.000000e-01 : f64>, v_init = 2.000000e-01 : f64, v_leak = -1.000000e-01 : f64, v_reset = -5.000000e-01 : f64, v_th = 1.500000e+00 : f64} : tensor<4x2x3xf32>
  %1 = snn.lif %x {k = 0.25, c = 1.0, v_leak = -0.1, v_th = 1.5, v_reset = -0.5,
                   reset = #snn.reset<soft>, v_init = 0.2, strict, detach_reset,
                   surrogate = #snn.surrogate<fast_sigmoid, alpha = 10.0, theta_grad = 0.5>}
       : tensor<4x2x3xf32>
  // Per-neuron parameters: one value per feature.
  // CHECK: snn.lif %{{.*}} {k = dense<[1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<3xf32>, surrogate = #snn.surrogate<atan, alpha = 2.000000e+00 : f64>, v_th = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>}
  %2 = snn.lif %x {k = dense<[0.1, 0.2, 0.3]> : tensor<3xf32>,
                   v_th = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>,
                   surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<4x2x3xf32>
  // CHECK: snn.if %{{.*}} {c = 2.000000e+00 : f64, surrogate = #snn.surrogate<triangle, alpha = 1.000000e+00 : f64>} : tensor<4x2x3xf32>
  %3 = snn.if %x {c = 2.0, surrogate = #snn.surrogate<triangle, alpha = 1.0>} : tensor<4x2x3xf32>
  // CHECK: snn.plif %{{.*}}, %{{.*}} : tensor<4x2x3xf32>, tensor<1xf32>
  %4 = snn.plif %x, %w1 : tensor<4x2x3xf32>, tensor<1xf32>
  // CHECK: snn.plif %{{.*}}, %{{.*}} {decay_input = false, v_leak = 1.000000e-01 : f64} : tensor<4x2x3xf32>, tensor<3xf32>
  %5 = snn.plif %x, %wn {decay_input = false, v_leak = 0.1} : tensor<4x2x3xf32>, tensor<3xf32>
  // CHECK: snn.li %{{.*}} {k = 1.000000e-01 : f64, v_init = 1.000000e+00 : f64} : tensor<4x2x3xf32>
  %6 = snn.li %x {k = 0.1, v_init = 1.0} : tensor<4x2x3xf32>
  // CHECK: snn.cuba_lif %{{.*}} {c_syn = 2.000000e+00 : f64, i_init = 1.000000e-01 : f64, k_syn = 2.000000e-01 : f64, surrogate = #snn.surrogate<sigmoid, alpha = 4.000000e+00 : f64>} : tensor<4x2x3xf32>
  %7 = snn.cuba_lif %x {k_syn = 0.2, c_syn = 2.0, i_init = 0.1,
                        surrogate = #snn.surrogate<sigmoid, alpha = 4.0>} : tensor<4x2x3xf32>
  return %0, %1, %2, %3, %4, %6, %7 : tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>,
      tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>
}

// The sparse backward's band: a finite width, and inf (as no band).
// CHECK-LABEL: func.func @surrogate_band
func.func @surrogate_band(%x: tensor<4x2x3xf32>) -> (tensor<4x2x3xf32>, tensor<4x2x3xf32>) {
  // CHECK: snn.lif %{{.*}} {surrogate = #snn.surrogate<atan, alpha = 2.000000e+00 : f64, theta_grad = 1.000000e-01 : f64, grad_band = 2.500000e-01 : f64>} : tensor<4x2x3xf32>
  %0 = snn.lif %x {surrogate = #snn.surrogate<atan, alpha = 2.0, theta_grad = 0.1, grad_band = 0.25>} : tensor<4x2x3xf32>
  // CHECK: snn.if %{{.*}} {surrogate = #snn.surrogate<sigmoid, alpha = 4.000000e+00 : f64, grad_band = 0x7FF0000000000000 : f64>} : tensor<4x2x3xf32>
  %1 = snn.if %x {surrogate = #snn.surrogate<sigmoid, alpha = 4.0, grad_band = 0x7FF0000000000000 : f64>} : tensor<4x2x3xf32>
  return %0, %1 : tensor<4x2x3xf32>, tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @neurons_step
func.func @neurons_step(%x: tensor<2x3xf32>, %v: tensor<2x3xf32>, %i: tensor<2x3xf32>,
                        %w: tensor<1xf32>) -> tensor<2x3xf32> {
  // CHECK: %{{.*}}, %{{.*}} = snn.lif_step %{{.*}}, %{{.*}} {k = 1.000000e-01 : f64} : tensor<2x3xf32>
  %s0, %v0 = snn.lif_step %x, %v {k = 0.1} : tensor<2x3xf32>
  // CHECK: snn.if_step %{{.*}}, %{{.*}} {reset = #snn.reset<soft>} : tensor<2x3xf32>
  %s1, %v1 = snn.if_step %x, %v0 {reset = #snn.reset<soft>} : tensor<2x3xf32>
  // CHECK: snn.plif_step %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<1xf32>
  %s2, %v2 = snn.plif_step %x, %v1, %w : tensor<2x3xf32>, tensor<1xf32>
  // CHECK: snn.li_step %{{.*}}, %{{.*}} : tensor<2x3xf32>
  %v3 = snn.li_step %x, %v2 : tensor<2x3xf32>
  // CHECK: snn.cuba_lif_step %{{.*}}, %{{.*}}, %{{.*}} {k_syn = 3.000000e-01 : f64} : tensor<2x3xf32>
  %s4, %i4, %v4 = snn.cuba_lif_step %x, %i, %v3 {k_syn = 0.3} : tensor<2x3xf32>
  return %v4 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @stateless
func.func @stateless(%x: tensor<4x2x3x8x8xf32>, %y: tensor<4x2x16xf32>) -> tensor<4x2x10xf32> {
  // CHECK: snn.param "conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<6x3x3x3xf32>
  %w = snn.param "conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<6x3x3x3xf32>
  // CHECK: snn.param "conv.bias" {init = #snn.init<uniform>, init_scale = 1.000000e-01 : f64} : tensor<6xf32>
  %b = snn.param "conv.bias" {init = #snn.init<uniform>, init_scale = 0.1} : tensor<6xf32>
  // CHECK: snn.conv2d %{{.*}}, %{{.*}}, %{{.*}} {padding = array<i64: 1, 1>} : tensor<4x2x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32> -> tensor<4x2x6x8x8xf32>
  %c = snn.conv2d %x, %w, %b {padding = array<i64: 1, 1>}
       : tensor<4x2x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32> -> tensor<4x2x6x8x8xf32>
  // Grouped, strided, dilated, no bias.
  %wg = snn.param "gconv.weight" {init = #snn.init<normal>, init_scale = 0.02} : tensor<6x2x3x3xf32>
  // CHECK: snn.conv2d %{{.*}}, %{{.*}} {dilation = array<i64: 2, 2>, groups = 3 : i64, padding = array<i64: 2, 2>, stride = array<i64: 2, 2>} : tensor<4x2x6x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<4x2x6x4x4xf32>
  %cg = snn.conv2d %c, %wg {stride = array<i64: 2, 2>, padding = array<i64: 2, 2>,
                            dilation = array<i64: 2, 2>, groups = 3}
        : tensor<4x2x6x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<4x2x6x4x4xf32>
  %g = snn.param "bn.weight" {init = #snn.init<ones>} : tensor<6xf32>
  %be = snn.param "bn.bias" : tensor<6xf32>
  %rm = snn.param "bn.running_mean" {trainable = false} : tensor<6xf32>
  %rv = snn.param "bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<6xf32>
  // CHECK: snn.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-03 : f64, momentum = 5.000000e-02 : f64} : tensor<4x2x6x4x4xf32>, tensor<6xf32>
  %n = snn.batch_norm %cg, %g, %be, %rm, %rv {eps = 1.0e-3, momentum = 0.05}
       : tensor<4x2x6x4x4xf32>, tensor<6xf32>
  // CHECK: snn.avg_pool2d %{{.*}} {kernel_size = array<i64: 2, 2>} : tensor<4x2x6x4x4xf32> -> tensor<4x2x6x2x2xf32>
  %p0 = snn.avg_pool2d %n {kernel_size = array<i64: 2, 2>} : tensor<4x2x6x4x4xf32> -> tensor<4x2x6x2x2xf32>
  // CHECK: snn.sum_pool2d %{{.*}} {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : tensor<4x2x6x2x2xf32> -> tensor<4x2x6x2x2xf32>
  %p1 = snn.sum_pool2d %p0 {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>}
        : tensor<4x2x6x2x2xf32> -> tensor<4x2x6x2x2xf32>
  // CHECK: snn.max_pool2d %{{.*}} {kernel_size = array<i64: 2, 2>} : tensor<4x2x6x2x2xf32> -> tensor<4x2x6x1x1xf32>
  %p2 = snn.max_pool2d %p1 {kernel_size = array<i64: 2, 2>} : tensor<4x2x6x2x2xf32> -> tensor<4x2x6x1x1xf32>
  // CHECK: snn.flatten %{{.*}} : tensor<4x2x6x1x1xf32> -> tensor<4x2x6xf32>
  %f = snn.flatten %p2 : tensor<4x2x6x1x1xf32> -> tensor<4x2x6xf32>
  // CHECK: snn.dropout %{{.*}} {p = 2.000000e-01 : f64, shared_across_time} : tensor<4x2x6xf32>
  %d = snn.dropout %f {p = 0.2, shared_across_time} : tensor<4x2x6xf32>
  %w2 = snn.param "fc.weight" {value = dense<0.5> : tensor<16x6xf32>} : tensor<16x6xf32>
  // CHECK: snn.linear %{{.*}}, %{{.*}} : tensor<4x2x6xf32>, tensor<16x6xf32> -> tensor<4x2x16xf32>
  %l = snn.linear %d, %w2 : tensor<4x2x6xf32>, tensor<16x6xf32> -> tensor<4x2x16xf32>
  // CHECK: snn.add %{{.*}}, %{{.*}} : tensor<4x2x16xf32>
  %a = snn.add %l, %y : tensor<4x2x16xf32>
  // CHECK: snn.scale %{{.*}} {scale = 5.000000e-01 : f64} : tensor<4x2x16xf32>
  %sc = snn.scale %a {scale = 0.5} : tensor<4x2x16xf32>
  %w3 = snn.param "out.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x16xf32>
  %b3 = snn.param "out.bias" {init = #snn.init<constant>, init_scale = 0.0} : tensor<10xf32>
  // CHECK: snn.linear %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x2x16xf32>, tensor<10x16xf32>, tensor<10xf32> -> tensor<4x2x10xf32>
  %o = snn.linear %sc, %w3, %b3 : tensor<4x2x16xf32>, tensor<10x16xf32>, tensor<10xf32> -> tensor<4x2x10xf32>
  // A batch norm after a linear layer has no spatial dims.
  %g1 = snn.param "bn1.weight" {init = #snn.init<ones>} : tensor<10xf32>
  // CHECK: snn.batch_norm {{.*}} {spatial_rank = 0 : i64} : tensor<4x2x10xf32>, tensor<10xf32>
  %n1 = snn.batch_norm %o, %g1, %g1, %g1, %g1 {spatial_rank = 0} : tensor<4x2x10xf32>, tensor<10xf32>
  return %n1 : tensor<4x2x10xf32>
}

// CHECK-LABEL: func.func @step_form
func.func @step_form(%x: tensor<8x2x4xf32>) -> tensor<8x2x3xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x4xf32>
  %v0 = arith.constant dense<0.0> : tensor<2x3xf32>
  // CHECK: %{{.*}}:2 = snn.time_loop ins(%{{.*}} : tensor<8x2x4xf32>) iter_args(%{{.*}} : tensor<2x3xf32>) -> tensor<8x2x3xf32>, tensor<2x3xf32> {
  // CHECK-NEXT: ^bb0(%{{.*}}: tensor<2x4xf32>, %{{.*}}: tensor<2x3xf32>):
  // CHECK: snn.yield %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32>
  %out, %vT = snn.time_loop ins(%x : tensor<8x2x4xf32>) iter_args(%v0 : tensor<2x3xf32>)
      -> tensor<8x2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x4xf32>, %v: tensor<2x3xf32>):
    %h = snn.linear %xt, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
    %s, %vn = snn.lif_step %h, %v : tensor<2x3xf32>
    snn.yield %s, %vn : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %out : tensor<8x2x3xf32>
}

// A loop with no time-leading input runs num_steps steps.
// CHECK-LABEL: func.func @autonomous
func.func @autonomous(%v0: tensor<2x3xf32>) -> tensor<5x2x3xf32> {
  // CHECK: snn.time_loop iter_args(%{{.*}} : tensor<2x3xf32>) {num_steps = 5 : i64}
  %out, %vT = snn.time_loop iter_args(%v0 : tensor<2x3xf32>) {num_steps = 5 : i64}
      -> tensor<5x2x3xf32>, tensor<2x3xf32> {
  ^bb0(%v: tensor<2x3xf32>):
    %x = arith.constant dense<0.3> : tensor<2x3xf32>
    %s, %vn = snn.lif_step %x, %v : tensor<2x3xf32>
    snn.yield %s, %vn : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %out : tensor<5x2x3xf32>
}
