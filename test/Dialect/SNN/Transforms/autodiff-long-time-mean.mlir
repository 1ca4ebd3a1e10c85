// RUN: snn-opt %s -split-input-file --snn-autodiff | FileCheck %s
// RUN: snn-opt %s -split-input-file --snn-autodiff="loss=mse_rate" | FileCheck %s --check-prefix=MSE
// RUN: snn-opt %s -split-input-file --snn-autodiff="loss=ce_membrane_max" | FileCheck %s --check-prefix=MAX
// RUN: snn-opt %s -split-input-file --snn-autodiff --snn-split-time="parts=2" | FileCheck %s --check-prefix=SPLIT

// From 32 steps on, a loss on the time mean takes the mean first
// (snn.time_sum, parallel over B x C) and spreads its gradient over the
// steps (snn.time_broadcast), both with scale 1/T: the loss kernel then reads
// one step instead of recomputing each class's mean over T.

// CHECK-LABEL: func.func @train_step
// CHECK: %[[S:.*]] = snn.lif
// CHECK: %[[M:.*]] = snn.time_sum %[[S]] {scale = 3.125000e-02 : f64} : tensor<32x2x3xf32> -> tensor<1x2x3xf32>
// CHECK: %[[LOSS:.*]], %[[GM:.*]], %{{.*}} = snn.loss_ce_rate %[[M]], %{{.*}} : tensor<1x2x3xf32>
// CHECK: %[[GS:.*]] = snn.time_broadcast %[[GM]] {scale = 3.125000e-02 : f64} : tensor<1x2x3xf32> -> tensor<32x2x3xf32>
// CHECK: snn.neuron_bwd %[[GS]], %[[S]]
// CHECK: return %[[LOSS]]

// MSE-LABEL: func.func @train_step
// MSE: snn.time_sum
// MSE: snn.loss_mse_rate %{{.*}} : tensor<1x2x3xf32>
// MSE: snn.time_broadcast

// The maximum over time is not a mean: the loss reads every step.
// MAX-LABEL: func.func @train_step
// MAX-NOT: snn.time_sum
// MAX: snn.loss_ce_membrane_max %{{.*}} : tensor<32x2x3xf32>
// MAX-NOT: snn.time_broadcast

// Split in time, a rank's share of the mean is summed over the ranks before
// the loss; the gradient reaches the rank's own steps.
// SPLIT-LABEL: func.func @train_step_t16
// SPLIT: %[[M:.*]] = snn.time_sum %{{.*}} {scale = 3.125000e-02 : f64} : tensor<16x2x3xf32> -> tensor<1x2x3xf32>
// SPLIT: %[[ALL:.*]] = snn.all_reduce_sum %[[M]] : tensor<1x2x3xf32>
// SPLIT: %{{.*}}, %[[GM:.*]], %{{.*}} = snn.loss_ce_rate %[[ALL]]
// SPLIT: snn.time_broadcast %[[GM]] {scale = 3.125000e-02 : f64} : tensor<1x2x3xf32> -> tensor<16x2x3xf32>
func.func @forward(%x: tensor<32x2x4xf32>) -> tensor<32x2x3xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x4xf32>
  %h = snn.linear %x, %w : tensor<32x2x4xf32>, tensor<3x4xf32> -> tensor<32x2x3xf32>
  %s = snn.lif %h : tensor<32x2x3xf32>
  return %s : tensor<32x2x3xf32>
}

// -----

// Below 32 steps the loss reads the steps itself (no extra kernels).
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: snn.time_sum
// CHECK: snn.loss_ce_rate %{{.*}} : tensor<31x2x3xf32>
// CHECK-NOT: snn.time_broadcast
func.func @forward(%x: tensor<31x2x4xf32>) -> tensor<31x2x3xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x4xf32>
  %h = snn.linear %x, %w : tensor<31x2x4xf32>, tensor<3x4xf32> -> tensor<31x2x3xf32>
  %s = snn.lif %h : tensor<31x2x3xf32>
  return %s : tensor<31x2x3xf32>
}
