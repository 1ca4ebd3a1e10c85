// RUN: snn-opt %s -split-input-file --snn-autodiff | FileCheck %s
// RUN: snn-opt %s -split-input-file --snn-autodiff="optimizer=adamw lr=0.001 weight-decay=0.01 loss=mse_rate" | FileCheck %s --check-prefix=ADAMW

// An MLP: the loss, one BPTT scan per neuron layer in reverse order, weight
// gradients without gx for the first layer (the input needs no gradient),
// then one SGD update per parameter with its momentum buffer.

// CHECK-LABEL: func.func @forward
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:.*]]: tensor<4x2x6xf32>, %[[LABELS:.*]]: tensor<2xi32>) -> tensor<f32>
// CHECK: %[[W1:.*]] = snn.param "fc1.weight"
// CHECK: %[[B1:.*]] = snn.param "fc1.bias"
// CHECK: %[[H1:.*]] = snn.linear %[[X]], %[[W1]], %[[B1]]
// CHECK: %[[S1:.*]] = snn.lif %[[H1]] {{.*}}"lif1"
// CHECK: %[[W2:.*]] = snn.param "fc2.weight"
// CHECK: %[[H2:.*]] = snn.linear %[[S1]], %[[W2]]
// CHECK: %[[S2:.*]] = snn.lif %[[H2]]
// CHECK: %[[LOSS:.*]], %[[GS2:.*]], %{{.*}} = snn.loss_ce_rate %[[S2]], %[[LABELS]]
// CHECK: %[[GH2:.*]] = snn.neuron_bwd %[[GS2]], %[[S2]] : tensor<4x2x3xf32>
// CHECK: %[[G2:.*]]:2 = snn.linear_bwd %[[GH2]], %[[S1]], %[[W2]] {has_bias = false, need_gx = true}
// CHECK: %[[GH1:.*]] = snn.neuron_bwd %[[G2]]#0, %[[S1]] : tensor<4x2x5xf32>
// CHECK: %[[G1:.*]]:2 = snn.linear_bwd %[[GH1]], %[[X]], %[[W1]] {has_bias = true, need_gx = false}
// CHECK: %[[M1:.*]] = snn.param "opt:fc1.weight:momentum" {trainable = false}
// CHECK: %[[MB1:.*]] = snn.param "opt:fc1.bias:momentum" {trainable = false}
// CHECK: %[[M2:.*]] = snn.param "opt:fc2.weight:momentum" {trainable = false}
// CHECK: snn.sgd %[[W1]], %[[G1]]#0, %[[M1]] {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64}
// CHECK: snn.sgd %[[B1]], %[[G1]]#1, %[[MB1]]
// CHECK: snn.sgd %[[W2]], %[[G2]]#1, %[[M2]]
// CHECK-NOT: snn.sgd
// CHECK: return %[[LOSS]] : tensor<f32>

// ADAMW-LABEL: func.func @train_step
// ADAMW: snn.loss_mse_rate
// ADAMW: snn.param "opt:fc1.weight:m" {trainable = false}
// ADAMW: snn.param "opt:fc1.weight:v" {trainable = false}
// ADAMW: snn.adam %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {decoupled = true, lr = 1.000000e-03 : f64, weight_decay = 1.000000e-02 : f64}
func.func @forward(%x: tensor<4x2x6xf32>) -> tensor<4x2x3xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<5x6xf32>
  %b1 = snn.param "fc1.bias" : tensor<5xf32>
  %h1 = snn.linear %x, %w1, %b1 : tensor<4x2x6xf32>, tensor<5x6xf32>, tensor<5xf32> -> tensor<4x2x5xf32>
  %s1 = snn.lif %h1 {snn.name = "lif1"} : tensor<4x2x5xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x5xf32>
  %h2 = snn.linear %s1, %w2 : tensor<4x2x5xf32>, tensor<3x5xf32> -> tensor<4x2x3xf32>
  %s2 = snn.lif %h2 : tensor<4x2x3xf32>
  return %s2 : tensor<4x2x3xf32>
}

// -----

// A conv block: batch norm and dropout read what their forward saved,
// flatten's gradient is a reshape, pooling gradients have the input's type,
// buffers (running statistics) and frozen parameters get no update, and a
// readout snn.li makes the loss the membrane cross-entropy.

// CHECK-LABEL: func.func @train_step
// CHECK: %[[C:.*]] = snn.conv2d
// CHECK: %[[BN:.*]] = snn.batch_norm %[[C]], %[[G:[^,]*]], %[[BE:[^,]*]],
// CHECK: %[[S:.*]] = snn.lif %[[BN]]
// CHECK: %[[P:.*]] = snn.avg_pool2d %[[S]]
// CHECK: %[[D:.*]] = snn.dropout %[[P]]
// CHECK: %[[F:.*]] = snn.flatten %[[D]]
// CHECK: %[[O:.*]] = snn.li %
// CHECK: snn.loss_ce_membrane %[[O]]
// CHECK: snn.neuron_bwd %{{.*}}, %[[O]] : tensor<2x3x10xf32>
// CHECK: %[[GL:.*]]:2 = snn.linear_bwd {{.*}}need_gx = true
// CHECK: %[[GF:.*]] = snn.reshape %[[GL]]#0 : tensor<2x3x32xf32> -> tensor<2x3x2x4x4xf32>
// CHECK: %[[GD:.*]] = snn.dropout_bwd %[[GF]], %[[D]] : tensor<2x3x2x4x4xf32>
// CHECK: %[[GP:.*]] = snn.avg_pool2d_bwd %[[GD]] {kernel_size = array<i64: 2, 2>} : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x8x8xf32>
// CHECK: %[[GS:.*]] = snn.neuron_bwd %[[GP]], %[[S]]
// CHECK: %[[GBN:[^,]*]], %{{.*}}, %{{.*}} = snn.batch_norm_bwd %[[GS]], %[[C]], %[[G]], %[[BN]] : tensor<2x3x2x8x8xf32>, tensor<2xf32>
// CHECK: snn.conv2d_bwd %[[GBN]], {{.*}}has_bias = false, need_gx = false, padding = array<i64: 1, 1>
// CHECK-NOT: opt:bn.running
// CHECK-NOT: opt:fc.frozen
// CHECK: snn.sgd
// CHECK-NOT: bn.running_mean
// CHECK: return
func.func @forward(%x: tensor<2x3x1x8x8xf32>) -> tensor<2x3x10xf32> {
  %w = snn.param "conv.weight" {init = #snn.init<kaiming_uniform>} : tensor<2x1x3x3xf32>
  %c = snn.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<2x3x1x8x8xf32>, tensor<2x1x3x3xf32> -> tensor<2x3x2x8x8xf32>
  %g = snn.param "bn.weight" {init = #snn.init<ones>} : tensor<2xf32>
  %b = snn.param "bn.bias" : tensor<2xf32>
  %rm = snn.param "bn.running_mean" {trainable = false} : tensor<2xf32>
  %rv = snn.param "bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<2xf32>
  %n = snn.batch_norm %c, %g, %b, %rm, %rv : tensor<2x3x2x8x8xf32>, tensor<2xf32>
  %s = snn.lif %n : tensor<2x3x2x8x8xf32>
  %p = snn.avg_pool2d %s {kernel_size = array<i64: 2, 2>} : tensor<2x3x2x8x8xf32> -> tensor<2x3x2x4x4xf32>
  %d = snn.dropout %p {p = 0.2} : tensor<2x3x2x4x4xf32>
  %f = snn.flatten %d : tensor<2x3x2x4x4xf32> -> tensor<2x3x32xf32>
  %wf = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<10x32xf32>
  %bf = snn.param "fc.frozen_bias" {trainable = false} : tensor<10xf32>
  %h = snn.linear %f, %wf, %bf : tensor<2x3x32xf32>, tensor<10x32xf32>, tensor<10xf32> -> tensor<2x3x10xf32>
  %o = snn.li %h : tensor<2x3x10xf32>
  return %o : tensor<2x3x10xf32>
}

// -----

// A residual connection: %s1 feeds the second layer and the add, so its
// gradient is the sum of both paths; the PLIF layer also differentiates its
// decay weight.

// CHECK-LABEL: func.func @train_step
// CHECK: %[[PW:.*]] = snn.param "plif.w"
// CHECK: %[[S1:.*]] = snn.plif %{{.*}}, %[[PW]]
// CHECK: %[[S2:.*]] = snn.lif
// CHECK: %[[R:.*]] = snn.add %[[S2]], %[[S1]]
// CHECK: %[[SC:.*]] = snn.scale %[[R]] {scale = 5.000000e-01 : f64}
// CHECK: %[[GO:.*]] = snn.neuron_bwd
// CHECK: %[[GSC:.*]] = snn.scale %{{.*}} {scale = 5.000000e-01 : f64}
// CHECK: %[[GH2:.*]] = snn.neuron_bwd %[[GSC]], %[[S2]]
// CHECK: %[[G2:.*]]:2 = snn.linear_bwd %[[GH2]], %[[S1]]
// CHECK: %[[ACC:.*]] = snn.accumulate %[[GSC]], %[[G2]]#0
// CHECK: %[[G1:.*]], %[[GW:.*]] = snn.neuron_bwd %[[ACC]], %[[S1]] : tensor<3x2x4xf32>, tensor<1xf32>
// CHECK: snn.sgd %[[PW]], %[[GW]]
func.func @forward(%x: tensor<3x2x4xf32>) -> tensor<3x2x2xf32> {
  %w1 = snn.param "fc1.weight" : tensor<4x4xf32>
  %h1 = snn.linear %x, %w1 : tensor<3x2x4xf32>, tensor<4x4xf32> -> tensor<3x2x4xf32>
  %pw = snn.param "plif.w" : tensor<1xf32>
  %s1 = snn.plif %h1, %pw : tensor<3x2x4xf32>, tensor<1xf32>
  %w2 = snn.param "fc2.weight" : tensor<4x4xf32>
  %h2 = snn.linear %s1, %w2 : tensor<3x2x4xf32>, tensor<4x4xf32> -> tensor<3x2x4xf32>
  %s2 = snn.lif %h2 : tensor<3x2x4xf32>
  %r = snn.add %s2, %s1 : tensor<3x2x4xf32>
  %sc = snn.scale %r {scale = 0.5} : tensor<3x2x4xf32>
  %w3 = snn.param "fc3.weight" : tensor<2x4xf32>
  %h3 = snn.linear %sc, %w3 : tensor<3x2x4xf32>, tensor<2x4xf32> -> tensor<3x2x2xf32>
  %o = snn.lif %h3 : tensor<3x2x2xf32>
  return %o : tensor<3x2x2xf32>
}

// -----

// A recurrent layer: the loop is unrolled in @train_step (slices of the
// input, one lif_step per step, the spikes stacked), and BPTT runs one
// neuron_step_bwd per step in reverse, the membrane gradient flowing from
// step to step and the recurrent weight's gradient summed over the steps.
// @forward keeps its loop.
// CHECK-LABEL: func.func @forward
// CHECK: snn.time_loop
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: snn.time_loop
// CHECK: %[[X0:.*]] = snn.time_slice %arg0 {index = 0 : i64} : tensor<3x2x2xf32> -> tensor<2x2xf32>
// CHECK: %[[S0:.*]], %[[V0:.*]] = snn.lif_step %{{.*}}, %{{.*}} : tensor<2x2xf32>
// CHECK: snn.time_slice %arg0 {index = 1 : i64}
// CHECK: %[[S1:.*]], %[[V1:.*]] = snn.lif_step %{{.*}}, %[[V0]] : tensor<2x2xf32>
// CHECK: snn.time_slice %arg0 {index = 2 : i64}
// CHECK: %[[S2:.*]], %[[V2:.*]] = snn.lif_step %{{.*}}, %[[V1]] : tensor<2x2xf32>
// CHECK: %[[OUT:.*]] = snn.time_stack %[[S0]], %[[S1]], %[[S2]] : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32> -> tensor<3x2x2xf32>
// CHECK: snn.loss_ce_rate %[[OUT]]
// CHECK: %[[G2:.*]] = snn.time_slice %{{.*}} {index = 2 : i64}
// CHECK: %[[GX2:.*]], %[[GV2:.*]] = snn.neuron_step_bwd %[[G2]], %{{.*}}, %[[S2]] : tensor<2x2xf32>
// CHECK: snn.linear_bwd %[[GX2]], %[[S1]], %{{.*}} {has_bias = false, need_gx = true}
// CHECK: snn.neuron_step_bwd %{{.*}}, %[[GV2]], %[[S1]] : tensor<2x2xf32>
// CHECK: snn.neuron_step_bwd %{{.*}}, %{{.*}}, %[[S0]] : tensor<2x2xf32>
// CHECK: snn.sgd
func.func @forward(%x: tensor<3x2x2xf32>) -> tensor<3x2x2xf32> {
  %w = snn.param "rec.weight" : tensor<2x2xf32>
  %z = arith.constant dense<0.0> : tensor<2x2xf32>
  %out, %v_last, %s_last = snn.time_loop ins(%x : tensor<3x2x2xf32>)
      iter_args(%z, %z : tensor<2x2xf32>, tensor<2x2xf32>)
      -> tensor<3x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32> {
  ^bb0(%xt: tensor<2x2xf32>, %v: tensor<2x2xf32>, %sp: tensor<2x2xf32>):
    %r = snn.linear %sp, %w : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
    %i = snn.add %xt, %r : tensor<2x2xf32>
    %s, %vn = snn.lif_step %i, %v : tensor<2x2xf32>
    snn.yield %s, %vn, %s : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
  }
  return %out : tensor<3x2x2xf32>
}

// -----

// A recurrent PLIF layer (a learned leak): one plif_step_bwd per step in
// reverse, reading the membrane before the step (for dH/dk) and the weight;
// the weight's gradients of the steps are summed.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[S0:.*]], %[[V0:.*]] = snn.plif_step %{{.*}}, %[[VI:.*]], %[[W:.*]] : tensor<2x3xf32>, tensor<1xf32>
// CHECK: %[[S1:.*]], %[[V1:.*]] = snn.plif_step %{{.*}}, %[[V0]], %[[W]] : tensor<2x3xf32>, tensor<1xf32>
// CHECK: %[[GX1:.*]], %[[GV1:.*]], %[[GW1:.*]] = snn.plif_step_bwd %{{.*}}, %{{.*}}, %[[S1]], %[[V0]], %[[W]] : tensor<2x3xf32>, tensor<1xf32>
// CHECK: %[[GX0:.*]], %[[GV0:.*]], %[[GW0:.*]] = snn.plif_step_bwd %{{.*}}, %[[GV1]], %[[S0]], %[[VI]], %[[W]] : tensor<2x3xf32>, tensor<1xf32>
// CHECK-DAG: snn.accumulate %[[GW1]], %[[GW0]]
// CHECK: snn.sgd
func.func @forward(%x: tensor<2x2x3xf32>) -> tensor<2x2x3xf32> {
  %w = snn.param "rec.weight" : tensor<3x3xf32>
  %leak = snn.param "plif.w" : tensor<1xf32>
  %v0 = arith.constant dense<0.0> : tensor<2x3xf32>
  %out, %s_last, %v_last = snn.time_loop ins(%x : tensor<2x2x3xf32>)
      iter_args(%v0, %v0 : tensor<2x3xf32>, tensor<2x3xf32>)
      -> tensor<2x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %sp: tensor<2x3xf32>, %v: tensor<2x3xf32>):
    %r = snn.linear %sp, %w : tensor<2x3xf32>, tensor<3x3xf32> -> tensor<2x3xf32>
    %i = snn.add %xt, %r : tensor<2x3xf32>
    %s, %vn = snn.plif_step %i, %v, %leak : tensor<2x3xf32>, tensor<1xf32>
    snn.yield %s, %s, %vn : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %out : tensor<2x2x3xf32>
}
