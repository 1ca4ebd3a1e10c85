// generateNeuronKernels through --snn-dump-neuron-kernels: PTX always, cubins
// for every chip when ptxas is there.
// REQUIRES: ptxas
// RUN: rm -rf %t && snn-opt %s --snn-dump-neuron-kernels="output-dir=%t/k chips=sm_80,sm_90" -o /dev/null
// RUN: ls %t/k | FileCheck %s --check-prefix=FILES
// RUN: FileCheck %s --check-prefix=JSON < %t/k/kernels.json
// RUN: FileCheck %s --check-prefix=PTX < %t/k/kernels.ptx
// RUN: %python -c "import sys; [sys.exit(p + ': not an ELF file') for p in sys.argv[1:] if open(p, 'rb').read(4) != b'\x7fELF']" %t/k/kernels.sm_80.cubin %t/k/kernels.sm_90.cubin

// PTX only: no ptxas needed.
// RUN: rm -rf %t/p && snn-opt %s --snn-dump-neuron-kernels="output-dir=%t/p emit-binary=0" -o /dev/null
// RUN: ls %t/p | FileCheck %s --check-prefix=PTXONLY

// FILES: kernels.json
// FILES-NEXT: kernels.ptx
// FILES-NEXT: kernels.sm_80.cubin
// FILES-NEXT: kernels.sm_90.cubin

// PTXONLY: kernels.json
// PTXONLY-NEXT: kernels.ptx
// PTXONLY-NOT: cubin

// JSON: "files": {
// JSON-DAG: "ptx": "kernels.ptx"
// JSON-DAG: "sm_80": "kernels.sm_80.cubin"
// JSON-DAG: "sm_90": "kernels.sm_90.cubin"
// JSON: "func": "train"
// JSON: "layers": [
// JSON: "block": 32,
// JSON-NEXT: "bwd": "snn_train_0_lif_bwd",
// JSON-NEXT: "features": 100,
// JSON-NEXT: "fwd": "snn_train_0_lif_fwd_h",
// JSON-NEXT: "fwd_infer": "snn_train_0_lif_fwd",
// JSON-NEXT: "fwd_record": "snn_train_0_lif_fwd_rec",
// JSON-NEXT: "grid": 25,
// JSON-NEXT: "h_dtype": "f32",
// JSON-NEXT: "index": 0,
// JSON-NEXT: "neurons": 3200,
// JSON-NEXT: "neurons_per_thread": 4,
// JSON-NEXT: "op": "snn.lif",
// JSON-NEXT: "recompute_chunk": 0,
// JSON-NEXT: "spike_word_bits": 0,
// JSON-NEXT: "tensor_params": 1,
// JSON-NEXT: "time_steps": 4
// JSON: "bwd": "snn_train_2_li_bwd",
// JSON: "index": 2,

// The PTX is for the oldest chip, so that the driver can JIT it for newer ones.
// PTX: .target sm_80
// PTX-DAG: .entry snn_train_0_lif_fwd_h(
// PTX-DAG: .entry snn_train_0_lif_fwd(
// PTX-DAG: .entry snn_train_0_lif_bwd(
// PTX-DAG: .entry snn_train_2_li_fwd_h(
// PTX-DAG: .entry snn_train_2_li_fwd(
// PTX-DAG: .entry snn_train_2_li_bwd(
func.func @train(%x: tensor<4x32x100xf32>, %w: tensor<1xf32>) -> (tensor<4x32x100xf32>, tensor<4x32x100xf32>) {
  %s = snn.lif %x {v_th = dense<0.75> : tensor<100xf32>} : tensor<4x32x100xf32>
  %p = snn.plif %s, %w : tensor<4x32x100xf32>, tensor<1xf32>
  %o = snn.li %p : tensor<4x32x100xf32>
  return %p, %o : tensor<4x32x100xf32>, tensor<4x32x100xf32>
}
