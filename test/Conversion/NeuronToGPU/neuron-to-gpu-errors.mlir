// RUN: snn-opt %s --snn-neuron-to-gpu --split-input-file --verify-diagnostics
// RUN: not snn-opt %s --snn-neuron-to-gpu=block-size=100 --split-input-file 2>&1 | FileCheck %s --check-prefix=BLOCK

// BLOCK: error: --snn-neuron-to-gpu: block-size=100 is not a multiple of 32 in [32, 1024]

// A kernel of that name exists already (the pass ran twice).
module attributes {gpu.container_module} {
  func.func @net(%x: tensor<4x2x8xf32>) -> tensor<4x2x8xf32> {
    // expected-error @below {{gpu.module @snn_kernels already has a kernel named 'snn_net_0_lif_fwd_h'; generate the neuron kernels once per module}}
    %s = snn.lif %x : tensor<4x2x8xf32>
    return %s : tensor<4x2x8xf32>
  }
  gpu.module @snn_kernels {
    gpu.func @snn_net_0_lif_fwd_h() kernel {
      gpu.return
    }
  }
}
