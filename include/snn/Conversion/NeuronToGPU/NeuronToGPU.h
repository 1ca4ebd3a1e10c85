//===- NeuronToGPU.h - neuron layers as GPU kernels -------------*- C++ -*-===//
//
// Generation of the forward and backward CUDA kernels of the multi-step
// neuron layers (docs/artifact-format.md, "Compiler-generated neuron
// kernels"), and their compilation to cubin and PTX.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_CONVERSION_NEURONTOGPU_NEURONTOGPU_H
#define SNN_CONVERSION_NEURONTOGPU_NEURONTOGPU_H

#include "snn/Conversion/NeuronToGPU/OpKernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir::snn {

/// How the kernels store what they hand on (the memory plan of the training
/// step); the defaults are f32 tensors.
struct NeuronStorage {
  /// The saved H in bfloat16, rounded to nearest even; the backward reads
  /// the rounded value back (half the bytes of the largest saved tensor).
  bool bf16H = false;
  /// The saved H rounded to bfloat16 but stored in f32 elements: the CPU
  /// runtime's bf16 tensors (a 4-byte slot that holds a bf16 value).
  bool bf16HInF32 = false;
  /// Forward spikes as bits packed over time (spiking models only): word w
  /// of neuron n holds S[w * bits + j][n] in bit j, words of
  /// `getSpikeWordBits()` bits laid out [words][N].
  bool spikeBits = false;
  /// Recompute H in the backward instead of saving it (lif, if, li): the
  /// forward saves the membrane V at the start of every chunk of this many
  /// steps after the first ([ceil(T/C) - 1, N], "checkpoints"), and the
  /// backward re-runs each chunk's forward from its checkpoint and the input
  /// X, keeping the chunk's H in registers. 0: save H.
  int64_t recomputeChunk = 0;
};

/// Marks a step neuron op whose input is an snn.add that the manifest folds
/// into its `neuron_step` (`"addend"`): the step kernel reads both operands.
inline constexpr llvm::StringLiteral kStepAddendAttrName = "snn.step_addend";

/// Marks a multi-step lif or if op whose training forward (the kernel that
/// saves H) writes its spikes as row bits instead of floats: u32 words,
/// bit j of word w = the spike of element 32 w + j of [T, B, K] (K a
/// multiple of 32), which only compact_rows reads (--snn-compile sets it,
/// RowSpikeBits.cpp). 1/32 of the float spikes' bytes.
inline constexpr llvm::StringLiteral kSpikeRowBitsAttrName =
    "snn.spike_row_bits";

/// Marks a multi-step spiking op that counts its input gradient for an
/// event-driven linear backward (snn.fused_grad_count) whose weight gradient
/// lists gy's nonzero rows per column (compact_columns): its backward kernel
/// also writes gx's occupancy as row bits (bit j of word w = gx[32 w + j]
/// != 0, [T, B, K] with K a multiple of 32), which compact_columns reads
/// instead of the floats (--snn-compile sets it, GradRowBits.cpp).
inline constexpr llvm::StringLiteral kGradRowBitsAttrName = "snn.grad_row_bits";

/// Threads per block of the generated GPU kernels.
inline constexpr int64_t kNeuronKernelBlockSize = 256;

/// The kernels of one neuron op and their launch configuration (grid and
/// block are one-dimensional).
struct NeuronKernel {
  /// Forward kernel that saves H (and I for cuba_lif): the `train_forward`
  /// program's `neuron` op, "save_h": true.
  std::string fwdName;
  /// Backward kernel: the `neuron_bwd` op.
  std::string bwdName;
  int64_t blockSize, gridSize;
  /// Partial sums per channel that the backward writes for the batch norm
  /// backward's finish kernel (NeuronSpec::bnParts); 0 when it writes none.
  int64_t batchNormParts = 0;
  /// The backward's grid (more than gridSize when it sums a batch norm's
  /// backward over padded channel planes).
  int64_t bwdGridSize = 0;
  /// Forward kernel without the saved outputs: the `infer` program's
  /// `neuron` op, "save_h": false.
  std::string fwdInferName;
  /// Forward kernel that also writes H and the membrane V after the reset
  /// (f32): the `infer` op when snn-run records the layer's state.
  std::string fwdRecordName;
};

struct NeuronKernelBundle {
  /// One entry per neuron op that has kernels; ops not listed (snn.plif,
  /// non-f32 layers) run on the runtime's built-in kernels.
  llvm::DenseMap<Operation *, NeuronKernel> kernels;
  /// "sm_80", "sm_90", ... -> cubin bytes; "ptx" -> PTX text for the oldest
  /// chip of the list (the driver JIT-compiles it for newer ones).
  llvm::StringMap<std::string> blobs;
};

/// Generates forward and backward kernels for every multi-step neuron op in
/// `func` (fwd ABI and bwd ABI of docs/artifact-format.md, section
/// "Compiler-generated neuron kernels") and serializes them: PTX always, and
/// a cubin per chip of `chips` when `emitBinary` (this needs `ptxas`, found
/// on PATH, in $CUDA_HOME/bin, $CUDA_PATH/bin or /usr/local/cuda/bin).
/// Per-neuron parameters of cuba_lif's synapse (k_syn, c_syn, i_init) follow
/// v_init in the argument list. Emits a diagnostic and fails when a chip name
/// is malformed or the toolchain fails. `storage` applies to every layer.
/// `opKernels` (OpKernels.h) go into the same cubin and PTX.
FailureOr<NeuronKernelBundle>
generateNeuronKernels(func::FuncOp func, ArrayRef<std::string> chips,
                      bool emitBinary, const NeuronStorage &storage = {},
                      ArrayRef<NamedOpKernel> opKernels = {});

/// The names and launch sizes that generateNeuronKernels and
/// generateHostNeuronKernels give the kernels of `func`'s neuron ops,
/// without generating them.
llvm::DenseMap<Operation *, NeuronKernel> getNeuronKernelNames(func::FuncOp func);

/// Why the kernel generator builds no kernels for the neuron op `op` (f32
/// only, static shapes, ...); empty when it does.
std::string getNeuronKernelUnsupportedReason(Operation *op);

/// The neuron kernels compiled for the CPU that runs snn-opt: a shared
/// library that exports `void NAME(void **args)` per kernel, args[i] being
/// the i-th tensor of the kernel ABI (the GPU kernels' order and names).
struct HostKernelLibrary {
  /// Names per neuron op, as for the GPU (block and grid are the GPU's).
  llvm::DenseMap<Operation *, NeuronKernel> kernels;
  /// The ELF shared object; empty when no op has kernels.
  std::string sharedLibrary;
  /// The LLVM target triple it was compiled for.
  std::string triple;
  /// The CPU level it needs beyond the triple's baseline ("x86-64-v3"), or
  /// empty.
  std::string cpu;
};

/// Generates, lowers through LLVM (O3, vectors of 4 lanes; for x86-64-v3
/// where this machine has it, else the architecture's baseline) and links
/// (with ld or ld.lld) the forward, inference and backward kernels of every
/// neuron op of `func` that has generated kernels, with f32 storage (lif/if
/// recompute H when `recomputeChunk` > 0; the saved H rounded to bf16 in its
/// f32 slots when `bf16H`). Emits a diagnostic and fails when
/// LLVM or the linker fails or no linker is found. `opKernels` join the
/// library.
FailureOr<HostKernelLibrary>
generateHostNeuronKernels(func::FuncOp func, int64_t recomputeChunk = 0,
                          ArrayRef<NamedOpKernel> opKernels = {},
                          bool bf16H = false);

} // namespace mlir::snn

#endif // SNN_CONVERSION_NEURONTOGPU_NEURONTOGPU_H
