// RUN: snn-opt %s --snn-autodiff --snn-split-time="parts=2" | FileCheck %s
// RUN: snn-opt %s --snn-autodiff --snn-split-time="parts=3" | FileCheck %s --check-prefix=P3
// RUN: snn-opt %s --snn-autodiff --snn-split-time="parts=1" | FileCheck %s --check-prefix=P1
// The printed split module compiles (test/Target/Module/split-time.mlir
// checks the manifest).
// RUN: rm -rf %t.snnmod && snn-opt %s --snn-autodiff --snn-split-time="parts=2" | snn-opt --snn-compile="output=%t.snnmod target=cpu" -o /dev/null
// RUN: ls %t.snnmod/manifest.json

// T = 5 steps over P ranks: rank p runs [floor(5p/P), floor(5(p+1)/P)).
// P = 2: rank 0 runs 2 steps, rank 1 runs 3; P = 3: lengths 1, 2, 2.

// CHECK: module attributes {snn.split_time = {parts = 2 : i64, steps = 5 : i64}}

// The forward of rank 0 (2 steps): the lif layer starts from the state of the
// previous rank or, on rank 0, from its own initial state (v_reset = 0.25
// for a hard reset); cuba_lif chains its current and membrane, the latter
// starting from the per-neuron v_init.
// CHECK-LABEL: func.func @forward_t2(%{{.*}}: tensor<2x2x4xf32>) -> tensor<2x2x2xf32>
// CHECK-SAME: snn.ranks = array<i64: 0>, snn.time_length = 2
// CHECK: %[[H1:.*]] = snn.linear %{{.*}} : tensor<2x2x4xf32>, tensor<3x4xf32> -> tensor<2x2x3xf32>
// CHECK: %[[INIT:.*]] = arith.constant dense<2.500000e-01> : tensor<2x3xf32>
// CHECK: %[[V0:.*]] = snn.recv from prev tag 0 or %[[INIT]] : tensor<2x3xf32>
// CHECK: %[[S1:.*]], %[[VT:.*]] = snn.lif %[[H1]] init(%[[V0]] : tensor<2x3xf32>) {v_reset = 2.500000e-01 : f64} : tensor<2x2x3xf32> -> tensor<2x3xf32>
// CHECK: snn.send %[[VT]] to next tag 0 : tensor<2x3xf32>
// CHECK: %[[I0:.*]] = snn.recv from prev tag 1 or %{{.*}} : tensor<2x2xf32>
// CHECK: %[[VINIT:.*]] = arith.constant dense<{{\[}}[1.000000e-01, 2.000000e-01], [1.000000e-01, 2.000000e-01]]> : tensor<2x2xf32>
// CHECK: %[[CV0:.*]] = snn.recv from prev tag 2 or %[[VINIT]] : tensor<2x2xf32>
// CHECK: %[[S2:.*]], %[[CT:.*]]:2 = snn.cuba_lif %{{.*}} init(%[[I0]], %[[CV0]] : tensor<2x2xf32>, tensor<2x2xf32>) : tensor<2x2x2xf32> -> tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NOT: v_init
// CHECK: snn.send %[[CT]]#0 to next tag 1
// CHECK: snn.send %[[CT]]#1 to next tag 2
// CHECK: return %[[S2]] : tensor<2x2x2xf32>

// CHECK-LABEL: func.func @forward_t3(%{{.*}}: tensor<3x2x4xf32>) -> tensor<3x2x2xf32>
// CHECK-SAME: snn.ranks = array<i64: 1>, snn.time_length = 3

// Training on rank 0: the loss of the time mean over all ranks, the gradient
// of each neuron layer's final state from the next rank, the gradient of
// its initial state to the previous one, weight gradients summed over the
// ranks right before their update.
// CHECK-LABEL: func.func @train_step_t2(%{{.*}}: tensor<2x2x4xf32>, %{{.*}}: tensor<2xi32>) -> tensor<f32>
// CHECK: %[[OUT:.*]], %{{.*}}:2 = snn.cuba_lif
// CHECK: %[[PART:.*]] = snn.time_sum %[[OUT]] {scale = 2.000000e-01 : f64} : tensor<2x2x2xf32> -> tensor<1x2x2xf32>
// CHECK: %[[MEAN:.*]] = snn.all_reduce_sum %[[PART]] : tensor<1x2x2xf32>
// CHECK: %[[LOSS:.*]], %[[GM:.*]], %{{.*}} = snn.loss_ce_rate %[[MEAN]], %{{.*}} : tensor<1x2x2xf32>, tensor<2xi32> -> tensor<f32>
// CHECK: %[[GY:.*]] = snn.time_broadcast %[[GM]] {scale = 2.000000e-01 : f64} : tensor<1x2x2xf32> -> tensor<2x2x2xf32>
// CHECK: %[[GI:.*]] = snn.recv from next tag 1 or %{{.*}} : tensor<2x2xf32>
// CHECK: %[[GV:.*]] = snn.recv from next tag 2 or %{{.*}} : tensor<2x2xf32>
// CHECK: %[[GX:.*]], %[[G0:.*]]:2 = snn.neuron_bwd %[[GY]], %[[OUT]] final(%[[GI]], %[[GV]] : tensor<2x2xf32>, tensor<2x2xf32>) : tensor<2x2x2xf32> -> tensor<2x2xf32>, tensor<2x2xf32>
// CHECK: snn.send %[[G0]]#0 to prev tag 1
// CHECK: snn.send %[[G0]]#1 to prev tag 2
// CHECK: %[[FC2:.*]]:3 = snn.linear_bwd %[[GX]]
// CHECK: snn.recv from next tag 0
// CHECK: snn.neuron_bwd
// CHECK: snn.send %{{.*}} to prev tag 0
// CHECK: %[[FC1:.*]] = snn.linear_bwd
// CHECK-NOT: snn.all_reduce_sum
// CHECK: %[[SUM1:.*]] = snn.all_reduce_sum %[[FC1]] : tensor<3x4xf32>
// CHECK-NEXT: snn.sgd %{{.*}}, %[[SUM1]]
// CHECK: %[[SUM2:.*]] = snn.all_reduce_sum %[[FC2]]#1 : tensor<2x3xf32>
// CHECK-NEXT: snn.sgd %{{.*}}, %[[SUM2]]
// CHECK: %[[SUM3:.*]] = snn.all_reduce_sum %[[FC2]]#2 : tensor<2xf32>
// CHECK-NEXT: snn.sgd %{{.*}}, %[[SUM3]]
// CHECK: return %[[LOSS]] : tensor<f32>

// CHECK-LABEL: func.func @train_step_t3(%{{.*}}: tensor<3x2x4xf32>, %{{.*}}: tensor<2xi32>) -> tensor<f32>
// CHECK: snn.time_broadcast %{{.*}} : tensor<1x2x2xf32> -> tensor<3x2x2xf32>

// P3: module attributes {snn.split_time = {parts = 3 : i64, steps = 5 : i64}}
// P3-LABEL: func.func @forward_t1(%{{.*}}: tensor<1x2x4xf32>)
// P3-SAME: snn.ranks = array<i64: 0>
// P3-LABEL: func.func @forward_t2(%{{.*}}: tensor<2x2x4xf32>)
// P3-SAME: snn.ranks = array<i64: 1, 2>
// P3-LABEL: func.func @train_step_t1
// P3-LABEL: func.func @train_step_t2
// P3-NOT: func.func @forward(
// P3-NOT: func.func @train_step(

// One rank: the whole sequence; the transfers fall back to what one process
// uses.
// P1-LABEL: func.func @forward_t5(%{{.*}}: tensor<5x2x4xf32>)
// P1-SAME: snn.ranks = array<i64: 0>
// P1-LABEL: func.func @train_step_t5

func.func @forward(%x: tensor<5x2x4xf32>) -> tensor<5x2x2xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x4xf32>
  %h1 = snn.linear %x, %w1 : tensor<5x2x4xf32>, tensor<3x4xf32> -> tensor<5x2x3xf32>
  %s1 = snn.lif %h1 {v_reset = 0.25} : tensor<5x2x3xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<2x3xf32>
  %b2 = snn.param "fc2.bias" : tensor<2xf32>
  %h2 = snn.linear %s1, %w2, %b2 : tensor<5x2x3xf32>, tensor<2x3xf32>, tensor<2xf32> -> tensor<5x2x2xf32>
  %s2 = snn.cuba_lif %h2 {v_init = dense<[0.1, 0.2]> : tensor<2xf64>} : tensor<5x2x2xf32>
  return %s2 : tensor<5x2x2xf32>
}
