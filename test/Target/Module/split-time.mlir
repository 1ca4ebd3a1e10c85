// A module split in time (--snn-split-time parts=2 over T = 5: rank 0 runs
// steps [0, 2), rank 1 steps [2, 5)) compiles into one program set per
// local length; each rank takes its steps of the whole input (time_range),
// chains the neuron state through recv/send, sums the loss's time mean and
// the weight gradients over the ranks (all_reduce_sum, at the end of the
// backward) and gathers the output of all steps (gather_time).
// RUN: rm -rf %t && snn-opt %s --snn-autodiff="optimizer=sgd lr=0.1 momentum=0.9" --snn-split-time="parts=2" --snn-compile="output=%t.snnmod target=cpu" -o /dev/null
// RUN: %python %S/Inputs/manifest_summary.py %t.snnmod | FileCheck %s

// CHECK: split_time parts=2 steps=5 ranks=[0, 1]
// CHECK-LABEL: program_set 0 ranks=[0] local_steps=2
// CHECK: module time_steps=5 batch=3 input=0 output=[[OUT:[0-9]+]]
// CHECK: tensor 0 input [5, 3, 6] input
// CHECK: tensor 1 input.local [2, 3, 6] saved
// CHECK: tensor [[OUT]] output [5, 3, 4] activation
// CHECK: infer: time_range in=[0] out=[1]
// CHECK-NEXT: infer: linear in=[1, {{.*}}] out=[[[X1:[0-9]+]]]
// CHECK-NEXT: infer: recv in=[[[V0:[0-9]+]]] out=[[[V:[0-9]+]]] peer="prev" tag=0
// CHECK-NEXT: infer: neuron in=[[[X1]], [[V]]] out=[[[S1:[0-9]+]], [[VT:[0-9]+]]] {{.*}}chained_states=1 {{.*}}kernel={{.*}}model="lif"
// CHECK-NEXT: infer: send in=[[[VT]]] out=[] peer="next" tag=0
// CHECK: infer: recv {{.*}} peer="prev" tag=1
// CHECK: infer: recv {{.*}} peer="prev" tag=2
// CHECK-NEXT: infer: neuron {{.*}}chained_states=1 {{.*}}model="li"
// CHECK-NEXT: infer: send {{.*}} peer="next" tag=2
// CHECK-NEXT: infer: gather_time in=[{{[0-9]+}}] out=[[[OUT]]]
// CHECK: train_forward: time_range in=[0] out=[1]
// CHECK: train_forward: neuron {{.*}}chained_states=1 {{.*}}save_h=true
// The loss's time mean over the rank's steps and its gradient are generated
// kernels.
// CHECK: train_forward: kernel snn_op{{[0-9]+}}_time_sum grid=1 block=256
// CHECK-NEXT: train_forward: time_sum in=[{{[0-9]+}}] out=[[[PART:[0-9]+]]] scale=0.2
// CHECK-NEXT: train_forward: all_reduce_sum in=[[[PART]]] out=[[[MEAN:[0-9]+]]]
// CHECK-NEXT: backward: kernel snn_op{{[0-9]+}}_loss_ce grid=1
// CHECK-NEXT: backward: loss_ce_membrane in=[[[MEAN]], {{[0-9]+}}] out=[{{[0-9]+}}, [[GM:[0-9]+]], {{[0-9]+}}]
// CHECK-NEXT: backward: kernel snn_op{{[0-9]+}}_time_broadcast grid=1 block=256
// CHECK-NEXT: backward: time_broadcast in=[[[GM]]] out=[{{[0-9]+}}] scale=0.2
// CHECK-NEXT: backward: recv {{.*}} peer="next" tag=2
// CHECK-NEXT: backward: neuron_bwd {{.*}}chained_states=1
// CHECK-NEXT: backward: send {{.*}} peer="prev" tag=2
// CHECK: backward: all_reduce_sum in=[{{[0-9]+}}] out=[[[GW1:[0-9]+]]]
// CHECK: update: kernel snn_op{{[0-9]+}}_sgd
// CHECK-NEXT: update:   sgd in=[{{[0-9]+}}, [[GW1]], {{[0-9]+}}]

// CHECK-LABEL: program_set 1 ranks=[1] local_steps=3
// CHECK: tensor 1 input.local [3, 3, 6] saved
// CHECK: infer: time_range in=[0] out=[1]

func.func @forward(%x: tensor<5x3x6xf32>) -> tensor<5x3x4xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x6xf32>
  %b1 = snn.param "fc1.bias" {init = #snn.init<uniform>, init_scale = 0.25} : tensor<8xf32>
  %h1 = snn.linear %x, %w1, %b1
      : tensor<5x3x6xf32>, tensor<8x6xf32>, tensor<8xf32> -> tensor<5x3x8xf32>
  %s1 = snn.lif %h1 {k = 0.5, c = 0.5, snn.name = "lif1"} : tensor<5x3x8xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<8x8xf32>
  %h2 = snn.linear %s1, %w2 : tensor<5x3x8xf32>, tensor<8x8xf32> -> tensor<5x3x8xf32>
  %s2 = snn.lif %h2 {k = 0.5, c = 0.5, snn.name = "lif2"} : tensor<5x3x8xf32>
  %w3 = snn.param "fc3.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x8xf32>
  %h3 = snn.linear %s2, %w3 : tensor<5x3x8xf32>, tensor<4x8xf32> -> tensor<5x3x4xf32>
  %out = snn.li %h3 {k = 0.5, c = 0.5, snn.name = "readout"} : tensor<5x3x4xf32>
  return %out : tensor<5x3x4xf32>
}
