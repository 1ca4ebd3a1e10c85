// RUN: snn-opt %s -split-input-file --snn-split-time="parts=2" -verify-diagnostics
// RUN: not snn-opt %s -split-input-file --snn-split-time="parts=6" 2>&1 | FileCheck %s --check-prefix=PARTS

// PARTS: error: --snn-split-time parts=6 must be between 1 and the number of time steps, 5

func.func @forward(%x: tensor<5x2x4xf32>) -> tensor<5x2x2xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<2x4xf32>
  %h = snn.linear %x, %w : tensor<5x2x4xf32>, tensor<2x4xf32> -> tensor<5x2x2xf32>
  %s = snn.lif %h : tensor<5x2x2xf32>
  return %s : tensor<5x2x2xf32>
}

// -----

// A recurrent layer stays on one device.
func.func @forward(%x: tensor<5x2x4xf32>) -> tensor<5x2x4xf32> {
  %w = snn.param "rec.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x4xf32>
  %v0 = arith.constant dense<0.0> : tensor<2x4xf32>
  // expected-error @+1 {{is part of a recurrent layer, which runs step by step with each step depending on the previous step's output through its weights; --snn-split-time does not split recurrent layers: run this model on one device (drop --snn-split-time)}}
  %out, %v, %s = snn.time_loop ins(%x : tensor<5x2x4xf32>) iter_args(%v0, %v0 : tensor<2x4xf32>, tensor<2x4xf32>)
      -> tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> {
  ^bb0(%xt: tensor<2x4xf32>, %vt: tensor<2x4xf32>, %st: tensor<2x4xf32>):
    %r = snn.linear %st, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
    %in = snn.add %xt, %r : tensor<2x4xf32>
    %sn, %vn = snn.lif_step %in, %vt : tensor<2x4xf32>
    snn.yield %sn, %vn, %sn : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
  }
  return %out : tensor<5x2x4xf32>
}

// -----

// The maximum over time is not reduced across ranks.
func.func @train_step(%x: tensor<5x2x4xf32>, %labels: tensor<2xi32>) -> tensor<f32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<2x4xf32>
  %h = snn.linear %x, %w : tensor<5x2x4xf32>, tensor<2x4xf32> -> tensor<5x2x2xf32>
  %o = snn.li %h : tensor<5x2x2xf32>
  // expected-error @+1 {{takes the maximum over time, which --snn-split-time does not reduce across ranks; use loss=ce_membrane (the time mean) or run on one device}}
  %loss, %g, %correct = snn.loss_ce_membrane_max %o, %labels : tensor<5x2x2xf32>, tensor<2xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Training statistics would differ per rank.
func.func @train_step(%x: tensor<5x2x4xf32>, %labels: tensor<2xi32>) -> tensor<f32> {
  %g = snn.param "bn.weight" {init = #snn.init<ones>} : tensor<4xf32>
  %b = snn.param "bn.bias" : tensor<4xf32>
  %m = snn.param "bn.running_mean" {trainable = false} : tensor<4xf32>
  %v = snn.param "bn.running_var" {init = #snn.init<ones>, trainable = false} : tensor<4xf32>
  // expected-error @+1 {{takes its training statistics over all T*B samples, which --snn-split-time does not reduce across ranks; fold the batch norm or run on one device}}
  %n = snn.batch_norm %x, %g, %b, %m, %v {spatial_rank = 0} : tensor<5x2x4xf32>, tensor<4xf32>
  %loss, %gr, %correct = snn.loss_ce_rate %n, %labels : tensor<5x2x4xf32>, tensor<2xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Masks would differ per rank.
func.func @train_step(%x: tensor<5x2x4xf32>, %labels: tensor<2xi32>) -> tensor<f32> {
  // expected-error @+1 {{would draw a different mask on each rank; drop the dropout or run on one device}}
  %d = snn.dropout %x {p = 0.5} : tensor<5x2x4xf32>
  %loss, %gr, %correct = snn.loss_ce_rate %d, %labels : tensor<5x2x4xf32>, tensor<2xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// expected-error @+1 {{--snn-split-time needs func.func @forward (and @train_step after --snn-autodiff) to split}}
module {
  func.func @model(%x: tensor<5x2x4xf32>) -> tensor<5x2x4xf32> {
    return %x : tensor<5x2x4xf32>
  }
}

// -----

func.func @forward(%x: tensor<5x?x4xf32>) -> tensor<5x?x4xf32> {
  // expected-error @+1 {{has a dynamic batch or feature size; the state it hands to the next rank needs static sizes}}
  %s = snn.lif %x : tensor<5x?x4xf32>
  return %s : tensor<5x?x4xf32>
}

// -----

func.func @forward(%x: tensor<5x2x4xf32>) -> tensor<5x2x4xf32> {
  %s = snn.lif %x : tensor<5x2x4xf32>
  return %s : tensor<5x2x4xf32>
}
// expected-error @+1 {{has 4 time steps but @forward has 5}}
func.func @train_step(%x: tensor<4x2x4xf32>, %labels: tensor<2xi32>) -> tensor<f32> {
  %loss, %g, %correct = snn.loss_ce_rate %x, %labels : tensor<4x2x4xf32>, tensor<2xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
