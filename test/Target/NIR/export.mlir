// Export of the multi-step form, with weights from the IR or a checkpoint.
// REQUIRES: python-h5py, snn-translate

// RUN: snn-translate --export-nir %s --nir-dt=1e-3 -o %t.nir
// RUN: %python %S/Inputs/dump_nir.py %t.nir | FileCheck %s
// CHECK: node fc type=Affine bias=[0.5, -0.5] weight=[1, 2, 3, 4, 5, 6]
// k = 0.25, c = 0.5 at dt = 1 ms: tau = dt/k = 4 ms, r = c/k = 2.
// CHECK: node lif1 type=LIF r=[2, 2] tau=[0.004, 0.004] v_leak=[0, 0] v_reset=[0, 0] v_threshold=[1, 1]
// CHECK: node readout type=LI r=[1, 2] tau=[0.002, 0.001] v_leak=[0, 0]
// CHECK: edge fc -> lif1
// CHECK: edge input -> fc
// CHECK: edge lif1 -> readout
// CHECK: edge readout -> output

// A checkpoint replaces the values (F32 and F64 tensors).
// RUN: %python %S/Inputs/make_safetensors.py %t.ckpt fc.weight=2x3:1.0 fc.bias=2:-1:f64
// RUN: snn-translate --export-nir %s --export-nir-weights=%t.ckpt -o %t.ckpt.nir
// RUN: %python %S/Inputs/dump_nir.py %t.ckpt.nir | FileCheck %s --check-prefix=CKPT
// CKPT: node fc type=Affine bias=[-1, -0.99] weight=[1, 1.01, 1.02, 1.03, 1.04, 1.05]

// RUN: %python %S/Inputs/make_safetensors.py %t.bad.ckpt fc.weight=3x2:1.0
// RUN: rm -f %t.bad.nir
// RUN: not snn-translate --export-nir %s --export-nir-weights=%t.bad.ckpt -o %t.bad.nir 2>&1 | FileCheck %s --check-prefix=BADCKPT
// RUN: test ! -e %t.bad.nir
// BADCKPT: error: 'snn.param' op 'fc.weight' has shape 'tensor<2x3xf32>' but the checkpoint tensor of that name does not match

// RUN: echo garbage > %t.junk.ckpt
// RUN: not snn-translate --export-nir %s --export-nir-weights=%t.junk.ckpt -o %t.junk.nir 2>&1 | FileCheck %s --check-prefix=JUNK
// JUNK: error: checkpoint '{{.*}}junk.ckpt': not a safetensors file or truncated

func.func @forward(%x: tensor<4x2x3xf32>) -> tensor<4x2x2xf32> {
  %w = snn.param "fc.weight" {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : tensor<2x3xf32>
  %b = snn.param "fc.bias" {value = dense<[0.5, -0.5]> : tensor<2xf32>} : tensor<2xf32>
  %h = snn.linear %x, %w, %b : tensor<4x2x3xf32>, tensor<2x3xf32>, tensor<2xf32> -> tensor<4x2x2xf32>
  %s = snn.lif %h {k = 0.25, c = 0.5} : tensor<4x2x2xf32> loc("lif1")
  %o = snn.li %s {k = dense<[0.5, 1.0]> : tensor<2xf32>, c = dense<[0.5, 2.0]> : tensor<2xf32>} : tensor<4x2x2xf32> loc("readout")
  return %o : tensor<4x2x2xf32>
}
