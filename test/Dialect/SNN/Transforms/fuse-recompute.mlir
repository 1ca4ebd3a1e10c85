// RUN: snn-opt %s --snn-fuse --split-input-file --verify-diagnostics | FileCheck %s
// RUN: snn-opt %s --snn-fuse="recompute=false" --split-input-file 2>/dev/null | FileCheck %s --check-prefix=OFF
// OFF-NOT: recompute =

// In training a lif or if layer fused with its batch norm saves no H: its
// backward recomputes H from the batch norm's input, in chunks of
// min(T, 8) steps (`recompute` in snn.fused_batch_norm).
// CHECK-LABEL: func.func @trained
// CHECK: snn.lif %{{.*}} {snn.fused_batch_norm = {backward = true, eps = 1.000000e-05 : f64, recompute = 4 : i64, spatial_rank = 2 : i64}}
// CHECK: snn.if %{{.*}} {snn.fused_batch_norm = {backward = true, eps = 1.000000e-05 : f64, recompute = 8 : i64, spatial_rank = 2 : i64}}
func.func @trained(%x: tensor<4x2x3x8x8xf32>, %x12: tensor<12x2x3x8x8xf32>, %g: tensor<3xf32>, %gs: tensor<4x2x3x8x8xf32>, %gs12: tensor<12x2x3x8x8xf32>) -> (tensor<4x2x3x8x8xf32>, tensor<12x2x3x8x8xf32>) {
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+3 {{fused with the preceding snn.batch_norm}}
  // expected-remark @+2 {{batch norm backward fused}}
  // expected-remark @+1 {{recomputes H from the batch norm's input in its backward (chunks of 4 steps): H is not saved}}
  %s = snn.lif %y : tensor<4x2x3x8x8xf32>
  %gy = snn.neuron_bwd %gs, %s : tensor<4x2x3x8x8xf32>
  %gx, %gg, %gb = snn.batch_norm_bwd %gy, %x, %g, %y : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  %y12 = snn.batch_norm %x12, %g, %g, %g, %g : tensor<12x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+3 {{fused with the preceding snn.batch_norm}}
  // expected-remark @+2 {{batch norm backward fused}}
  // expected-remark @+1 {{recomputes H from the batch norm's input in its backward (chunks of 8 steps): H is not saved}}
  %s12 = snn.if %y12 : tensor<12x2x3x8x8xf32>
  %gy12 = snn.neuron_bwd %gs12, %s12 : tensor<12x2x3x8x8xf32>
  %gx12, %gg12, %gb12 = snn.batch_norm_bwd %gy12, %x12, %g, %y12 : tensor<12x2x3x8x8xf32>, tensor<3xf32>
  return %gx, %gx12 : tensor<4x2x3x8x8xf32>, tensor<12x2x3x8x8xf32>
}

// -----

// A cuba_lif layer keeps its saved H (its synaptic current would need
// checkpoints too), with a remark; inference has no backward and no remark.
// CHECK-LABEL: func.func @cuba
// CHECK: snn.cuba_lif %{{.*}} {snn.fused_batch_norm = {backward = true, eps = 1.000000e-05 : f64, spatial_rank = 2 : i64}}
// CHECK: snn.lif %{{.*}} {snn.fused_batch_norm = {eps = 1.000000e-05 : f64, spatial_rank = 2 : i64}}
func.func @cuba(%x: tensor<4x2x3x8x8xf32>, %g: tensor<3xf32>, %gs: tensor<4x2x3x8x8xf32>) -> (tensor<4x2x3x8x8xf32>, tensor<4x2x3x8x8xf32>) {
  %y = snn.batch_norm %x, %g, %g, %g, %g : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+3 {{fused with the preceding snn.batch_norm}}
  // expected-remark @+2 {{batch norm backward fused}}
  // expected-remark @+1 {{saves H for its backward: only lif and if layers recompute H (a cuba_lif layer would need its current checkpointed too)}}
  %c = snn.cuba_lif %y : tensor<4x2x3x8x8xf32>
  %gy = snn.neuron_bwd %gs, %c : tensor<4x2x3x8x8xf32>
  %gx, %gg, %gb = snn.batch_norm_bwd %gy, %x, %g, %y : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  %y2 = snn.batch_norm %x, %g, %g, %g, %g : tensor<4x2x3x8x8xf32>, tensor<3xf32>
  // expected-remark @+1 {{fused with the preceding snn.batch_norm}}
  %s = snn.lif %y2 : tensor<4x2x3x8x8xf32>
  return %gx, %s : tensor<4x2x3x8x8xf32>, tensor<4x2x3x8x8xf32>
}
