// Inputs snn-compile rejects, each with one error at the op to fix; a failed
// compile leaves no directory behind.
// RUN: rm -rf %t && mkdir -p %t
// RUN: snn-opt %s -split-input-file -verify-diagnostics --snn-compile="output=%t/m.snnmod target=cpu" -o /dev/null
// RUN: not ls %t/m.snnmod
// RUN: ls %t | count 0

// expected-error @below {{snn-compile found no entry point: the module needs a func.func @forward}}
module {
  func.func @main(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
    return %x : tensor<4x2x3xf32>
  }
}

// -----

// The step form: temporal fusion comes first.
func.func @forward(%x: tensor<8x2x4xf32>) -> tensor<8x2x3xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x4xf32>
  %v0 = arith.constant dense<0.0> : tensor<2x3xf32>
  // expected-error @below {{snn-compile needs the multi-step form, but @forward still has an snn.time_loop; run --snn-temporal-fusion before --snn-compile}}
  %out, %vT = snn.time_loop ins(%x : tensor<8x2x4xf32>) iter_args(%v0 : tensor<2x3xf32>)
      -> tensor<8x2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x4xf32>, %v: tensor<2x3xf32>):
    %h = snn.linear %xt, %w : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
    %s, %vn = snn.lif_step %h, %v : tensor<2x3xf32>
    snn.yield %s, %vn : tensor<2x3xf32>, tensor<2x3xf32>
  }
  return %out : tensor<8x2x3xf32>
}

// -----

// A recurrent loop in a hand-written @train_step: --snn-autodiff unrolls them.
func.func @forward(%x: tensor<8x2x3xf32>) -> tensor<8x2x3xf32> {
  %s = snn.lif %x : tensor<8x2x3xf32>
  return %s : tensor<8x2x3xf32>
}
func.func @train_step(%x: tensor<8x2x3xf32>, %labels: tensor<2xi32>) -> tensor<f32> {
  %w = snn.param "rec.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x3xf32>
  %z = arith.constant dense<0.0> : tensor<2x3xf32>
  // expected-error @below {{recurrent snn.time_loop (its state feeds 'snn.linear') in @train_step: --snn-autodiff unrolls recurrent loops for training}}
  %out, %vT, %sT = snn.time_loop ins(%x : tensor<8x2x3xf32>) iter_args(%z, %z : tensor<2x3xf32>, tensor<2x3xf32>)
      -> tensor<8x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32> {
  ^bb0(%xt: tensor<2x3xf32>, %v: tensor<2x3xf32>, %sp: tensor<2x3xf32>):
    // expected-note @below {{the state is used here}}
    %r = snn.linear %sp, %w : tensor<2x3xf32>, tensor<3x3xf32> -> tensor<2x3xf32>
    %i = snn.add %xt, %r : tensor<2x3xf32>
    %s, %vn = snn.lif_step %i, %v : tensor<2x3xf32>
    snn.yield %s, %vn, %s : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  }
  %loss, %grad, %correct = snn.loss_ce_rate %out, %labels : tensor<8x2x3xf32>, tensor<2xi32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

func.func @forward(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  // expected-error @below {{'arith.addf' is not supported by snn-compile: a compiled module runs the snn ops of docs/artifact-format.md}}
  %y = arith.addf %x, %x : tensor<4x2x3xf32>
  %s = snn.lif %y : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

// -----

// A dynamic batch needs batch=N.
// expected-error @below {{dynamic dimension in 'tensor<4x?x3xf32>': the compiled module has static shapes; give the batch size with --snn-compile="batch=N ...}}
func.func @forward(%x: tensor<4x?x3xf32>) -> tensor<4x?x3xf32> {
  %s = snn.lif %x : tensor<4x?x3xf32>
  return %s : tensor<4x?x3xf32>
}

// -----

// expected-error @below {{@forward needs the input [T, B, features...] as its first argument}}
func.func @forward() -> tensor<4x2x3xf32> {
  %w = snn.param "w" : tensor<4x2x3xf32>
  return %w : tensor<4x2x3xf32>
}

// -----

// expected-error @below {{@forward: argument #1 of type 'tensor<3x3xf32>' is not supported; the entry point takes the input [T, B, ...]; make weights snn.param ops}}
func.func @forward(%x: tensor<4x2x3xf32>, %w: tensor<3x3xf32>) -> tensor<4x2x3xf32> {
  %h = snn.linear %x, %w : tensor<4x2x3xf32>, tensor<3x3xf32> -> tensor<4x2x3xf32>
  return %h : tensor<4x2x3xf32>
}

// -----

func.func @forward(%x: tensor<4x2x3xf32>) -> (tensor<4x2x3xf32>, tensor<4x2x3xf32>) {
  %s = snn.lif %x : tensor<4x2x3xf32>
  // expected-error @below {{@forward must return one tensor (the output [T, B, classes]), not 2}}
  return %s, %x : tensor<4x2x3xf32>, tensor<4x2x3xf32>
}

// -----

func.func @forward(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %s = snn.lif %x {snn.name = "a"} : tensor<4x2x3xf32>
  // expected-error @below {{two neuron layers are named 'a'; make their snn.name attributes unique}}
  %t = snn.lif %s {snn.name = "a"} : tensor<4x2x3xf32>
  return %t : tensor<4x2x3xf32>
}
