// RUN: snn-opt %s --snn-autodiff="optimizer=sgd grad-threshold=0.1" --snn-sparsify="min-features=1" --snn-fuse 2>&1 | FileCheck %s

// In training: the forward layers count their spikes for the event-driven
// linears, and the neuron backward of a banded layer counts its input
// gradient for the event-driven linear_bwd that reads it.
// CHECK-DAG: remark: spike count fused into 'snn.if' "in"
// CHECK-DAG: remark: gradient count fused into 'snn.lif' "lif1"
// CHECK-DAG: remark: gradient count fused into 'snn.lif' "lif2"
// CHECK-LABEL: func.func @train_step
// CHECK: snn.if %{{.*}}snn.fused_spike_count
// CHECK: snn.lif %{{.*}}snn.fused_grad_count, snn.fused_spike_count
// CHECK: snn.lif %{{.*}}snn.fused_grad_count
func.func @forward(%x: tensor<3x2x8xf32>) -> tensor<3x2x4xf32> {
  %s0 = snn.if %x {snn.name = "in"} : tensor<3x2x8xf32>
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<6x8xf32>
  %h1 = snn.linear %s0, %w1 : tensor<3x2x8xf32>, tensor<6x8xf32> -> tensor<3x2x6xf32>
  %s1 = snn.lif %h1 {snn.name = "lif1"} : tensor<3x2x6xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x6xf32>
  %h2 = snn.linear %s1, %w2 : tensor<3x2x6xf32>, tensor<4x6xf32> -> tensor<3x2x4xf32>
  %s2 = snn.lif %h2 {snn.name = "lif2"} : tensor<3x2x4xf32>
  return %s2 : tensor<3x2x4xf32>
}
