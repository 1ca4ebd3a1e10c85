// RUN: snn-opt %s --snn-temporal-fusion -split-input-file | FileCheck %s
// Every loop here is fully hoistable: no remark, no time loop left.
// RUN: snn-opt %s --snn-temporal-fusion -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=NOLOOP
// NOLOOP-NOT: snn.time_loop
// The pass is listed by the driver.
// RUN: snn-opt --help | FileCheck %s --check-prefix=HELP
// HELP: --snn-temporal-fusion

// Linear -> LIF -> linear -> LI readout; the readout's membrane is both the
// per-step output and its state (as the NIR importer writes it).
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<8x2x4xf32>)
// CHECK-DAG: %[[W1:.*]] = snn.param "fc1.weight"
// CHECK-DAG: %[[B1:.*]] = snn.param "fc1.bias"
// CHECK-DAG: %[[W2:.*]] = snn.param "fc2.weight"
// CHECK: %[[H:.*]] = snn.linear %[[X]], %[[W1]], %[[B1]] : tensor<8x2x4xf32>, tensor<5x4xf32>, tensor<5xf32> -> tensor<8x2x5xf32>
// CHECK: %[[S:.*]] = snn.lif %[[H]] {c = 2.500000e-01 : f64, k = 2.500000e-01 : f64} : tensor<8x2x5xf32>
// CHECK: %[[Y:.*]] = snn.linear %[[S]], %[[W2]] : tensor<8x2x5xf32>, tensor<3x5xf32> -> tensor<8x2x3xf32>
// CHECK: %[[O:.*]] = snn.li %[[Y]] {c = 1.000000e-01 : f64, k = 1.000000e-01 : f64, v_init = 2.500000e-01 : f64} : tensor<8x2x3xf32>
// CHECK-NOT: arith.constant
// CHECK: return %[[O]]
func.func @mlp(%x: tensor<8x2x4xf32>) -> tensor<8x2x3xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x4xf32>
  %b1 = snn.param "fc1.bias" : tensor<5xf32>
  %v0 = arith.constant dense<0.0> : tensor<2x5xf32>
  %o0 = arith.constant dense<0.25> : tensor<2x3xf32>
  %out, %vT, %oT = snn.time_loop ins(%x : tensor<8x2x4xf32>)
      iter_args(%v0, %o0 : tensor<2x5xf32>, tensor<2x3xf32>)
      -> tensor<8x2x3xf32>, tensor<2x5xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x4xf32>, %v: tensor<2x5xf32>, %o: tensor<2x3xf32>):
    %h = snn.linear %xt, %w1, %b1 : tensor<2x4xf32>, tensor<5x4xf32>, tensor<5xf32> -> tensor<2x5xf32>
    %s, %vn = snn.lif_step %h, %v {k = 0.25, c = 0.25} : tensor<2x5xf32>
    // A parameter declared in the body moves in front of everything.
    %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x5xf32>
    %y = snn.linear %s, %w2 : tensor<2x5xf32>, tensor<3x5xf32> -> tensor<2x3xf32>
    %on = snn.li_step %y, %o {k = 0.1, c = 0.1} : tensor<2x3xf32>
    snn.yield %on, %vn, %on : tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x3xf32>
  }
  return %out : tensor<8x2x3xf32>
}

// -----

// conv -> bn -> lif -> pool -> flatten -> linear -> lif, with dropout and scale.
// CHECK-LABEL: func.func @conv_net
// CHECK-SAME: (%[[X:.*]]: tensor<4x2x1x8x8xf32>)
// CHECK: %[[C:.*]] = snn.conv2d %[[X]], %{{.*}}, %{{.*}} {padding = array<i64: 1, 1>} : tensor<4x2x1x8x8xf32>, tensor<6x1x3x3xf32>, tensor<6xf32> -> tensor<4x2x6x8x8xf32>
// CHECK: %[[N:.*]] = snn.batch_norm %[[C]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x2x6x8x8xf32>, tensor<6xf32>
// CHECK: %[[S1:.*]] = snn.lif %[[N]] {reset = #snn.reset<soft>} : tensor<4x2x6x8x8xf32>
// CHECK: %[[P:.*]] = snn.max_pool2d %[[S1]] {kernel_size = array<i64: 2, 2>} : tensor<4x2x6x8x8xf32> -> tensor<4x2x6x4x4xf32>
// CHECK: %[[A:.*]] = snn.avg_pool2d %[[P]] {kernel_size = array<i64: 2, 2>} : tensor<4x2x6x4x4xf32> -> tensor<4x2x6x2x2xf32>
// CHECK: %[[SP:.*]] = snn.sum_pool2d %[[A]] {kernel_size = array<i64: 2, 2>} : tensor<4x2x6x2x2xf32> -> tensor<4x2x6x1x1xf32>
// CHECK: %[[F:.*]] = snn.flatten %[[SP]] : tensor<4x2x6x1x1xf32> -> tensor<4x2x6xf32>
// CHECK: %[[D:.*]] = snn.dropout %[[F]] {p = 2.000000e-01 : f64, shared_across_time} : tensor<4x2x6xf32>
// CHECK: %[[L:.*]] = snn.linear %[[D]], %{{.*}} : tensor<4x2x6xf32>, tensor<10x6xf32> -> tensor<4x2x10xf32>
// CHECK: %[[SC:.*]] = snn.scale %[[L]] {scale = 2.000000e+00 : f64} : tensor<4x2x10xf32>
// CHECK: %[[S2:.*]] = snn.if %[[SC]] {v_init = 5.000000e-01 : f64} : tensor<4x2x10xf32>
// CHECK: return %[[S2]]
func.func @conv_net(%x: tensor<4x2x1x8x8xf32>) -> tensor<4x2x10xf32> {
  %w = snn.param "conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<6x1x3x3xf32>
  %b = snn.param "conv.bias" : tensor<6xf32>
  %g = snn.param "bn.weight" {init = #snn.init<ones>} : tensor<6xf32>
  %be = snn.param "bn.bias" : tensor<6xf32>
  %rm = snn.param "bn.running_mean" {trainable = false} : tensor<6xf32>
  %rv = snn.param "bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<6xf32>
  %fw = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x6xf32>
  %v1 = arith.constant dense<0.0> : tensor<2x6x8x8xf32>
  %v2 = arith.constant dense<0.5> : tensor<2x10xf32>
  %out, %a, %c = snn.time_loop ins(%x : tensor<4x2x1x8x8xf32>)
      iter_args(%v1, %v2 : tensor<2x6x8x8xf32>, tensor<2x10xf32>)
      -> tensor<4x2x10xf32>, tensor<2x6x8x8xf32>, tensor<2x10xf32> {
  ^bb0(%xt: tensor<2x1x8x8xf32>, %m1: tensor<2x6x8x8xf32>, %m2: tensor<2x10xf32>):
    %conv = snn.conv2d %xt, %w, %b {padding = array<i64: 1, 1>}
        : tensor<2x1x8x8xf32>, tensor<6x1x3x3xf32>, tensor<6xf32> -> tensor<2x6x8x8xf32>
    %n = snn.batch_norm %conv, %g, %be, %rm, %rv : tensor<2x6x8x8xf32>, tensor<6xf32>
    %s1, %m1n = snn.lif_step %n, %m1 {reset = #snn.reset<soft>} : tensor<2x6x8x8xf32>
    %p = snn.max_pool2d %s1 {kernel_size = array<i64: 2, 2>} : tensor<2x6x8x8xf32> -> tensor<2x6x4x4xf32>
    %ap = snn.avg_pool2d %p {kernel_size = array<i64: 2, 2>} : tensor<2x6x4x4xf32> -> tensor<2x6x2x2xf32>
    %sp = snn.sum_pool2d %ap {kernel_size = array<i64: 2, 2>} : tensor<2x6x2x2xf32> -> tensor<2x6x1x1xf32>
    %f = snn.flatten %sp : tensor<2x6x1x1xf32> -> tensor<2x6xf32>
    %d = snn.dropout %f {p = 0.2, shared_across_time} : tensor<2x6xf32>
    %l = snn.linear %d, %fw : tensor<2x6xf32>, tensor<10x6xf32> -> tensor<2x10xf32>
    %sc = snn.scale %l {scale = 2.0} : tensor<2x10xf32>
    %s2, %m2n = snn.if_step %sc, %m2 : tensor<2x10xf32>
    snn.yield %s2, %m1n, %m2n : tensor<2x10xf32>, tensor<2x6x8x8xf32>, tensor<2x10xf32>
  }
  return %out : tensor<4x2x10xf32>
}

// -----

// A residual block: the skip path and the block output meet in snn.add.
// CHECK-LABEL: func.func @residual
// CHECK-SAME: (%[[X:.*]]: tensor<6x3x8xf32>)
// CHECK: %[[S0:.*]] = snn.lif %[[X]] : tensor<6x3x8xf32>
// CHECK: %[[L:.*]] = snn.linear %[[S0]], %{{.*}} : tensor<6x3x8xf32>, tensor<8x8xf32> -> tensor<6x3x8xf32>
// CHECK: %[[S1:.*]] = snn.lif %[[L]] : tensor<6x3x8xf32>
// CHECK: %[[A:.*]] = snn.add %[[S1]], %[[S0]] : tensor<6x3x8xf32>
// CHECK: return %[[A]], %[[S0]]
func.func @residual(%x: tensor<6x3x8xf32>) -> (tensor<6x3x8xf32>, tensor<6x3x8xf32>) {
  %w = snn.param "block.weight" : tensor<8x8xf32>
  %z = arith.constant dense<0.0> : tensor<3x8xf32>
  %out, %skip, %a, %b = snn.time_loop ins(%x : tensor<6x3x8xf32>)
      iter_args(%z, %z : tensor<3x8xf32>, tensor<3x8xf32>)
      -> tensor<6x3x8xf32>, tensor<6x3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32> {
  ^bb0(%xt: tensor<3x8xf32>, %v0: tensor<3x8xf32>, %v1: tensor<3x8xf32>):
    %s0, %v0n = snn.lif_step %xt, %v0 : tensor<3x8xf32>
    %l = snn.linear %s0, %w : tensor<3x8xf32>, tensor<8x8xf32> -> tensor<3x8xf32>
    %s1, %v1n = snn.lif_step %l, %v1 : tensor<3x8xf32>
    %sum = snn.add %s1, %s0 : tensor<3x8xf32>
    snn.yield %sum, %s0, %v0n, %v1n : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>
  }
  return %out, %skip : tensor<6x3x8xf32>, tensor<6x3x8xf32>
}

// -----

// Every neuron kind; per-neuron parameters and initial values (equal batch
// rows); an initial value equal to the default (v_reset for a hard reset, 0
// for a soft reset) leaves v_init out.
// CHECK-LABEL: func.func @neuron_kinds
// CHECK-SAME: (%[[X:.*]]: tensor<5x2x3xf32>, %[[W:.*]]: tensor<1xf32>)
// CHECK: %[[A:.*]] = snn.lif %[[X]] {v_init = dense<[1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<3xf32>, v_th = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>} : tensor<5x2x3xf32>
// CHECK: %[[B:.*]] = snn.plif %[[A]], %[[W]] {v_reset = -1.000000e+00 : f64} : tensor<5x2x3xf32>, tensor<1xf32>
// CHECK: %[[C:.*]] = snn.cuba_lif %[[B]] {i_init = 5.000000e-01 : f64, k_syn = 2.000000e-01 : f64, strict} : tensor<5x2x3xf32>
// CHECK: %[[D:.*]] = snn.if %[[C]] {c = 2.000000e+00 : f64, reset = #snn.reset<soft>, v_reset = 5.000000e-01 : f64} : tensor<5x2x3xf32>
// CHECK: return %[[D]]
func.func @neuron_kinds(%x: tensor<5x2x3xf32>, %w: tensor<1xf32>) -> tensor<5x2x3xf32> {
  %rows = arith.constant dense<[[0.1, 0.2, 0.3], [0.1, 0.2, 0.3]]> : tensor<2x3xf32>
  %minus1 = arith.constant dense<-1.0> : tensor<2x3xf32>
  %i0 = arith.constant dense<0.5> : tensor<2x3xf32>
  %z = arith.constant dense<0.0> : tensor<2x3xf32>
  %out:6 = snn.time_loop ins(%x : tensor<5x2x3xf32>)
      iter_args(%rows, %minus1, %i0, %z, %z : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
      -> tensor<5x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %va: tensor<2x3xf32>, %vb: tensor<2x3xf32>, %ic: tensor<2x3xf32>, %vc: tensor<2x3xf32>, %vd: tensor<2x3xf32>):
    %a, %van = snn.lif_step %xt, %va {v_th = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : tensor<2x3xf32>
    %b, %vbn = snn.plif_step %a, %vb, %w {v_reset = -1.0} : tensor<2x3xf32>, tensor<1xf32>
    %c, %icn, %vcn = snn.cuba_lif_step %b, %ic, %vc {k_syn = 0.2, strict} : tensor<2x3xf32>
    // A soft reset starts from 0 whatever v_reset: the step op's v_init is
    // replaced by the loop's initial value, which is that default.
    %d, %vdn = snn.if_step %c, %vd {c = 2.0, reset = #snn.reset<soft>, v_reset = 0.5, v_init = 0.0} : tensor<2x3xf32>
    snn.yield %d, %van, %vbn, %icn, %vcn, %vdn : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %out#0 : tensor<5x2x3xf32>
}

// -----

// Two loops in one function, the second reading the first's output; a state
// the body yields unchanged is its initial value at every step.
// CHECK-LABEL: func.func @two_loops
// CHECK: %[[A:.*]] = snn.lif %{{.*}} : tensor<3x1x4xf32>
// CHECK: %[[B:.*]] = snn.lif %[[A]] {k = 1.000000e-01 : f64} : tensor<3x1x4xf32>
// CHECK: return %[[B]], %[[INIT:.*]] :
func.func @two_loops(%x: tensor<3x1x4xf32>, %keep: tensor<1x4xf32>) -> (tensor<3x1x4xf32>, tensor<1x4xf32>) {
  %z = arith.constant dense<0.0> : tensor<1x4xf32>
  %a, %va = snn.time_loop ins(%x : tensor<3x1x4xf32>) iter_args(%z : tensor<1x4xf32>)
      -> tensor<3x1x4xf32>, tensor<1x4xf32> {
  ^bb0(%xt: tensor<1x4xf32>, %v: tensor<1x4xf32>):
    %s, %vn = snn.lif_step %xt, %v : tensor<1x4xf32>
    snn.yield %s, %vn : tensor<1x4xf32>, tensor<1x4xf32>
  }
  %b, %vb, %same = snn.time_loop ins(%a : tensor<3x1x4xf32>) iter_args(%z, %keep : tensor<1x4xf32>, tensor<1x4xf32>)
      -> tensor<3x1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32> {
  ^bb0(%xt: tensor<1x4xf32>, %v: tensor<1x4xf32>, %k: tensor<1x4xf32>):
    %s, %vn = snn.lif_step %xt, %v {k = 0.1} : tensor<1x4xf32>
    snn.yield %s, %vn, %k : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
  }
  return %b, %same : tensor<3x1x4xf32>, tensor<1x4xf32>
}
