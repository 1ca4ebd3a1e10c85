// RUN: snn-opt %s -split-input-file --snn-autodiff -verify-diagnostics
// RUN: not snn-opt %s -split-input-file --snn-autodiff="optimizer=rmsprop" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not snn-opt %s -split-input-file --snn-autodiff="entry=model" 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not snn-opt %s -split-input-file --snn-autodiff="lr=0" 2>&1 | FileCheck %s --check-prefix=LR

// OPT: error: --snn-autodiff: unknown optimizer 'rmsprop'; use sgd, adam or adamw
// ENTRY: error: --snn-autodiff: no function @model to train; name the model's entry point with entry=NAME
// LR: error: --snn-autodiff: the learning rate must be positive, got lr=0

// Nothing to train.
// expected-error @+1 {{the output of @forward depends on no trainable snn.param}}
func.func @forward(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %w = snn.param "w" {trainable = false} : tensor<3x3xf32>
  %h = snn.linear %x, %w : tensor<4x2x3xf32>, tensor<3x3xf32> -> tensor<4x2x3xf32>
  %s = snn.lif %h : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

// The output must be [T, B, classes].
// expected-error @+1 {{--snn-autodiff trains a function (input [T, B, ...]) -> output [T, B, classes]}}
func.func @forward(%x: tensor<4x2x3x3xf32>) -> tensor<4x2x3x3xf32> {
  %s = snn.lif %x : tensor<4x2x3x3xf32>
  return %s : tensor<4x2x3x3xf32>
}

// -----

func.func @forward(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %w = snn.param "w" : tensor<3x3xf32>
  %h = snn.linear %x, %w : tensor<4x2x3xf32>, tensor<3x3xf32> -> tensor<4x2x3xf32>
  // expected-error @+1 {{cannot train through dropout with shared_across_time}}
  %d = snn.dropout %h {p = 0.5, shared_across_time} : tensor<4x2x3xf32>
  %s = snn.lif %d : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

// expected-error @+1 {{the module already has a @train_step}}
module {
  func.func @forward(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
    return %x : tensor<4x2x3xf32>
  }
  func.func @train_step() {
    return
  }
}
