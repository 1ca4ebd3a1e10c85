// RUN: snn-opt %s --snn-autodiff="grad-threshold=0.3" | FileCheck %s
// RUN: snn-opt %s --snn-autodiff="grad-threshold=inf" | FileCheck %s --check-prefix=INF
// RUN: snn-opt %s --snn-autodiff | FileCheck %s --check-prefix=NONE
// RUN: not snn-opt %s --snn-autodiff="grad-threshold=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not snn-opt %s --snn-autodiff="grad-threshold=wide" 2>&1 | FileCheck %s --check-prefix=TEXT

// grad-threshold=B puts the band on every spiking layer of @train_step, in
// the multi-step and the step form, keeping each surrogate's kind, alpha and
// theta_grad (the default sigmoid where the layer names none); the LI readout
// has no surrogate and @forward (inference) is left as it is.

// CHECK-LABEL: func.func @forward
// CHECK: snn.lif %{{.*}} {k = 3.000000e-01 : f64, surrogate = #snn.surrogate<atan, alpha = 2.000000e+00 : f64, theta_grad = 1.000000e-01 : f64>}
// CHECK: snn.if %{{.*}} : tensor<5x3x7xf32>
// CHECK-LABEL: func.func @train_step
// CHECK: snn.lif %{{.*}} {k = 3.000000e-01 : f64, surrogate = #snn.surrogate<atan, alpha = 2.000000e+00 : f64, theta_grad = 1.000000e-01 : f64, grad_band = 3.000000e-01 : f64>}
// CHECK: snn.if %{{.*}} {surrogate = #snn.surrogate<sigmoid, alpha = 4.000000e+00 : f64, grad_band = 3.000000e-01 : f64>}
// CHECK: snn.li %{{.*}} {k = 4.000000e-01 : f64} :
// CHECK: snn.neuron_bwd
// INF-LABEL: func.func @train_step
// INF: grad_band = 0x7FF0000000000000 : f64
// NONE-NOT: grad_band
// ZERO: error: --snn-autodiff: grad-threshold must be a number > 0 (the half-width B of the band |H - v_th| <= B that keeps the surrogate gradient) or inf, got '0'
// TEXT: error: --snn-autodiff: grad-threshold must be a number > 0 {{.*}} got 'wide'
func.func @forward(%x: tensor<5x3x6xf32>) -> tensor<5x3x4xf32> {
  %w1 = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<7x6xf32>
  %h1 = snn.linear %x, %w1 : tensor<5x3x6xf32>, tensor<7x6xf32> -> tensor<5x3x7xf32>
  %s1 = snn.lif %h1 {k = 0.3, surrogate = #snn.surrogate<atan, alpha = 2.0, theta_grad = 0.1>} : tensor<5x3x7xf32>
  %s2 = snn.if %s1 : tensor<5x3x7xf32>
  %w2 = snn.param "fc2.weight" {init = #snn.init<kaiming_uniform>} : tensor<4x7xf32>
  %h2 = snn.linear %s2, %w2 : tensor<5x3x7xf32>, tensor<4x7xf32> -> tensor<5x3x4xf32>
  %o = snn.li %h2 {k = 0.4} : tensor<5x3x4xf32>
  return %o : tensor<5x3x4xf32>
}
