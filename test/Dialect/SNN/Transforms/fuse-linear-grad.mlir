// RUN: snn-opt %s --snn-fuse="spike-count=false band-mask=false" -split-input-file -verify-diagnostics | FileCheck %s
// RUN: snn-opt %s --snn-fuse="spike-count=false band-mask=false linear-grad=false" -split-input-file | FileCheck %s --check-prefix=OFF

// The input gradient of a dense linear_bwd with few outputs that only the
// neuron backward of a banded layer reads is formed in that backward (in
// the band): the layer gets snn.fused_linear_grad = C, the linear backward
// snn.gx_in_neuron_bwd, and the IR keeps both ops.
// CHECK-LABEL: func.func @fused
// CHECK: snn.lif %{{.*}} {snn.fused_linear_grad = 5 : i64, snn.name = "lif1", surrogate
// CHECK: snn.cuba_lif %{{.*}}snn.fused_linear_grad = 32 : i64
// CHECK: snn.linear_bwd %{{.*}} {has_bias = false, need_gx = true, snn.gx_in_neuron_bwd}
// CHECK-NEXT: snn.neuron_bwd
// CHECK: snn.linear_bwd %{{.*}} {has_bias = true, need_gx = true, snn.gx_in_neuron_bwd}
// CHECK-NEXT: snn.neuron_bwd
// OFF-LABEL: func.func @fused
// OFF-NOT: snn.fused_linear_grad
// OFF-NOT: snn.gx_in_neuron_bwd
// OFF: return
func.func @fused(%x: tensor<4x2x16xf32>, %w: tensor<5x16xf32>, %gy: tensor<4x2x5xf32>,
                 %w32: tensor<32x16xf32>, %gy32: tensor<4x2x32xf32>)
    -> (tensor<4x2x16xf32>, tensor<4x2x16xf32>) {
  %s = snn.lif %x {snn.name = "lif1", surrogate = #snn.surrogate<sigmoid, alpha = 4.0, grad_band = 0.25>} : tensor<4x2x16xf32>
  %c = snn.cuba_lif %x {k_syn = 0.3, c_syn = 1.0, snn.name = "cuba1", surrogate = #snn.surrogate<sigmoid, alpha = 4.0, grad_band = 0.25>} : tensor<4x2x16xf32>
  // expected-remark @+1 {{input gradient computed in the neuron backward of 'snn.lif' "lif1": the 0.0 MiB gradient is not written}}
  %b:2 = snn.linear_bwd %gy, %s, %w {has_bias = false, need_gx = true} : tensor<4x2x5xf32>, tensor<4x2x16xf32>, tensor<5x16xf32> -> tensor<4x2x16xf32>, tensor<5x16xf32>
  %g = snn.neuron_bwd %b#0, %s : tensor<4x2x16xf32>
  // expected-remark @+1 {{input gradient computed in the neuron backward of 'snn.cuba_lif' "cuba1"}}
  %d:3 = snn.linear_bwd %gy32, %c, %w32 {has_bias = true, need_gx = true} : tensor<4x2x32xf32>, tensor<4x2x16xf32>, tensor<32x16xf32> -> tensor<4x2x16xf32>, tensor<32x16xf32>, tensor<32xf32>
  %gc = snn.neuron_bwd %d#0, %c : tensor<4x2x16xf32>
  return %g, %gc : tensor<4x2x16xf32>, tensor<4x2x16xf32>
}

// -----

// Left to the linear backward, each with the reason.
// CHECK-LABEL: func.func @unfused
// CHECK-NOT: snn.fused_linear_grad
// CHECK-NOT: snn.gx_in_neuron_bwd
// CHECK: return
func.func @unfused(%x: tensor<4x2x16xf32>, %x12: tensor<4x2x12xf32>,
                   %w33: tensor<33x16xf32>, %gy33: tensor<4x2x33xf32>,
                   %w12: tensor<5x12xf32>, %w: tensor<5x16xf32>,
                   %gy: tensor<4x2x5xf32>)
    -> (tensor<4x2x16xf32>, tensor<4x2x12xf32>, tensor<4x2x16xf32>) {
  %a = snn.lif %x {snn.name = "wide", surrogate = #snn.surrogate<sigmoid, alpha = 4.0, grad_band = 0.25>} : tensor<4x2x16xf32>
  // expected-remark @+1 {{input gradient not computed in the neuron backward of 'snn.lif' "wide": the linear has 33 outputs (at most 32: each backward thread keeps its neurons' weight columns in registers)}}
  %b:2 = snn.linear_bwd %gy33, %a, %w33 {has_bias = false, need_gx = true} : tensor<4x2x33xf32>, tensor<4x2x16xf32>, tensor<33x16xf32> -> tensor<4x2x16xf32>, tensor<33x16xf32>
  %ga = snn.neuron_bwd %b#0, %a : tensor<4x2x16xf32>
  %o = snn.lif %x12 {snn.name = "odd", surrogate = #snn.surrogate<sigmoid, alpha = 4.0, grad_band = 0.25>} : tensor<4x2x12xf32>
  // expected-remark @+1 {{input gradient not computed in the neuron backward of 'snn.lif' "odd": its 12 input features are not a multiple of 8}}
  %c:2 = snn.linear_bwd %gy, %o, %w12 {has_bias = false, need_gx = true} : tensor<4x2x5xf32>, tensor<4x2x12xf32>, tensor<5x12xf32> -> tensor<4x2x12xf32>, tensor<5x12xf32>
  %go = snn.neuron_bwd %c#0, %o : tensor<4x2x12xf32>
  %n = snn.lif %x {snn.name = "noband"} : tensor<4x2x16xf32>
  // expected-remark @+1 {{input gradient not computed in the neuron backward of 'snn.lif' "noband": the layer's surrogate has no finite grad_band (set grad-threshold in --snn-autodiff): every entry would need gy W, and a thread's C weights per neuron do not fit its registers}}
  %nb:2 = snn.linear_bwd %gy, %n, %w {has_bias = false, need_gx = true} : tensor<4x2x5xf32>, tensor<4x2x16xf32>, tensor<5x16xf32> -> tensor<4x2x16xf32>, tensor<5x16xf32>
  %gn = snn.neuron_bwd %nb#0, %n : tensor<4x2x16xf32>
  // Event-driven (FuseBandMask.cpp's), and a gx that something else also
  // reads: no candidate, no remark.
  %e = snn.lif %x {snn.name = "event", surrogate = #snn.surrogate<sigmoid, alpha = 4.0, grad_band = 0.25>} : tensor<4x2x16xf32>
  %f:2 = snn.linear_bwd %gy, %e, %w {event_driven = 0.1 : f64, has_bias = false, need_gx = true} : tensor<4x2x5xf32>, tensor<4x2x16xf32>, tensor<5x16xf32> -> tensor<4x2x16xf32>, tensor<5x16xf32>
  %ge = snn.neuron_bwd %f#0, %e : tensor<4x2x16xf32>
  %h:2 = snn.linear_bwd %gy, %e, %w {has_bias = false, need_gx = true} : tensor<4x2x5xf32>, tensor<4x2x16xf32>, tensor<5x16xf32> -> tensor<4x2x16xf32>, tensor<5x16xf32>
  %gh = snn.neuron_bwd %h#0, %e : tensor<4x2x16xf32>
  %sum = snn.add %gh, %h#0 : tensor<4x2x16xf32>
  %all = snn.add %sum, %gn : tensor<4x2x16xf32>
  return %ga, %go, %all : tensor<4x2x16xf32>, tensor<4x2x12xf32>, tensor<4x2x16xf32>
}
