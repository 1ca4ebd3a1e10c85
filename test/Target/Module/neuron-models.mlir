// Every neuron model with its defaults written out, per-neuron parameters as
// constant tensors, and the other forward ops' attributes.
// RUN: rm -rf %t && snn-opt %s --snn-compile="output=%t.snnmod target=cpu" -o /dev/null
// RUN: %python %S/Inputs/manifest_summary.py %t.snnmod | FileCheck %s

// CHECK: module time_steps=4 batch=2 input=0 output=[[OUT:[0-9]+]]
// Per-neuron values become constants in init.safetensors; a splat is a number.
// CHECK: tensor [[KT:[0-9]+]] soft.k [3] constant init={"kind":"file"}
// CHECK: tensor [[VTH:[0-9]+]] soft.v_th [3] constant init={"kind":"file"}
// CHECK: tensor [[VR:[0-9]+]] hard.v_reset [3] constant init={"kind":"file"}
// CHECK: tensor [[W:[0-9]+]] plif.w [1] param init={"kind":"constant","value":2}
// Eval-mode dropout is an alias of its input.
// CHECK: tensor {{[0-9]+}} %{{[0-9]+}} [4, 2, 3] activation alias_of=[[DROPIN:[0-9]+]]

// li is a readout, not a spike layer.
// CHECK: spike_layer soft
// CHECK-NEXT: spike_layer hard
// CHECK-NEXT: spike_layer if0
// CHECK-NEXT: spike_layer plif0
// CHECK-NEXT: spike_layer cuba_lif0
// CHECK-NOT: spike_layer

// Soft reset: v_init defaults to 0; the per-neuron k and v_th are inputs in
// the order of the kernel ABI (k, c, v_leak, v_th, v_reset, v_init).
// CHECK: infer: neuron in=[0, [[KT]], [[VTH]]] out=[[[S0:[0-9]+]]] c=1 detach_reset=true features=3 k={"tensor":[[KT]]} kernel={{[^ ]+}} layer="soft" model="lif" reset="soft" save_h=false strict=true surrogate={"alpha":10,"kind":"fast_sigmoid","theta_grad":0.5} v_init=0 v_leak=-0.1 v_reset=0 v_th={"tensor":[[VTH]]}
// Hard reset: v_init is v_reset, the same tensor and no extra input.
// CHECK-NEXT: infer: neuron in=[[[S0]], [[VR]]] out=[[[S1:[0-9]+]]] c=0.5 detach_reset=false features=3 k=0.25 kernel={{[^ ]+}} layer="hard" model="lif" reset="hard" save_h=false strict=false surrogate={"alpha":4,"kind":"sigmoid"} v_init={"tensor":[[VR]]} v_leak=0 v_reset={"tensor":[[VR]]} v_th=1
// IF: k = 0 and v_leak = 0 written out.
// CHECK-NEXT: infer: neuron in=[[[S1]]] out=[[[S2:[0-9]+]]] c=2 {{.*}}k=0 kernel={{[^ ]+}} layer="if0" model="if" {{.*}}surrogate={"alpha":2,"kind":"atan"} v_init=0 v_leak=0 v_reset=0 v_th=1
// CHECK-NEXT: infer: neuron in=[[[S2]], [[W]]] out=[[[S3:[0-9]+]]] decay_input=false detach_reset=false features=3 kernel={{[^ ]+}} layer="plif0" model="plif" plif_w={"tensor":[[W]]} reset="hard" {{.*}}v_leak=0
// CHECK-NEXT: infer: neuron in=[[[S3]]] out=[[[S4:[0-9]+]]] c=0.5 c_syn=2 {{.*}}i_init=0.1 k=0.5 k_syn=0.2 kernel={{[^ ]+}} layer="cuba_lif0" model="cuba_lif" {{.*}}v_init=0.3
// CHECK-NEXT: infer: kernel snn_op0_scale grid=1 block=256
// CHECK-NEXT: infer:   scale in=[[[S4]]] out=[[[DROPIN]]] scale=0.5
// CHECK-NEXT: infer: neuron in=[{{[0-9]+}}] out=[[[OUT]]] c=0.5 features=3 k=0.1 kernel={{[^ ]+}} layer="li0" model="li" save_h=false v_init=0 v_leak=0
// CHECK-NOT: infer:

func.func @forward(%x: tensor<4x2x3xf32>) -> tensor<4x2x3xf32> {
  %0 = snn.lif %x {k = dense<[0.1, 0.2, 0.3]> : tensor<3xf32>, c = 1.0, v_leak = -0.1,
                   v_th = dense<[1.0, 1.5, 2.0]> : tensor<3xf32>,
                   reset = #snn.reset<soft>, strict, detach_reset,
                   surrogate = #snn.surrogate<fast_sigmoid, alpha = 10.0, theta_grad = 0.5>,
                   snn.name = "soft"} : tensor<4x2x3xf32>
  %1 = snn.lif %0 {k = 0.25, v_reset = dense<[0.0, -0.5, -1.0]> : tensor<3xf32>,
                   v_leak = dense<0.0> : tensor<3xf32>, snn.name = "hard"} : tensor<4x2x3xf32>
  %2 = snn.if %1 {c = 2.0, surrogate = #snn.surrogate<atan, alpha = 2.0>} : tensor<4x2x3xf32>
  %w = snn.param "plif.w" {init = #snn.init<constant>, init_scale = 2.0} : tensor<1xf32>
  %3 = snn.plif %2, %w {decay_input = false} : tensor<4x2x3xf32>, tensor<1xf32>
  %4 = snn.cuba_lif %3 {k_syn = 0.2, c_syn = 2.0, i_init = 0.1, v_init = 0.3} : tensor<4x2x3xf32>
  %5 = snn.scale %4 {scale = 0.5} : tensor<4x2x3xf32>
  %6 = snn.dropout %5 {p = 0.2} : tensor<4x2x3xf32>
  %7 = snn.li %6 {k = 0.1} : tensor<4x2x3xf32>
  return %7 : tensor<4x2x3xf32>
}
