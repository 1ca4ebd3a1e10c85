// RUN: snn-opt %s --snn-fuse="spike-count=false linear-grad=false" -split-input-file -verify-diagnostics | FileCheck %s
// RUN: snn-opt %s --snn-fuse="spike-count=false band-mask=false" -split-input-file | FileCheck %s --check-prefix=OFF

// The input gradient of an event-driven linear_bwd that only the neuron
// backward of a banded layer reads is computed in that layer's band.
// CHECK-LABEL: func.func @masked
// CHECK: snn.linear_bwd %{{.*}} {event_driven = 1.000000e-01 : f64, has_bias = false, need_gx = true, snn.band_masked_gx}
// CHECK: snn.linear_bwd %{{.*}} {event_driven = 1.000000e-01 : f64, has_bias = false, need_gx = true, snn.band_masked_gx}
// OFF-LABEL: func.func @masked
// OFF-NOT: snn.band_masked_gx
// OFF: return
func.func @masked(%x: tensor<4x2x16xf32>, %w: tensor<8x16xf32>, %gy: tensor<4x2x8xf32>)
    -> (tensor<4x2x16xf32>, tensor<4x2x16xf32>) {
  %s = snn.lif %x {snn.name = "lif1", surrogate = #snn.surrogate<atan, alpha = 2.0, grad_band = 0.25>} : tensor<4x2x16xf32>
  %i = snn.if %x {snn.name = "if1", v_th = 0.5 : f64, surrogate = #snn.surrogate<sigmoid, alpha = 4.0, grad_band = 0.3>} : tensor<4x2x16xf32>
  // expected-remark @+1 {{input gradient computed in the surrogate band of 'snn.lif' "lif1" only}}
  %b:2 = snn.linear_bwd %gy, %s, %w {event_driven = 0.1 : f64, has_bias = false, need_gx = true} : tensor<4x2x8xf32>, tensor<4x2x16xf32>, tensor<8x16xf32> -> tensor<4x2x16xf32>, tensor<8x16xf32>
  %g = snn.neuron_bwd %b#0, %s : tensor<4x2x16xf32>
  // expected-remark @+1 {{input gradient computed in the surrogate band of 'snn.if' "if1" only}}
  %c:2 = snn.linear_bwd %gy, %i, %w {event_driven = 0.1 : f64, has_bias = false, need_gx = true} : tensor<4x2x8xf32>, tensor<4x2x16xf32>, tensor<8x16xf32> -> tensor<4x2x16xf32>, tensor<8x16xf32>
  %gi = snn.neuron_bwd %c#0, %i : tensor<4x2x16xf32>
  return %g, %gi : tensor<4x2x16xf32>, tensor<4x2x16xf32>
}

// -----

// Left unmasked, each with the reason.
// CHECK-LABEL: func.func @unmasked
// CHECK-NOT: snn.band_masked_gx
// CHECK: return
func.func @unmasked(%x: tensor<4x2x16xf32>, %w: tensor<8x16xf32>, %gy: tensor<4x2x8xf32>,
                    %wide: tensor<8200x16xf32>, %gwide: tensor<4x2x8200xf32>)
    -> (tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>,
        tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<8x16xf32>) {
  %band = snn.lif %x {surrogate = #snn.surrogate<atan, alpha = 2.0, grad_band = 0.25>} : tensor<4x2x16xf32>
  // expected-remark @+1 {{input gradient not masked by a surrogate band: its input gradient has 2 readers}}
  %a:2 = snn.linear_bwd %gy, %band, %w {event_driven = 0.1 : f64, has_bias = false, need_gx = true} : tensor<4x2x8xf32>, tensor<4x2x16xf32>, tensor<8x16xf32> -> tensor<4x2x16xf32>, tensor<8x16xf32>
  %ga = snn.neuron_bwd %a#0, %band : tensor<4x2x16xf32>
  %sum = snn.add %a#0, %ga : tensor<4x2x16xf32>
  // expected-remark @+1 {{input gradient not masked by a surrogate band: its input gradient is read by 'snn.scale' (not a neuron backward's spike gradient)}}
  %b:2 = snn.linear_bwd %gy, %band, %w {event_driven = 0.1 : f64, has_bias = false, need_gx = true} : tensor<4x2x8xf32>, tensor<4x2x16xf32>, tensor<8x16xf32> -> tensor<4x2x16xf32>, tensor<8x16xf32>
  %gb = snn.scale %b#0 {scale = 2.0} : tensor<4x2x16xf32>
  %plain = snn.lif %x {surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<4x2x16xf32>
  // expected-remark @+1 {{input gradient not masked by a surrogate band: the layer's surrogate has no finite grad_band (set grad-threshold in --snn-autodiff)}}
  %c:2 = snn.linear_bwd %gy, %plain, %w {event_driven = 0.1 : f64, has_bias = false, need_gx = true} : tensor<4x2x8xf32>, tensor<4x2x16xf32>, tensor<8x16xf32> -> tensor<4x2x16xf32>, tensor<8x16xf32>
  %gc = snn.neuron_bwd %c#0, %plain : tensor<4x2x16xf32>
  %perNeuron = snn.lif %x {v_th = dense<0.5> : tensor<16xf32>, surrogate = #snn.surrogate<atan, alpha = 2.0, grad_band = 0.25>} : tensor<4x2x16xf32>
  // expected-remark @+1 {{input gradient not masked by a surrogate band: the layer's v_th is per neuron}}
  %d:2 = snn.linear_bwd %gy, %perNeuron, %w {event_driven = 0.1 : f64, has_bias = false, need_gx = true} : tensor<4x2x8xf32>, tensor<4x2x16xf32>, tensor<8x16xf32> -> tensor<4x2x16xf32>, tensor<8x16xf32>
  %gd = snn.neuron_bwd %d#0, %perNeuron : tensor<4x2x16xf32>
  %cuba = snn.cuba_lif %x {surrogate = #snn.surrogate<atan, alpha = 2.0, grad_band = 0.25>} : tensor<4x2x16xf32>
  // expected-remark @+1 {{input gradient not masked by a surrogate band: the layer is 'snn.cuba_lif' (only snn.lif, snn.if and snn.plif test their band on the saved membrane alone)}}
  %e:2 = snn.linear_bwd %gy, %cuba, %w {event_driven = 0.1 : f64, has_bias = false, need_gx = true} : tensor<4x2x8xf32>, tensor<4x2x16xf32>, tensor<8x16xf32> -> tensor<4x2x16xf32>, tensor<8x16xf32>
  %ge = snn.neuron_bwd %e#0, %cuba : tensor<4x2x16xf32>
  // expected-remark @+1 {{input gradient not masked by a surrogate band: its rows are too wide for the kernel's shared lists (8216 input and output features, at most 8192)}}
  %f:2 = snn.linear_bwd %gwide, %band, %wide {event_driven = 0.1 : f64, has_bias = false, need_gx = true} : tensor<4x2x8200xf32>, tensor<4x2x16xf32>, tensor<8200x16xf32> -> tensor<4x2x16xf32>, tensor<8200x16xf32>
  %gf = snn.neuron_bwd %f#0, %band : tensor<4x2x16xf32>
  // Dense, or without an input gradient: no remark.
  %h:2 = snn.linear_bwd %gy, %band, %w {has_bias = false, need_gx = true} : tensor<4x2x8xf32>, tensor<4x2x16xf32>, tensor<8x16xf32> -> tensor<4x2x16xf32>, tensor<8x16xf32>
  %gh = snn.neuron_bwd %h#0, %band : tensor<4x2x16xf32>
  %k = snn.linear_bwd %gy, %band, %w {event_driven = 0.1 : f64, has_bias = false, need_gx = false} : tensor<4x2x8xf32>, tensor<4x2x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %sum, %gb, %gc, %gd, %ge, %gf, %k : tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<8x16xf32>
}
