//===- Passes.td - snn conversion passes -------------------*- tablegen -*-===//

#ifndef SNN_CONVERSION_PASSES_TD
#define SNN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// NeuronToGPU
//===----------------------------------------------------------------------===//

def SNNNeuronToGPU : Pass<"snn-neuron-to-gpu", "ModuleOp"> {
  let summary = "generate GPU kernels for the multi-step neuron layers";
  let description = [{
    Adds a `gpu.module @snn_kernels` with one forward and one backward
    `gpu.func` kernel for every multi-step `snn.lif`, `snn.if`, `snn.li` and
    `snn.cuba_lif` op of the module's functions (`snn.plif` runs on the
    runtime's built-in kernel: its weight gradient is a reduction). The kernels
    follow the ABI of docs/artifact-format.md ("Compiler-generated neuron
    kernels"): one memref argument per tensor, which becomes one `float*` under
    `convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}`.

    A thread owns 4 consecutive neurons (16-byte vector loads and stores) when
    the number of neurons `N = B * features` is a multiple of 4, else one
    neuron; it keeps the state in registers and scans the T steps in one loop.
    T, N and the feature count are compile-time constants. The IR, the source
    ops and the functions are left unchanged: the pass only adds the kernels.

    Lower the result with `--nvvm-attach-target --convert-gpu-to-nvvm
    --reconcile-unrealized-casts --gpu-module-to-binary`.
  }];
  let options = [
    Option<"saveH", "save-h", "bool", /*default=*/"true",
           "Forward kernels save the charged membrane H for the backward pass "
           "(training); false gives inference kernels without that output">,
    Option<"backward", "backward", "bool", /*default=*/"true",
           "Also generate the backward (BPTT) kernels">,
    Option<"hDType", "h-dtype", "std::string", /*default=*/"\"f32\"",
           "Element type of the saved H: f32, or bf16 (rounded to nearest "
           "even; the backward reads the rounded value)">,
    Option<"spikeBits", "spike-bits", "bool", /*default=*/"false",
           "Forward kernels write spikes as bits packed over time "
           "(docs/artifact-format.md) instead of f32 0/1">,
    Option<"recomputeChunk", "recompute-chunk", "int64_t", /*default=*/"0",
           "Recompute H in the backward from the input and a membrane "
           "checkpoint every this many steps (lif, if, li) instead of saving "
           "H; 0 saves H">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block (a multiple of 32, at most 1024)">,
  ];
  let statistics = [
    Statistic<"numKernels", "num-kernels", "Number of kernels generated">,
    Statistic<"numSkipped", "num-skipped",
              "Neuron ops left to the runtime's built-in kernels">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def SNNNeuronToHost : Pass<"snn-neuron-to-host", "ModuleOp"> {
  let summary = "generate host functions with the bodies of the neuron kernels";
  let description = [{
    Adds, for every neuron op that `--snn-neuron-to-gpu` handles, a public
    `func.func` named like its GPU kernel whose body loops over the kernel's
    threads and runs exactly the per-thread code of the kernel. Lowered with
    the usual CPU pipeline and run with `mlir-runner`, it checks the kernel
    arithmetic on a machine without a GPU. Arguments and their order are the
    kernel's.
  }];
  let options = [
    Option<"saveH", "save-h", "bool", /*default=*/"true",
           "Forward functions save the charged membrane H">,
    Option<"backward", "backward", "bool", /*default=*/"true",
           "Also generate the backward functions">,
    Option<"hDType", "h-dtype", "std::string", /*default=*/"\"f32\"",
           "Element type of the saved H: f32, or bf16 (rounded to nearest "
           "even; the backward reads the rounded value)">,
    Option<"spikeBits", "spike-bits", "bool", /*default=*/"false",
           "Forward kernels write spikes as bits packed over time "
           "(docs/artifact-format.md) instead of f32 0/1">,
    Option<"recomputeChunk", "recompute-chunk", "int64_t", /*default=*/"0",
           "Recompute H in the backward from the input and a membrane "
           "checkpoint every this many steps (lif, if, li) instead of saving "
           "H; 0 saves H">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def SNNDumpNeuronKernels : Pass<"snn-dump-neuron-kernels", "ModuleOp"> {
  let summary = "compile the neuron kernels and write them to a directory";
  let description = [{
    Runs `generateNeuronKernels` (the code path of the module compiler) on
    every function and writes what a compiled module ships:
    `kernels.<chip>.cubin` (with `emit-binary`), `kernels.ptx`, and
    `kernels.json`, which lists each layer's kernels with their launch
    configuration and sizes. The IR is left unchanged. Meant for checking and
    timing the kernels on a GPU without the rest of the runtime; a module with
    several functions must be dumped one function at a time (`func` option).
  }];
  let options = [
    Option<"outputDir", "output-dir", "std::string", /*default=*/"",
           "Directory to write the kernels to (created if missing)">,
    ListOption<"chips", "chips", "std::string",
               "CUDA architectures of the cubins (default: sm_80,sm_90)">,
    Option<"emitBinary", "emit-binary", "bool", /*default=*/"true",
           "Write cubins (needs ptxas); PTX only when false">,
    Option<"funcName", "func", "std::string", /*default=*/"",
           "The function whose kernels to write (default: the only one with "
           "neuron kernels)">,
    Option<"hDType", "h-dtype", "std::string", /*default=*/"\"f32\"",
           "Element type of the saved H: f32, or bf16 (rounded to nearest "
           "even; the backward reads the rounded value)">,
    Option<"spikeBits", "spike-bits", "bool", /*default=*/"false",
           "Forward kernels write spikes as bits packed over time "
           "(docs/artifact-format.md) instead of f32 0/1">,
    Option<"recomputeChunk", "recompute-chunk", "int64_t", /*default=*/"0",
           "Recompute H in the backward from the input and a membrane "
           "checkpoint every this many steps (lif, if, li) instead of saving "
           "H; 0 saves H">,
  ];
}

def SNNOpKernels : Pass<"snn-op-kernels", "ModuleOp"> {
  let summary = "generate the kernels of the elementwise, pooling, batch norm, loss and optimizer ops";
  let description = [{
    Adds the kernels that `--snn-compile` generates for the non-neuron ops it
    does not leave to a vendor library (include/snn/Conversion/NeuronToGPU/
    OpKernels.h): one kernel per `snn.add`, `snn.accumulate`, `snn.scale`,
    `snn.dropout` (as in training: it draws the mask), `snn.dropout_bwd`,
    pooling op (`snn.avg_pool2d`, `snn.sum_pool2d`, `snn.max_pool2d`) and
    pooling gradient, `snn.batch_norm` (training mode when an
    `snn.batch_norm_bwd` takes its gradient, else eval) and
    `snn.batch_norm_bwd`, loss op (`snn.loss_ce_rate`, `snn.loss_ce_membrane`,
    `snn.loss_mse_rate`, `snn.loss_ce_membrane_max`: the training kernel,
    which writes the gradient, and the evaluation kernel, which does not)
    (equal ones share a kernel), and one multi-tensor
    kernel per
    group of `snn.sgd` / `snn.adam` ops of a function with equal hyperparameters,
    which updates every parameter of the group in one launch (one segment
    per parameter). With `host=false` they are `gpu.func`s of
    `gpu.module @snn_kernels`; with `host=true`, `func.func`s that loop over
    the elements (the CPU kernel library's code). Ops with dynamic shapes
    are skipped. The IR is otherwise unchanged.
  }];
  let options = [
    Option<"host", "host", "bool", /*default=*/"false",
           "Generate host functions instead of GPU kernels">,
  ];
  let statistics = [
    Statistic<"numKernels", "num-kernels", "Number of kernels generated">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

#endif // SNN_CONVERSION_PASSES_TD
