// RUN: snn-opt %s --snn-fuse --split-input-file --verify-diagnostics | FileCheck %s
// RUN: snn-opt %s --snn-fuse="spike-count=false" --split-input-file | FileCheck %s --check-prefix=OFF

// The spikes of a layer read by one event-driven linear (directly or
// through snn.flatten) are counted by the layer's kernels.
// CHECK-LABEL: func.func @counted
// CHECK: snn.lif %{{.*}} {snn.fused_spike_count, snn.name = "lif1"}
// CHECK: snn.if %{{.*}} {snn.fused_spike_count}
// OFF-LABEL: func.func @counted
// OFF-NOT: fused_spike_count
func.func @counted(%x: tensor<4x2x16xf32>, %w: tensor<3x16xf32>) -> (tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x16xf32>) {
  %s = snn.lif %x {snn.name = "lif1"} : tensor<4x2x16xf32>
  // expected-remark @+1 {{spike count fused into 'snn.lif' "lif1"}}
  %y1 = snn.linear %s, %w {event_driven = 0.1 : f64} : tensor<4x2x16xf32>, tensor<3x16xf32> -> tensor<4x2x3xf32>
  %i = snn.if %x : tensor<4x2x16xf32>
  %f = snn.flatten %i : tensor<4x2x16xf32> -> tensor<4x2x16xf32>
  // expected-remark @+1 {{spike count fused into 'snn.if'}}
  %y2 = snn.linear %f, %w {event_driven = 0.1 : f64} : tensor<4x2x16xf32>, tensor<3x16xf32> -> tensor<4x2x3xf32>
  // A dense reader and a non-event use do not matter.
  return %y1, %y2, %s : tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x16xf32>
}

// -----

// Spikes read by two event-driven linears keep a density kernel per layer;
// a layer fused with its pooling writes no per-neuron spikes.
// CHECK-LABEL: func.func @uncounted
// CHECK-NOT: fused_spike_count
// CHECK: return
func.func @uncounted(%x: tensor<4x2x16xf32>, %w: tensor<3x16xf32>) -> (tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>) {
  %s = snn.lif %x : tensor<4x2x16xf32>
  // expected-remark @+1 {{spike count not fused into 'snn.lif': its input feeds 2 event-driven layers, each with its own decision}}
  %y1 = snn.linear %s, %w {event_driven = 0.1 : f64} : tensor<4x2x16xf32>, tensor<3x16xf32> -> tensor<4x2x3xf32>
  // expected-remark @+1 {{spike count not fused into 'snn.lif': its input feeds 2 event-driven layers}}
  %y2 = snn.linear %s, %w {event_driven = 0.2 : f64} : tensor<4x2x16xf32>, tensor<3x16xf32> -> tensor<4x2x3xf32>
  %d = snn.lif %x : tensor<4x2x16xf32>
  %y3 = snn.linear %d, %w : tensor<4x2x16xf32>, tensor<3x16xf32> -> tensor<4x2x3xf32>
  return %y1, %y2, %y3 : tensor<4x2x3xf32>, tensor<4x2x3xf32>, tensor<4x2x3xf32>
}
