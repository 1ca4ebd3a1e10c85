// RUN: snn-opt %s --snn-temporal-fusion -split-input-file -verify-diagnostics | FileCheck %s
// What cannot be expressed over the whole sequence stays in a smaller time
// loop, with a remark on each op that says why; the rest is still fused.

// A recurrent layer: its input adds its own spikes of step t-1 (through a
// recurrent weight). The feed-forward linear is hoisted in front of the loop,
// the readout after it.
// CHECK-LABEL: func.func @recurrent
// CHECK-SAME: (%[[X:.*]]: tensor<8x1x2xf32>)
// CHECK: %[[FF:.*]] = snn.linear %[[X]], %{{.*}} : tensor<8x1x2xf32>, tensor<3x2xf32> -> tensor<8x1x3xf32>
// CHECK: %[[L:.*]]:3 = snn.time_loop ins(%[[FF]] : tensor<8x1x3xf32>) iter_args(%{{.*}}, %{{.*}} : tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<8x1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32> {
// CHECK-NEXT: ^bb0(%[[FT:.*]]: tensor<1x3xf32>, %[[PREV:.*]]: tensor<1x3xf32>, %[[V:.*]]: tensor<1x3xf32>):
// CHECK-NEXT:   %[[SUM:.*]] = snn.add %[[FT]], %[[PREV]]
// CHECK-NEXT:   %[[S:.*]], %[[VN:.*]] = snn.lif_step %[[SUM]], %[[V]]
// CHECK-NEXT:   %[[R:.*]] = snn.linear %[[S]], %{{.*}} : tensor<1x3xf32>, tensor<3x3xf32> -> tensor<1x3xf32>
// CHECK-NEXT:   snn.yield %[[S]], %[[R]], %[[VN]]
// CHECK: %[[Y:.*]] = snn.linear %[[L]]#0, %{{.*}} : tensor<8x1x3xf32>, tensor<4x3xf32> -> tensor<8x1x4xf32>
// CHECK: %[[O:.*]] = snn.lif %[[Y]] : tensor<8x1x4xf32>
// CHECK: return %[[O]]
func.func @recurrent(%x: tensor<8x1x2xf32>) -> tensor<8x1x4xf32> {
  %w = snn.param "ff.weight" : tensor<3x2xf32>
  %r = snn.param "rec.weight" : tensor<3x3xf32>
  %w2 = snn.param "out.weight" : tensor<4x3xf32>
  %z = arith.constant dense<0.0> : tensor<1x3xf32>
  %z4 = arith.constant dense<0.0> : tensor<1x4xf32>
  %out:4 = snn.time_loop ins(%x : tensor<8x1x2xf32>)
      iter_args(%z, %z, %z4 : tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x4xf32>)
      -> tensor<8x1x4xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x4xf32> {
  ^bb0(%xt: tensor<1x2xf32>, %prev: tensor<1x3xf32>, %vm: tensor<1x3xf32>, %vm2: tensor<1x4xf32>):
    %ff = snn.linear %xt, %w : tensor<1x2xf32>, tensor<3x2xf32> -> tensor<1x3xf32>
    // expected-remark @below {{not hoisted out of the time loop: depends on its output at t-1 through loop-carried value #0}}
    %sum = snn.add %ff, %prev : tensor<1x3xf32>
    // expected-remark @below {{not hoisted out of the time loop: depends on its output at t-1 through loop-carried value #0}}
    %s, %vn = snn.lif_step %sum, %vm : tensor<1x3xf32>
    // expected-remark @below {{not hoisted out of the time loop: depends on its output at t-1 through loop-carried value #0}}
    %rr = snn.linear %s, %r : tensor<1x3xf32>, tensor<3x3xf32> -> tensor<1x3xf32>
    %y = snn.linear %s, %w2 : tensor<1x3xf32>, tensor<4x3xf32> -> tensor<1x4xf32>
    %s2, %vn2 = snn.lif_step %y, %vm2 : tensor<1x4xf32>
    snn.yield %s2, %rr, %vn, %vn2 : tensor<1x4xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x4xf32>
  }
  return %out#0 : tensor<8x1x4xf32>
}

// -----

// Feedback from a later layer: layer 1 reads layer 2's spikes of step t-1.
// Both layers stay in the loop; the input projection does not.
// CHECK-LABEL: func.func @feedback_from_later_layer
// CHECK: snn.linear %{{.*}} : tensor<5x2x4xf32>, tensor<4x4xf32> -> tensor<5x2x4xf32>
// CHECK: snn.time_loop
// CHECK-COUNT-2: snn.lif_step
// CHECK: snn.yield
// CHECK-NOT: snn.time_loop
func.func @feedback_from_later_layer(%x: tensor<5x2x4xf32>) -> tensor<5x2x4xf32> {
  %w0 = snn.param "in.weight" : tensor<4x4xf32>
  %w1 = snn.param "l2.weight" : tensor<4x4xf32>
  %z = arith.constant dense<0.0> : tensor<2x4xf32>
  %out:4 = snn.time_loop ins(%x : tensor<5x2x4xf32>)
      iter_args(%z, %z, %z : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
      -> tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> {
  ^bb0(%xt: tensor<2x4xf32>, %fb: tensor<2x4xf32>, %v1: tensor<2x4xf32>, %v2: tensor<2x4xf32>):
    %h = snn.linear %xt, %w0 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    // expected-remark @below {{depends on its output at t-1 through loop-carried value #0}}
    %a = snn.add %h, %fb : tensor<2x4xf32>
    // expected-remark @below {{depends on its output at t-1 through loop-carried value #0}}
    %s1, %v1n = snn.lif_step %a, %v1 : tensor<2x4xf32>
    // expected-remark @below {{depends on its output at t-1 through loop-carried value #0}}
    %h2 = snn.linear %s1, %w1 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    // expected-remark @below {{depends on its output at t-1 through loop-carried value #0}}
    %s2, %v2n = snn.lif_step %h2, %v2 : tensor<2x4xf32>
    snn.yield %s2, %s2, %v1n, %v2n : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
  }
  return %out#0 : tensor<5x2x4xf32>
}

// -----

// A two-step delay line (as NIR Delay imports): the loop only passes values
// on; the readout after it is fused.
// CHECK-LABEL: func.func @delay
// CHECK: %[[SC:.*]] = snn.scale %{{.*}} {scale = 2.000000e+00 : f64} : tensor<6x1x3xf32>
// CHECK: %[[L:.*]]:3 = snn.time_loop ins(%[[SC]] : tensor<6x1x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: tensor<1x3xf32>, %[[D0:.*]]: tensor<1x3xf32>, %[[D1:.*]]: tensor<1x3xf32>):
// CHECK-NEXT:   snn.yield %[[D0]], %[[D1]], %[[IN]]
// CHECK: snn.li %[[L]]#0 {c = 1.000000e-01 : f64, k = 1.000000e-01 : f64} : tensor<6x1x3xf32>
func.func @delay(%x: tensor<6x1x3xf32>) -> tensor<6x1x3xf32> {
  %z = arith.constant dense<0.0> : tensor<1x3xf32>
  // expected-remark @below {{loop-carried value #0 stays in a time loop: it passes a value to a later step (a delay)}}
  // expected-remark @below {{loop-carried value #1 stays in a time loop: it passes a value to a later step (a delay)}}
  %out:4 = snn.time_loop ins(%x : tensor<6x1x3xf32>)
      iter_args(%z, %z, %z : tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>)
      -> tensor<6x1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32> {
  ^bb0(%xt: tensor<1x3xf32>, %d0: tensor<1x3xf32>, %d1: tensor<1x3xf32>, %v: tensor<1x3xf32>):
    %sc = snn.scale %xt {scale = 2.0} : tensor<1x3xf32>
    %o = snn.li_step %d0, %v {k = 0.1, c = 0.1} : tensor<1x3xf32>
    snn.yield %o, %d1, %sc, %o : tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>, tensor<1x3xf32>
  }
  return %out#0 : tensor<6x1x3xf32>
}

// -----

// Neurons that cannot be fused, each for its own reason; the layers around
// them still are.
// CHECK-LABEL: func.func @unfusable_neurons
// CHECK: %[[H:.*]] = snn.linear %{{.*}} -> tensor<4x2x3xf32>
// CHECK: %[[L:.*]]:{{[0-9]+}} = snn.time_loop ins(%[[H]] : tensor<4x2x3xf32>)
// CHECK-COUNT-4: snn.lif_step
// CHECK: snn.yield
// CHECK: return
func.func @unfusable_neurons(%x: tensor<4x2x3xf32>, %v0: tensor<2x3xf32>, %w: tensor<3x3xf32>)
    -> (tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<2x3xf32>) {
  %z = arith.constant dense<0.0> : tensor<2x3xf32>
  %rows = arith.constant dense<[[0.0, 0.1, 0.2], [0.0, 0.1, 0.3]]> : tensor<2x3xf32>
  %out:8 = snn.time_loop ins(%x : tensor<4x2x3xf32>)
      iter_args(%v0, %rows, %z, %z : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
      -> tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>,
         tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xf32>, %d: tensor<2x3xf32>):
    %h = snn.linear %xt, %w : tensor<2x3xf32>, tensor<3x3xf32> -> tensor<2x3xf32>
    // expected-remark @below {{not hoisted out of the time loop: its initial state (loop-carried value #0) is not a constant}}
    %sa, %an = snn.lif_step %h, %a : tensor<2x3xf32>
    // expected-remark @below {{not hoisted out of the time loop: its initial state (loop-carried value #1) differs between samples of the batch}}
    %sb, %bn = snn.lif_step %h, %b : tensor<2x3xf32>
    // expected-remark @below {{not hoisted out of the time loop: its final state (loop result #6) is used after the loop}}
    %sc, %cn = snn.lif_step %h, %c : tensor<2x3xf32>
    // expected-remark @below {{not hoisted out of the time loop: its state after the step is read by 'snn.yield', and the multi-step op returns only its output}}
    %sd, %dn = snn.lif_step %h, %d : tensor<2x3xf32>
    snn.yield %sa, %sb, %sc, %dn, %an, %bn, %cn, %dn
        : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>,
          tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %out#0, %out#1, %out#2, %out#3, %out#6
      : tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<2x3xf32>
}

// -----

// An op with no multi-step form stays; what it feeds is fused after the loop.
// CHECK-LABEL: func.func @foreign_op
// CHECK: %[[L:.*]] = snn.time_loop ins(%{{.*}} : tensor<3x2x4xf32>) -> tensor<3x2x4xf32> {
// CHECK:   arith.addf
// CHECK: snn.lif %[[L]] : tensor<3x2x4xf32>
func.func @foreign_op(%x: tensor<3x2x4xf32>) -> tensor<3x2x4xf32> {
  %z = arith.constant dense<0.0> : tensor<2x4xf32>
  %out, %v = snn.time_loop ins(%x : tensor<3x2x4xf32>) iter_args(%z : tensor<2x4xf32>)
      -> tensor<3x2x4xf32>, tensor<2x4xf32> {
  ^bb0(%xt: tensor<2x4xf32>, %m: tensor<2x4xf32>):
    // expected-remark @below {{not hoisted out of the time loop: 'arith.addf' has no multi-step form}}
    %d = arith.addf %xt, %xt : tensor<2x4xf32>
    %s, %mn = snn.lif_step %d, %m : tensor<2x4xf32>
    snn.yield %s, %mn : tensor<2x4xf32>, tensor<2x4xf32>
  }
  return %out : tensor<3x2x4xf32>
}

// -----

// A loop without time-leading inputs: its input is the same at every step.
// CHECK-LABEL: func.func @autonomous
// CHECK: snn.time_loop iter_args(%{{.*}} : tensor<2x3xf32>) {num_steps = 5 : i64}
// CHECK: snn.lif_step
func.func @autonomous() -> tensor<5x2x3xf32> {
  %z = arith.constant dense<0.0> : tensor<2x3xf32>
  %out, %vT = snn.time_loop iter_args(%z : tensor<2x3xf32>) {num_steps = 5 : i64}
      -> tensor<5x2x3xf32>, tensor<2x3xf32> {
  ^bb0(%v: tensor<2x3xf32>):
    %x = arith.constant dense<0.3> : tensor<2x3xf32>
    // expected-remark @below {{its input does not vary over time, and a multi-step neuron needs a [T, B, ...] input}}
    %s, %vn = snn.lif_step %x, %v : tensor<2x3xf32>
    snn.yield %s, %vn : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %out : tensor<5x2x3xf32>
}

// -----

// The number of steps is unknown: nothing changes.
// CHECK-LABEL: func.func @dynamic_steps
// CHECK: snn.time_loop ins(%{{.*}} : tensor<?x2x3xf32>)
// CHECK: snn.lif_step
func.func @dynamic_steps(%x: tensor<?x2x3xf32>) -> tensor<?x2x3xf32> {
  %z = arith.constant dense<0.0> : tensor<2x3xf32>
  // expected-remark @below {{not fused: the number of time steps is not static}}
  %out, %vT = snn.time_loop ins(%x : tensor<?x2x3xf32>) iter_args(%z : tensor<2x3xf32>)
      -> tensor<?x2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %v: tensor<2x3xf32>):
    %s, %vn = snn.lif_step %xt, %v : tensor<2x3xf32>
    snn.yield %s, %vn : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %out : tensor<?x2x3xf32>
}
