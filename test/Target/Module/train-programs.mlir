// @train_step: the ops before the loss op form train_forward, the loss and
// gradient ops backward, the optimizer ops update (the layout --snn-autodiff
// produces, written by hand here so that the emitter is tested alone).
// RUN: rm -rf %t && snn-opt %s --snn-compile="output=%t.snnmod target=cpu" -o /dev/null
// RUN: %python %S/Inputs/manifest_summary.py %t.snnmod | FileCheck %s

// CHECK: module time_steps=4 batch=2 input=0 output=[[OUT:[0-9]+]] labels=[[LABELS:[0-9]+]] loss=[[LOSS:[0-9]+]] correct=[[CORRECT:[0-9]+]]
// Parameters are shared by name between @forward and @train_step.
// CHECK: tensor [[W:1]] fc.weight [3, 6] param
// CHECK: tensor [[LABELS]] labels [2] label dtype="i32"
// CHECK: tensor [[M:[0-9]+]] opt:fc.weight:momentum [3, 6] optimizer_state init={"kind":"zeros"}
// Forward values that backward reads are saved.
// CHECK: tensor [[X1:[0-9]+]] %{{[0-9]+}} [4, 2, 3] activation
// CHECK: tensor [[S:[0-9]+]] %{{[0-9]+}} [4, 2, 3] saved
// CHECK: tensor [[H:[0-9]+]] lif.h [4, 2, 3] saved
// CHECK: tensor [[LOSS]] loss [] loss
// CHECK: tensor [[GS:[0-9]+]] grad:output [4, 2, 3] grad
// CHECK: tensor [[CORRECT]] correct [] metric
// CHECK: tensor [[GX:[0-9]+]] %{{[0-9]+}} [4, 2, 3] grad
// CHECK: tensor [[GW:[0-9]+]] grad:fc.weight [3, 6] grad grad_of=[[W]]

// CHECK: infer: linear in=[0, [[W]]] out=[{{[0-9]+}}] has_bias=false
// CHECK-NEXT: infer: neuron {{.*}}save_h=false
// CHECK-NEXT: train_forward: linear in=[0, [[W]]] out=[[[X1]]] has_bias=false
// CHECK-NEXT: train_forward: neuron in=[[[X1]]] out=[[[S]], [[H]]] {{.*}}model="lif" {{.*}}save_h=true
// The loss is a generated kernel too (args y, labels, loss, gy, correct).
// CHECK-NEXT: backward: kernel {{snn_op[0-9]+_loss_ce}} grid=1 block=256
// CHECK-NEXT: backward:   loss_ce_rate in=[[[S]], [[LABELS]]] out=[[[LOSS]], [[GS]], [[CORRECT]]]
// CHECK-NEXT: backward: neuron_bwd in=[[[GS]], [[H]]] out=[[[GX]]] c=0.5 {{.*}}model="lif"
// CHECK-NEXT: backward: linear_bwd in=[[[GX]], 0, [[W]]] out=[[[GW]]] has_bias=false need_gx=false
// The update is a generated kernel (one per group of parameters with equal
// hyperparameters) that computes the sgd op.
// CHECK-NEXT: update: kernel {{snn_op[0-9]+_sgd}} grid=1 block=256 run_values
// CHECK-NEXT: update:   sgd in=[[[W]], [[GW]], [[M]]] out=[[[W]], [[M]]] dampening=0 lr=0.1 momentum=0.9 nesterov=false weight_decay=0.0001
// CHECK-NEXT: optimizer {"dampening":0,"kind":"sgd","lr":0.1,"momentum":0.9,"nesterov":false,"weight_decay":0.0001}

func.func @forward(%x: tensor<4x2x6xf32>) -> tensor<4x2x3xf32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x6xf32>
  %h = snn.linear %x, %w : tensor<4x2x6xf32>, tensor<3x6xf32> -> tensor<4x2x3xf32>
  %s = snn.lif %h {snn.name = "lif"} : tensor<4x2x3xf32>
  return %s : tensor<4x2x3xf32>
}

func.func @train_step(%x: tensor<4x2x6xf32>, %labels: tensor<2xi32>) -> tensor<f32> {
  %w = snn.param "fc.weight" {init = #snn.init<kaiming_uniform>} : tensor<3x6xf32>
  %m = snn.param "opt:fc.weight:momentum" {trainable = false} : tensor<3x6xf32>
  %h = snn.linear %x, %w : tensor<4x2x6xf32>, tensor<3x6xf32> -> tensor<4x2x3xf32>
  %s = snn.lif %h {snn.name = "lif"} : tensor<4x2x3xf32>
  %loss, %gs, %correct = snn.loss_ce_rate %s, %labels : tensor<4x2x3xf32>, tensor<2xi32> -> tensor<f32>
  %gx = snn.neuron_bwd %gs, %s : tensor<4x2x3xf32>
  %gw = snn.linear_bwd %gx, %x, %w {has_bias = false, need_gx = false}
      : tensor<4x2x3xf32>, tensor<4x2x6xf32>, tensor<3x6xf32> -> tensor<3x6xf32>
  %w2, %m2 = snn.sgd %w, %gw, %m {lr = 0.1, momentum = 0.9, weight_decay = 1.0e-4} : tensor<3x6xf32>, tensor<3x6xf32>
  return %loss : tensor<f32>
}
