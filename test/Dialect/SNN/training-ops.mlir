// RUN: snn-opt %s | FileCheck %s
// RUN: snn-opt %s | snn-opt | FileCheck %s
// RUN: snn-opt %s -mlir-print-op-generic | snn-opt | FileCheck %s

// Every training op round-trips in its custom form.

// CHECK-LABEL: func.func @ops
func.func @ops(%x: tensor<2x3x1x4x4xf32>, %labels: tensor<3xi32>) -> tensor<f32> {
  %w = snn.param "conv.weight" : tensor<2x1x3x3xf32>
  %c = snn.conv2d %x, %w {padding = array<i64: 1, 1>} : tensor<2x3x1x4x4xf32>, tensor<2x1x3x3xf32> -> tensor<2x3x2x4x4xf32>
  %g = snn.param "bn.weight" : tensor<2xf32>
  %b = snn.param "bn.bias" : tensor<2xf32>
  %n = snn.batch_norm %c, %g, %b, %g, %g : tensor<2x3x2x4x4xf32>, tensor<2xf32>
  %pw = snn.param "plif.w" : tensor<1xf32>
  %s = snn.plif %n, %pw : tensor<2x3x2x4x4xf32>, tensor<1xf32>
  %m = snn.max_pool2d %s {kernel_size = array<i64: 2, 2>} : tensor<2x3x2x4x4xf32> -> tensor<2x3x2x2x2xf32>
  %d = snn.dropout %m {p = 0.1} : tensor<2x3x2x2x2xf32>
  %f = snn.flatten %d : tensor<2x3x2x2x2xf32> -> tensor<2x3x8xf32>
  %fw = snn.param "fc.weight" : tensor<4x8xf32>
  %fb = snn.param "fc.bias" : tensor<4xf32>
  %h = snn.linear %f, %fw, %fb : tensor<2x3x8xf32>, tensor<4x8xf32>, tensor<4xf32> -> tensor<2x3x4xf32>
  %o = snn.li %h : tensor<2x3x4xf32>
  // CHECK: snn.loss_ce_membrane %{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<3xi32> -> tensor<f32>
  %loss, %gy, %correct = snn.loss_ce_membrane %o, %labels : tensor<2x3x4xf32>, tensor<3xi32> -> tensor<f32>
  // CHECK: snn.loss_ce_rate
  %l2, %g2, %c2 = snn.loss_ce_rate %o, %labels : tensor<2x3x4xf32>, tensor<3xi32> -> tensor<f32>
  // CHECK: snn.loss_mse_rate
  %l3, %g3, %c3 = snn.loss_mse_rate %o, %labels : tensor<2x3x4xf32>, tensor<3xi32> -> tensor<f32>
  // CHECK: snn.loss_ce_membrane_max %{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<3xi32> -> tensor<f32>
  %l4, %g4, %c4 = snn.loss_ce_membrane_max %o, %labels : tensor<2x3x4xf32>, tensor<3xi32> -> tensor<f32>
  // CHECK: snn.neuron_bwd %{{.*}}, %{{.*}} : tensor<2x3x4xf32>
  %gh = snn.neuron_bwd %gy, %o : tensor<2x3x4xf32>
  // CHECK: snn.linear_bwd %{{.*}} {has_bias = true, need_gx = true} : tensor<2x3x4xf32>, tensor<2x3x8xf32>, tensor<4x8xf32> -> tensor<2x3x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  %gf, %gfw, %gfb = snn.linear_bwd %gh, %f, %fw {has_bias = true, need_gx = true}
      : tensor<2x3x4xf32>, tensor<2x3x8xf32>, tensor<4x8xf32> -> tensor<2x3x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  // CHECK: snn.reshape %{{.*}} : tensor<2x3x8xf32> -> tensor<2x3x2x2x2xf32>
  %gd = snn.reshape %gf : tensor<2x3x8xf32> -> tensor<2x3x2x2x2xf32>
  // CHECK: snn.dropout_bwd
  %gm = snn.dropout_bwd %gd, %d : tensor<2x3x2x2x2xf32>
  // CHECK: snn.max_pool2d_bwd %{{.*}}, %{{.*}} {kernel_size = array<i64: 2, 2>} : tensor<2x3x2x2x2xf32> -> tensor<2x3x2x4x4xf32>
  %gs = snn.max_pool2d_bwd %gm, %s {kernel_size = array<i64: 2, 2>} : tensor<2x3x2x2x2xf32> -> tensor<2x3x2x4x4xf32>
  // CHECK: snn.avg_pool2d_bwd
  %ga = snn.avg_pool2d_bwd %gm {kernel_size = array<i64: 2, 2>} : tensor<2x3x2x2x2xf32> -> tensor<2x3x2x4x4xf32>
  // CHECK: snn.sum_pool2d_bwd
  %gsum = snn.sum_pool2d_bwd %gm {kernel_size = array<i64: 2, 2>} : tensor<2x3x2x2x2xf32> -> tensor<2x3x2x4x4xf32>
  // CHECK: snn.accumulate
  %gacc = snn.accumulate %gs, %ga : tensor<2x3x2x4x4xf32>
  // CHECK: snn.neuron_bwd %{{.*}}, %{{.*}} : tensor<2x3x2x4x4xf32>, tensor<1xf32>
  %gn, %gpw = snn.neuron_bwd %gacc, %s : tensor<2x3x2x4x4xf32>, tensor<1xf32>
  // CHECK: snn.batch_norm_bwd %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3x2x4x4xf32>, tensor<2xf32>
  %gc, %gg, %gb = snn.batch_norm_bwd %gn, %c, %g, %n : tensor<2x3x2x4x4xf32>, tensor<2xf32>
  // CHECK: snn.conv2d_bwd {{.*}}has_bias = false, need_gx = false, padding = array<i64: 1, 1>
  %gw = snn.conv2d_bwd %gc, %x, %w {has_bias = false, need_gx = false, padding = array<i64: 1, 1>}
      : tensor<2x3x2x4x4xf32>, tensor<2x3x1x4x4xf32>, tensor<2x1x3x3xf32> -> tensor<2x1x3x3xf32>
  %mom = snn.param "opt:conv.weight:momentum" {trainable = false} : tensor<2x1x3x3xf32>
  // CHECK: snn.sgd %{{.*}}, %{{.*}}, %{{.*}} {lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = true} : tensor<2x1x3x3xf32>, tensor<2x1x3x3xf32>
  %w2, %mom2 = snn.sgd %w, %gw, %mom {lr = 0.1, momentum = 0.9, nesterov = true} : tensor<2x1x3x3xf32>, tensor<2x1x3x3xf32>
  // CHECK: snn.sgd %{{.*}}, %{{.*}} {lr = 1.000000e-01 : f64} : tensor<1xf32>
  %pw2 = snn.sgd %pw, %gpw {lr = 0.1} : tensor<1xf32>
  %am = snn.param "opt:fc.weight:m" {trainable = false} : tensor<4x8xf32>
  %av = snn.param "opt:fc.weight:v" {trainable = false} : tensor<4x8xf32>
  // CHECK: snn.adam %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {decoupled = true, lr = 1.000000e-03 : f64} : tensor<4x8xf32>
  %fw2, %am2, %av2 = snn.adam %fw, %gfw, %am, %av {lr = 0.001, decoupled = true} : tensor<4x8xf32>
  return %loss : tensor<f32>
}

// The edges of an unrolled recurrent loop and the step backwards.
// CHECK-LABEL: func.func @unrolled_steps
func.func @unrolled_steps(%x: tensor<2x3x4xf32>, %v: tensor<3x4xf32>, %g: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  // CHECK: snn.time_slice %{{.*}} {index = 1 : i64} : tensor<2x3x4xf32> -> tensor<3x4xf32>
  %x1 = snn.time_slice %x {index = 1} : tensor<2x3x4xf32> -> tensor<3x4xf32>
  %s, %vn = snn.lif_step %x1, %v : tensor<3x4xf32>
  // CHECK: snn.neuron_step_bwd %{{.*}}, %{{.*}}, %{{.*}} : tensor<3x4xf32>
  %gx, %gv = snn.neuron_step_bwd %g, %g, %s : tensor<3x4xf32>
  %c, %ci, %cv = snn.cuba_lif_step %x1, %v, %v : tensor<3x4xf32>
  // CHECK: snn.cuba_lif_step_bwd %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<3x4xf32>
  %hx, %hi, %hv = snn.cuba_lif_step_bwd %g, %g, %g, %c : tensor<3x4xf32>
  %w = snn.param "plif.w" : tensor<4xf32>
  %p, %pv = snn.plif_step %x1, %v, %w : tensor<3x4xf32>, tensor<4xf32>
  // CHECK: snn.plif_step_bwd %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<3x4xf32>, tensor<4xf32>
  %px, %pgv, %pgw = snn.plif_step_bwd %g, %g, %p, %v, %w : tensor<3x4xf32>, tensor<4xf32>
  // CHECK: snn.time_stack %{{.*}}, %{{.*}} : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<2x3x4xf32>
  %y = snn.time_stack %gx, %hx : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}
