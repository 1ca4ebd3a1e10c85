// RUN: snn-opt %s --snn-fuse -split-input-file -verify-diagnostics | FileCheck %s
// RUN: snn-opt %s --snn-fuse="time-mean=false" -split-input-file | FileCheck %s --check-prefix=OFF

// In training, the time mean of a layer's output is added up by its
// forward scan and the gradient of that mean read by its backward scan:
// the layer gets both scales, the sum and the broadcast their markers, and
// the IR keeps every op.
// CHECK-LABEL: func.func @fused
// CHECK: snn.li %{{.*}} {k = 1.000000e-01 : f64, snn.fused_time_broadcast = 2.500000e-01 : f64, snn.fused_time_mean = 2.500000e-01 : f64, snn.name = "readout"}
// CHECK: snn.time_sum %{{.*}} {scale = 2.500000e-01 : f64, snn.in_neuron_forward}
// CHECK: snn.time_broadcast %{{.*}} {scale = 2.500000e-01 : f64, snn.in_neuron_backward}
// CHECK-NEXT: snn.neuron_bwd
// OFF-LABEL: func.func @fused
// OFF-NOT: snn.fused_time
// OFF-NOT: snn.in_neuron
// OFF: return
func.func @fused(%x: tensor<4x2x5xf32>, %labels: tensor<2xi32>) -> tensor<4x2x5xf32> {
  // expected-remark @+2 {{time mean computed in the forward scan of 'snn.li' "readout": the 0 KiB output is not read again}}
  // expected-remark @+1 {{time broadcast read in the backward scan of 'snn.li' "readout": the 0 KiB gradient is not written}}
  %o = snn.li %x {k = 0.1, snn.name = "readout"} : tensor<4x2x5xf32>
  %m = snn.time_sum %o {scale = 0.25} : tensor<4x2x5xf32> -> tensor<1x2x5xf32>
  %loss, %g, %correct = snn.loss_ce_membrane %m, %labels : tensor<1x2x5xf32>, tensor<2xi32> -> tensor<f32>
  %gb = snn.time_broadcast %g {scale = 0.25} : tensor<1x2x5xf32> -> tensor<4x2x5xf32>
  %gx = snn.neuron_bwd %gb, %o : tensor<4x2x5xf32>
  return %gx : tensor<4x2x5xf32>
}

// -----

// A spiking layer's rate: the mean of its spikes.
// CHECK-LABEL: func.func @rate
// CHECK: snn.lif %{{.*}}snn.fused_time_broadcast = 5.000000e-01 : f64, snn.fused_time_mean = 5.000000e-01 : f64
func.func @rate(%x: tensor<2x3x8xf32>, %labels: tensor<3xi32>) -> tensor<2x3x8xf32> {
  // expected-remark @+2 {{time mean computed in the forward scan of 'snn.lif' "out"}}
  // expected-remark @+1 {{time broadcast read in the backward scan of 'snn.lif' "out"}}
  %s = snn.lif %x {snn.name = "out"} : tensor<2x3x8xf32>
  %m = snn.time_sum %s {scale = 0.5} : tensor<2x3x8xf32> -> tensor<1x3x8xf32>
  %loss, %g, %correct = snn.loss_ce_rate %m, %labels : tensor<1x3x8xf32>, tensor<3xi32> -> tensor<f32>
  %gb = snn.time_broadcast %g {scale = 0.5} : tensor<1x3x8xf32> -> tensor<2x3x8xf32>
  %gx = snn.neuron_bwd %gb, %s : tensor<2x3x8xf32>
  return %gx : tensor<2x3x8xf32>
}

// -----

// Only the mean: the broadcast gradient is read by another op too.
// CHECK-LABEL: func.func @shared_broadcast
// CHECK: snn.li %{{.*}} {k = 1.000000e-01 : f64, snn.fused_time_mean = 2.500000e-01 : f64, snn.name = "readout"}
// CHECK: snn.time_broadcast %{{.*}} {scale = 2.500000e-01 : f64} :
func.func @shared_broadcast(%x: tensor<4x2x5xf32>, %labels: tensor<2xi32>) -> (tensor<4x2x5xf32>, tensor<4x2x5xf32>) {
  // expected-remark @+2 {{time mean computed in the forward scan of 'snn.li' "readout"}}
  // expected-remark @+1 {{time broadcast not read in the backward scan of 'snn.li' "readout": other ops read its output}}
  %o = snn.li %x {k = 0.1, snn.name = "readout"} : tensor<4x2x5xf32>
  %m = snn.time_sum %o {scale = 0.25} : tensor<4x2x5xf32> -> tensor<1x2x5xf32>
  %loss, %g, %correct = snn.loss_ce_membrane %m, %labels : tensor<1x2x5xf32>, tensor<2xi32> -> tensor<f32>
  %gb = snn.time_broadcast %g {scale = 0.25} : tensor<1x2x5xf32> -> tensor<4x2x5xf32>
  %gx = snn.neuron_bwd %gb, %o : tensor<4x2x5xf32>
  return %gx, %gb : tensor<4x2x5xf32>, tensor<4x2x5xf32>
}

// -----

// Left alone: inference (no backward: the forward that runs does not save
// H) and a sum of something that is not a neuron layer's output.
// CHECK-LABEL: func.func @inference
// CHECK-NOT: snn.fused_time
// CHECK-NOT: snn.in_neuron
// CHECK: return
func.func @inference(%x: tensor<4x2x5xf32>) -> (tensor<1x2x5xf32>, tensor<1x2x5xf32>) {
  %o = snn.li %x {k = 0.1, snn.name = "readout"} : tensor<4x2x5xf32>
  %m = snn.time_sum %o {scale = 0.25} : tensor<4x2x5xf32> -> tensor<1x2x5xf32>
  %n = snn.time_sum %x {scale = 0.25} : tensor<4x2x5xf32> -> tensor<1x2x5xf32>
  return %m, %n : tensor<1x2x5xf32>, tensor<1x2x5xf32>
}
