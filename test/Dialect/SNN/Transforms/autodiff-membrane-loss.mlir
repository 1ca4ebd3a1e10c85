// RUN: snn-opt %s -split-input-file --snn-autodiff | FileCheck %s
// RUN: snn-opt %s -split-input-file --snn-autodiff="loss=ce_membrane_max" | FileCheck %s --check-prefix=MAX
// RUN: not snn-opt %s -split-input-file --snn-autodiff="loss=membrane" 2>&1 | FileCheck %s --check-prefix=BAD

// Losses on a membrane output. loss=auto picks the time-mean cross-entropy
// when @forward returns a membrane: an snn.li readout, or a step neuron's
// next membrane that a time loop yields per step (its state, as a
// snnTorch model returning `mem`). loss=ce_membrane_max reads its maximum
// over time instead.

// CHECK-LABEL: func.func @train_step
// CHECK: %[[O:.*]] = snn.li %
// CHECK: snn.loss_ce_membrane %[[O]]
// MAX-LABEL: func.func @train_step
// MAX: %[[O:.*]] = snn.li %
// MAX: %{{.*}}, %[[G:.*]], %{{.*}} = snn.loss_ce_membrane_max %[[O]], %{{.*}} : tensor<4x2x3xf32>, tensor<2xi32> -> tensor<f32>
// MAX: snn.neuron_bwd %[[G]], %[[O]]
// BAD: error: --snn-autodiff: unknown loss 'membrane'; use ce_rate, mse_rate, ce_membrane, ce_membrane_max or auto
func.func @forward(%x: tensor<4x2x5xf32>) -> tensor<4x2x3xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x5xf32>
  %h = snn.linear %x, %w : tensor<4x2x5xf32>, tensor<3x5xf32> -> tensor<4x2x3xf32>
  %o = snn.li %h {k = 0.2, c = 1.0} : tensor<4x2x3xf32>
  return %o : tensor<4x2x3xf32>
}

// -----

// The loop is unrolled: the per-step membranes are stacked into the output,
// and each step's gradient flows back through lif_step's next membrane.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[M:.*]] = snn.time_stack
// CHECK: snn.loss_ce_membrane %[[M]]
// CHECK: snn.neuron_step_bwd
// MAX-LABEL: func.func @train_step
// MAX: %[[M:.*]] = snn.time_stack
// MAX: snn.loss_ce_membrane_max %[[M]]
func.func @forward(%x: tensor<2x2x5xf32>) -> tensor<2x2x3xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x5xf32>
  %v0 = arith.constant dense<0.0> : tensor<2x3xf32>
  %out, %v = snn.time_loop ins(%x : tensor<2x2x5xf32>) iter_args(%v0 : tensor<2x3xf32>)
      -> tensor<2x2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x5xf32>, %vt: tensor<2x3xf32>):
    %h = snn.linear %xt, %w : tensor<2x5xf32>, tensor<3x5xf32> -> tensor<2x3xf32>
    %s, %vn = snn.lif_step %h, %vt {k = 0.5, c = 0.5} : tensor<2x3xf32>
    snn.yield %vn, %vn : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %out : tensor<2x2x3xf32>
}
