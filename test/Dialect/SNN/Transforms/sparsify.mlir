// RUN: snn-opt %s --snn-sparsify="min-features=8" -split-input-file -verify-diagnostics | FileCheck %s
// RUN: snn-opt %s --snn-sparsify="target=cuda min-features=8" -split-input-file | FileCheck %s --check-prefix=CUDA
// RUN: snn-opt %s --snn-sparsify="crossover=0.3 min-features=8" -split-input-file | FileCheck %s --check-prefix=EXPLICIT
// RUN: snn-opt %s --snn-sparsify="min-features=8 input-is-spikes" -split-input-file 2>/dev/null | FileCheck %s --check-prefix=INPUT
// RUN: not snn-opt %s --snn-sparsify="crossover=1.5" 2>&1 | FileCheck %s --check-prefix=BAD-CROSSOVER
// RUN: not snn-opt %s --snn-sparsify="target=tpu" 2>&1 | FileCheck %s --check-prefix=BAD-TARGET
// RUN: not snn-opt %s --snn-sparsify="min-features=0" 2>&1 | FileCheck %s --check-prefix=BAD-MIN
// BAD-CROSSOVER: snn-sparsify: crossover must be a density in (0, 1], or 0 for the target's default; got 1.5
// BAD-TARGET: snn-sparsify: target must be cpu or cuda, not 'tpu'
// BAD-MIN: snn-sparsify: min-features must be at least 1, got 0

// Spikes of a LIF layer, directly and through flatten, scale and dropout,
// are rewritten; the data input is not.
// CHECK-LABEL: func.func @spikes
// CHECK: %[[H:.*]] = snn.linear %{{.*}} : tensor<4x2x16xf32>
// CHECK-NOT: event_driven
// CHECK: %[[S:.*]] = snn.lif %[[H]]
// CHECK: snn.linear %[[S]], %{{.*}} {event_driven = 1.500000e-01 : f64}
// CHECK: %[[F:.*]] = snn.flatten
// CHECK: snn.linear %[[F]], %{{.*}} {event_driven = 1.500000e-01 : f64}
// CHECK: %[[D:.*]] = snn.dropout
// CHECK: snn.linear %[[D]], %{{.*}} {event_driven = 1.500000e-01 : f64}
// CUDA-LABEL: func.func @spikes
// CUDA: snn.linear %{{.*}} {event_driven = 8.000000e-02 : f64}
// The data input counts as spikes with input-is-spikes.
// INPUT-LABEL: func.func @spikes
// INPUT: snn.linear %{{.*}} {event_driven = 1.500000e-01 : f64} : tensor<4x2x16xf32>, tensor<16x16xf32>, tensor<16xf32>
// EXPLICIT-LABEL: func.func @spikes
// EXPLICIT: snn.linear %{{.*}} {event_driven = 3.000000e-01 : f64}
func.func @spikes(%x: tensor<4x2x16xf32>, %w: tensor<16x16xf32>, %b: tensor<16xf32>,
                  %w2: tensor<3x16xf32>) -> (tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>) {
  // expected-remark @+1 {{snn-sparsify: left dense: its input is a function argument (data, not spikes; pass input-is-spikes if it is spike data)}}
  %h = snn.linear %x, %w, %b : tensor<4x2x16xf32>, tensor<16x16xf32>, tensor<16xf32> -> tensor<4x2x16xf32>
  %s = snn.lif %h : tensor<4x2x16xf32>
  %y1 = snn.linear %s, %w2 : tensor<4x2x16xf32>, tensor<3x16xf32> -> tensor<4x2x3xf32>
  %r = snn.lif %x : tensor<4x2x16xf32>
  %m = snn.scale %r {scale = 2.0} : tensor<4x2x16xf32>
  %f = snn.flatten %m : tensor<4x2x16xf32> -> tensor<4x2x16xf32>
  %y2 = snn.linear %f, %w2 : tensor<4x2x16xf32>, tensor<3x16xf32> -> tensor<4x2x3xf32>
  %d = snn.dropout %s {p = 0.2} : tensor<4x2x16xf32>
  %y3 = snn.linear %d, %w2 : tensor<4x2x16xf32>, tensor<3x16xf32> -> tensor<4x2x3xf32>
  return %y1, %y2, %y3 : tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>
}

// -----

// Membranes, batch-norm output and narrow inputs stay dense.
// CHECK-LABEL: func.func @dense
// CHECK-NOT: event_driven
// CHECK: return
func.func @dense(%x: tensor<4x2x16xf32>, %w: tensor<3x16xf32>, %g: tensor<16xf32>,
                 %w4: tensor<3x4xf32>, %x4: tensor<4x2x4xf32>) -> (tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>) {
  %v = snn.li %x : tensor<4x2x16xf32>
  // expected-remark @+1 {{snn-sparsify: left dense: its input is the membrane of a non-spiking 'snn.li' readout}}
  %y1 = snn.linear %v, %w : tensor<4x2x16xf32>, tensor<3x16xf32> -> tensor<4x2x3xf32>
  %n = snn.batch_norm %x, %g, %g, %g, %g {spatial_rank = 0} : tensor<4x2x16xf32>, tensor<16xf32>
  // expected-remark @+1 {{snn-sparsify: left dense: its input is the result of 'snn.batch_norm' (not spikes)}}
  %y2 = snn.linear %n, %w : tensor<4x2x16xf32>, tensor<3x16xf32> -> tensor<4x2x3xf32>
  %s4 = snn.lif %x4 : tensor<4x2x4xf32>
  // expected-remark @+1 {{snn-sparsify: left dense: its input has 4 features, fewer than min-features=8}}
  %y3 = snn.linear %s4, %w4 : tensor<4x2x4xf32>, tensor<3x4xf32> -> tensor<4x2x3xf32>
  return %y1, %y2, %y3 : tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>
}

// -----

// The sparse backward: a linear_bwd whose output gradient is the input
// gradient of a layer with a surrogate band is marked; one without a band,
// a readout's (no surrogate), any other gradient and a narrow one stay dense.
// CHECK-LABEL: func.func @backward
// CHECK: snn.linear_bwd %[[G:.*]], %{{.*}}, %{{.*}} {event_driven = 1.500000e-01 : f64, has_bias = true, need_gx = true}
// CHECK: snn.linear_bwd %{{.*}} {has_bias = false, need_gx = true}
// CHECK: snn.linear_bwd %{{.*}} {has_bias = false, need_gx = false}
// CHECK: snn.linear_bwd %{{.*}} {has_bias = false, need_gx = false}
// CHECK: snn.linear_bwd %{{.*}} {has_bias = false, need_gx = true}
// CUDA-LABEL: func.func @backward
// CUDA: snn.linear_bwd %{{.*}} {event_driven = 1.000000e-01 : f64, has_bias = true, need_gx = true}
// EXPLICIT-LABEL: func.func @backward
// EXPLICIT: snn.linear_bwd %{{.*}} {event_driven = 3.000000e-01 : f64, has_bias = true, need_gx = true}
func.func @backward(%x: tensor<4x2x16xf32>, %gy: tensor<4x2x16xf32>, %w: tensor<16x16xf32>,
                    %w4: tensor<4x16xf32>, %h4: tensor<4x2x4xf32>, %gy4: tensor<4x2x4xf32>)
    -> (tensor<4x2x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<4x2x16xf32>, tensor<16x16xf32>,
        tensor<16x16xf32>, tensor<16x16xf32>, tensor<4x2x16xf32>, tensor<4x16xf32>) {
  %s = snn.lif %x {surrogate = #snn.surrogate<sigmoid, alpha = 4.0, grad_band = 0.3>} : tensor<4x2x16xf32>
  %g = snn.neuron_bwd %gy, %s : tensor<4x2x16xf32>
  %b:3 = snn.linear_bwd %g, %x, %w {has_bias = true, need_gx = true} : tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<16x16xf32> -> tensor<4x2x16xf32>, tensor<16x16xf32>, tensor<16xf32>
  %u = snn.lif %x : tensor<4x2x16xf32>
  %gu = snn.neuron_bwd %gy, %u : tensor<4x2x16xf32>
  // expected-remark @+1 {{snn-sparsify: backward left dense: its output gradient is the input gradient of a neuron layer without a surrogate band (set grad-threshold in --snn-autodiff, or grad_band on its surrogate)}}
  %c:2 = snn.linear_bwd %gu, %x, %w {has_bias = false, need_gx = true} : tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<16x16xf32> -> tensor<4x2x16xf32>, tensor<16x16xf32>
  %v = snn.li %x : tensor<4x2x16xf32>
  %gv = snn.neuron_bwd %gy, %v : tensor<4x2x16xf32>
  // expected-remark @+1 {{snn-sparsify: backward left dense: its output gradient is the input gradient of a non-spiking 'snn.li' readout (no surrogate)}}
  %d = snn.linear_bwd %gv, %x, %w {has_bias = false, need_gx = false} : tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  // expected-remark @+1 {{snn-sparsify: backward left dense: its output gradient is a function argument}}
  %e = snn.linear_bwd %gy, %x, %w {has_bias = false, need_gx = false} : tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %s4 = snn.lif %h4 {surrogate = #snn.surrogate<sigmoid, alpha = 4.0, grad_band = 0.3>} : tensor<4x2x4xf32>
  %g4 = snn.neuron_bwd %gy4, %s4 : tensor<4x2x4xf32>
  // expected-remark @+1 {{snn-sparsify: backward left dense: its output gradient has 4 features, fewer than min-features=8}}
  %f:2 = snn.linear_bwd %g4, %x, %w4 {has_bias = false, need_gx = true} : tensor<4x2x4xf32>, tensor<4x2x16xf32>, tensor<4x16xf32> -> tensor<4x2x16xf32>, tensor<4x16xf32>
  return %b#0, %b#1, %b#2, %c#0, %c#1, %d, %e, %f#0, %f#1 : tensor<4x2x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<4x2x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<4x2x16xf32>, tensor<4x16xf32>
}
