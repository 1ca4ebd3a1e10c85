// RUN: not snn-opt %s --snn-dump-neuron-kernels="output-dir=%t chips=gfx90a emit-binary=0" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not snn-opt %s --snn-dump-neuron-kernels 2>&1 | FileCheck %s --check-prefix=DIR
// RUN: not snn-opt %s --snn-dump-neuron-kernels="output-dir=%t func=nope" 2>&1 | FileCheck %s --check-prefix=FUNC

// CHIP: error: 'gfx90a' is not a CUDA architecture; write it as sm_XY, e.g. sm_90
// DIR: error: --snn-dump-neuron-kernels needs output-dir=DIR
// FUNC: error: no function named 'nope'
func.func @net(%x: tensor<4x2x8xf32>) -> tensor<4x2x8xf32> {
  %s = snn.lif %x : tensor<4x2x8xf32>
  return %s : tensor<4x2x8xf32>
}
