//===- NeuronKernelBuilder.h - per-thread code of neuron kernels -*- C++
//-*-===//
//
// What a neuron kernel computes, independent of where it runs: the layer's
// description (NeuronSpec), the kernel ABI, and the code of one thread. The
// GPU kernels and the host functions that check them share this code.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_LIB_CONVERSION_NEURONTOGPU_NEURONKERNELBUILDER_H
#define SNN_LIB_CONVERSION_NEURONTOGPU_NEURONKERNELBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "snn/Conversion/NeuronToGPU/NeuronToGPU.h"
#include "snn/Dialect/SNN/IR/FusedBatchNorm.h"
#include "snn/Dialect/SNN/IR/FusedPool.h"
#include "snn/Dialect/SNN/IR/SNNOps.h"

#include <optional>
#include <string>

namespace mlir::snn::kernelgen {

enum class NeuronModel { LIF, IF, LI, CubaLIF, PLIF };

enum class KernelKind {
  Forward,      ///< x -> s
  ForwardSaveH, ///< x -> s, h (and i_saved for cuba_lif)
  Backward,     ///< gs, h -> gx (and gw for plif)
  /// x -> s, h, v: H and the membrane after the reset in f32 whatever the
  /// storage options (snn-run --record).
  ForwardRecord,
};

/// A neuron parameter: a compile-time scalar or a per-neuron tensor that is a
/// kernel argument.
struct NeuronParam {
  double scalar = 0.0;
  /// The per-neuron values when they are not all equal; null for a scalar.
  DenseFPElementsAttr values;
  bool isTensor() const { return static_cast<bool>(values); }
};

/// A multi-step neuron layer as the kernels see it: sizes, parameters and
/// the options of DESIGN §2.
struct NeuronSpec {
  NeuronModel model;
  int64_t numSteps;    ///< T
  int64_t numNeurons;  ///< N = B * F
  int64_t numFeatures; ///< F: per-neuron parameters are indexed neuron % F
  // In the order of the kernel ABI.
  NeuronParam k, c, vLeak, vTh, vReset, vInit, kSyn, cSyn, iInit;
  /// v_init is not given and defaults to v_reset (hard reset): it reuses
  /// v_reset's value and has no argument of its own.
  bool vInitFromReset = false;
  bool softReset = false, strict = false, detachReset = false;
  SurrogateKind surrogate = SurrogateKind::Sigmoid;
  double alpha = 4.0;
  std::optional<double> thetaGrad;
  /// σ' = 0 where |H - v_th| > gradBand (absent or inf: no band).
  std::optional<double> gradBand;
  NeuronStorage storage;
  /// A time split (--snn-split-time) chains the layer's state between ranks:
  /// the forward reads its initial state and writes its final state, the
  /// backward reads the final state's gradient and writes the initial
  /// state's (each [N] f32 per state tensor, in the op's state order).
  bool chainsState = false;
  /// plif: k = sigmoid(w) from the weight tensor w (the first parameter
  /// argument, plifWeightSize = 1 or F values), c = k with decayInput, else
  /// 1. The backward also writes dL/dw: added to gw (zeroed by the caller)
  /// with atomics, per feature or summed for a scalar weight.
  int64_t plifWeightSize = 0;
  bool decayInput = true;
  /// One step of the layer from a given state (a step op inside a time
  /// loop: `neuron_step` / `neuron_step_bwd`), numSteps = 1; its own ABI.
  bool step = false;
  /// The step's input is x + addend (the snn.add that the manifest folds
  /// into neuron_step, kStepAddendAttrName).
  bool stepAddend = false;
  /// An earlier step op of the function has the same kernels (the steps of
  /// an unrolled loop): this one takes their names and builds nothing.
  bool sharesKernels = false;
  /// The average/sum pooling the layer is fused with (--snn-fuse): a thread
  /// per window of the [.., rows, cols] feature map. The forward kernels
  /// write the pooled spikes (and what the backward reads: H or the
  /// checkpoints, I); the backward reads the pooled spikes' gradient
  /// [T, windows] and spreads it over the window. Channels-last maps are
  /// [.., rows, cols, channels] (a window's neurons are `channels` apart,
  /// the pooled spikes [.., rows / KH, cols / KW, channels]); otherwise
  /// channels = 1.
  std::optional<FusedPool> pool;
  int64_t rows = 0, cols = 0, channels = 1;
  /// The batch norm the forward kernels apply to x on load (--snn-fuse):
  /// x viewed as [M, bnChannels, bnSpatial]. The saving forward (training)
  /// reads scale and shift from the batch norm's scratch (bnScratchSize
  /// floats, the scale at bnTermOffset + c, the shift C further); the
  /// others (inference) compute the affine of the running statistics.
  std::optional<FusedBatchNorm> bn;
  int64_t bnChannels = 0, bnSpatial = 0, bnScratchSize = 0, bnTermOffset = 0;
  /// With bn->backward the backward kernel also reads x and the saved
  /// statistics and writes, per channel, the partial sums of gY and gY xhat
  /// of the batch norm's backward (each an f32 high and low pair, as its
  /// statistics kernel does). Its grid has bnPlaneSlots thread slots per
  /// channel plane (getBatchNormBackwardPlaneSlots: the plane's threads,
  /// then idle slots); a partial per run of bnSegment slots (a tree in the
  /// block), bnParts per channel at [c][part][4] of a scratch of
  /// bnBwdScratchSize floats (the batch norm's finish kernel with
  /// parts = bnParts reads it).
  int64_t bnPlaneSlots = 0, bnSegment = 0, bnParts = 0, bnBwdScratchSize = 0;
  bool fusesBatchNormBackward() const { return bn && bn->backward; }
  /// The forward kernels count the spikes they write, the backward kernel
  /// the nonzeros of gx, for an event-driven layer that reads them
  /// (snn.fused_spike_count, snn.fused_grad_count): two more arguments
  /// last, the layer's limit (i32 [1]) and decision (i32 [2], zeroed by
  /// the caller), which the kernel writes as spike_density does.
  bool countsSpikes = false, countsGrad = false;
  bool countsOutput(KernelKind kind) const {
    return kind == KernelKind::Backward ? countsGrad : countsSpikes;
  }
  /// Threads of a channel plane, and the backward's thread slots.
  int64_t getPlaneThreads() const { return bnSpatial / getWidth(); }
  int64_t getNumBatchNormSlots() const {
    return numNeurons / bnSpatial * bnPlaneSlots;
  }
  /// Threads per GPU block of the layer's kernels, given the module's.
  int64_t getBlockSize(int64_t defaultBlockSize) const;
  /// Threads of the backward kernel's grid.
  int64_t getNumBackwardThreads() const {
    return fusesBatchNormBackward() ? getNumBatchNormSlots()
                                    : getNumThreads();
  }
  /// Batch norm arguments of a kernel, after the outputs (and chained
  /// state): training gamma, beta, saved_mean, saved_invstd, scratch;
  /// inference gamma, beta, running_mean, running_var; the backward x,
  /// saved_mean, saved_invstd, scratch (with bn->backward). A backward that
  /// recomputes H normalizes x as the training forward did: that
  /// forward's five, then the sums' scratch (with bn->backward); its x is
  /// its input argument.
  unsigned getNumBatchNormArgs(KernelKind kind) const {
    if (!bn)
      return 0;
    if (kind == KernelKind::Backward && recomputes())
      return bn->backward ? 6 : 5;
    if (kind == KernelKind::Backward)
      return bn->backward ? 4 : 0;
    return kind == KernelKind::ForwardSaveH ? 5 : 4;
  }
  /// The backward's argument holding the batch norm backward's partial
  /// sums (spec.fusesBatchNormBackward()): the last batch norm argument,
  /// after gs, H (or x and the checkpoints), gx (and I).
  unsigned getBatchNormSumsArg() const {
    unsigned fixed = recomputes() ? 4 : hasSynapse() || learnsLeak() ? 4 : 3;
    return fixed + getNumBatchNormArgs(KernelKind::Backward) - 1;
  }

  /// Step layers and pooled layers are not recorded (a pooled layer's
  /// spikes are never written).
  bool hasKernel(KernelKind kind) const {
    return !(step || pool) || kind != KernelKind::ForwardRecord;
  }
  /// Windows of a pooled layer (its pooled outputs per step).
  int64_t getNumWindows() const {
    return pool ? numNeurons / (pool->kh * pool->kw) : numNeurons;
  }

  bool spikes() const { return model != NeuronModel::LI; }
  bool hasSynapse() const { return model == NeuronModel::CubaLIF; }
  bool learnsLeak() const { return model == NeuronModel::PLIF; }
  /// Neurons per thread of a plain layer when N is a multiple of it: 4 on
  /// the GPU (16-byte accesses), 8 on the CPU (a 32-byte vector).
  int64_t lanes = 4;
  /// The kernel is built for the CPU (HostKernels.cpp): no GPU-only tuning.
  bool host = false;
  /// Neurons per thread: `lanes` when N is a multiple of it, else 4
  /// (16-byte accesses) when N is a multiple of 4; a pooled layer's KH KW
  /// (the forward's thread holds a window and reads it one access per row
  /// of KW neurons, the backward's KH KW consecutive ones).
  int64_t getWidth() const {
    if (pool)
      return pool->kh * pool->kw;
    if (numNeurons % lanes == 0)
      return lanes;
    return numNeurons % 4 == 0 ? 4 : 1;
  }
  int64_t getNumThreads() const {
    return pool ? getNumWindows() : numNeurons / getWidth();
  }
  /// kSpikeRowBitsAttrName: the ForwardSaveH kernel writes the spikes as
  /// row bits, [T N / 8] bytes (byte i = neurons 8 i .. 8 i + 7).
  bool rowSpikeBits = false;
  bool writesRowBits(KernelKind kind) const {
    return rowSpikeBits && kind == KernelKind::ForwardSaveH;
  }
  /// kGradRowBitsAttrName: the Backward kernel also writes gx's occupancy
  /// as row bits, [T N / 8] bytes, an argument before the count's limit and
  /// decision (it implies countsGrad).
  bool gradRowBits = false;
  bool writesGradBits(KernelKind kind) const {
    return gradRowBits && kind == KernelKind::Backward;
  }
  /// The backward reads gy [T, B, C] of the thin linear that reads the
  /// layer's spikes (C = linearGradOutputs, snn.fused_linear_grad) instead
  /// of gS, and that linear's weight W [C, F] as an argument after the
  /// parameters: gS = gy[t, b, :] W, formed at the steps where one of the
  /// thread's lanes is in the surrogate band (a spiking layer with a
  /// finite grad_band).
  int64_t linearGradOutputs = 0;
  bool readsLinearGrad(KernelKind kind) const {
    return linearGradOutputs > 0 && kind == KernelKind::Backward;
  }
  /// snn.fused_time_mean (FusedTimeMean.h): the forward that saves H also
  /// writes scale times the sum over the steps of what it writes to its
  /// output (f64 in step order), [N] f32, an argument after the parameters.
  std::optional<double> timeMeanScale;
  bool writesTimeMean(KernelKind kind) const {
    return timeMeanScale && kind == KernelKind::ForwardSaveH;
  }
  /// snn.fused_time_broadcast: the backward's gs is [N], the gradient of
  /// the time mean, and every step's output gradient is scale times it.
  std::optional<double> gradBroadcastScale;
  bool readsBroadcastGrad(KernelKind kind) const {
    return gradBroadcastScale && kind == KernelKind::Backward;
  }
  /// The forward writes its spikes as packed bits (a pooled layer writes
  /// the pooled spikes only).
  bool packsSpikes() const { return storage.spikeBits && spikes() && !pool; }
  /// Bits per spike word: the smallest of 8, 16, 32 that holds T steps (32
  /// for longer runs, which take several words).
  int64_t getSpikeWordBits() const {
    return numSteps <= 8 ? 8 : numSteps <= 16 ? 16 : 32;
  }
  int64_t getNumSpikeWords() const {
    return (numSteps + getSpikeWordBits() - 1) / getSpikeWordBits();
  }
  /// The backward recomputes H (NeuronStorage::recomputeChunk): lif and if
  /// (li's backward needs no H; cuba_lif would need its current too, plif
  /// its V[t-1]).
  bool recomputes() const {
    return storage.recomputeChunk > 0 && spikes() && !hasSynapse() &&
           !learnsLeak();
  }
  int64_t getNumChunks() const {
    if (!recomputes())
      return 1;
    return (numSteps + storage.recomputeChunk - 1) / storage.recomputeChunk;
  }
  /// Elements of the checkpoint tensor (at least N, so that it is never
  /// empty: one chunk stores nothing).
  int64_t getCheckpointSize() const {
    return std::max<int64_t>(getNumChunks() - 1, 1) * numNeurons;
  }
  /// State tensors of a chained layer: v, or i then v for cuba_lif.
  int64_t getNumStateTensors() const { return hasSynapse() ? 2 : 1; }
  /// The parameters that are kernel arguments, in ABI order.
  SmallVector<const NeuronParam *> getTensorParams() const;
};

/// Describes `op`, or returns std::nullopt with the reason in `why` when the
/// op has no generated kernel (step form, non-f32 element type, ...).
std::optional<NeuronSpec> getNeuronSpec(Operation *op, std::string &why);

/// The kernel's memref argument types in ABI order.
SmallVector<Type> getKernelArgTypes(const NeuronSpec &spec, KernelKind kind,
                                    MLIRContext *ctx);

/// `snn_<func>_<index>_<model>_{fwd,fwd_h,bwd}`, a valid PTX identifier.
std::string getKernelName(StringRef funcName, unsigned index,
                          const NeuronSpec &spec, KernelKind kind);

/// Unsigned index arithmetic with constant operands at the insertion point
/// of `b`.
struct IndexMath {
  OpBuilder &b;
  Location loc;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value divU(Value v, int64_t d) {
    return arith::DivUIOp::create(b, loc, v, index(d));
  }
  Value remU(Value v, int64_t d) {
    return arith::RemUIOp::create(b, loc, v, index(d));
  }
  /// v m + a.
  Value mulAdd(Value v, int64_t m, Value a) {
    return arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, v, index(m)), a);
  }
};

/// Emits the work of thread `thread` (neurons [thread*W, thread*W + W)) at the
/// insertion point of `b`; `args` are the kernel's memref arguments. Returns
/// the thread's batch norm backward sums (f64 sum(gY), sum(gY xhat)) of a
/// backward with spec.fusesBatchNormBackward(), which the caller adds up
/// over bnSegment threads and stores (storeBatchNormPartials); else none.
/// With spec.countsOutput(kind), `count` gets the number of nonzeros the
/// thread wrote (i32); `args` then lacks the limit and decision.
SmallVector<Value, 2> buildNeuronThread(OpBuilder &b, Location loc,
                                        const NeuronSpec &spec,
                                        KernelKind kind, Value thread,
                                        ValueRange args,
                                        Value *count = nullptr);

/// The work of thread slot `slot` of a backward kernel that sums its batch
/// norm's backward (spec.fusesBatchNormBackward()): the thread of the slot
/// when the slot holds one, its sums; else zeros.
SmallVector<Value, 2> buildBatchNormBackwardSlot(OpBuilder &b, Location loc,
                                                 const NeuronSpec &spec,
                                                 Value slot, ValueRange args);

/// Stores the sums `sums` of run `segment` (index) of bnSegment slots of
/// a backward kernel into its scratch argument, at the run's (channel,
/// part), each as an f32 high and low pair.
void storeBatchNormPartials(OpBuilder &b, Location loc, const NeuronSpec &spec,
                            ValueRange args, Value segment, ValueRange sums);

/// Emits the work of thread `thread` of a pooled layer (spec.pool): the
/// window's KH x KW neurons scanned over T, forward (the pooled spikes
/// written) or backward (the pooled gradient spread over the window)
/// (NeuronPoolKernels.cpp).
SmallVector<Value, 2> buildPooledNeuronThread(OpBuilder &b, Location loc,
                                              const NeuronSpec &spec,
                                              KernelKind kind, Value thread,
                                              ValueRange args);

/// Moves the loop over `items` (GPU threads run on the CPU, one after the
/// other) inside the step loop of their body, a block of `blockItems` at a
/// time, their loop-carried state in stack buffers between steps
/// (HostStepInterchange.cpp). Returns the loop over the blocks that
/// replaces `items`; fails, changing nothing, unless the body is reads, one
/// step loop, then the rest.
FailureOr<scf::ForOp> interchangeHostSteps(scf::ForOp items,
                                           int64_t blockItems);

/// Adds at the insertion point of `b` the host function `name`: the kernel's
/// arguments then a range (HostKernelRange.h), a loop over the threads of
/// the range, each running the per-thread code, with the steps outside
/// blocks of threads where the code allows (interchangeHostSteps).
func::FuncOp buildHostKernel(OpBuilder &b, Location loc, StringRef name,
                             const NeuronSpec &spec, KernelKind kind);

/// The kernels generated for one neuron op.
struct NeuronOpKernels {
  Operation *op;
  NeuronSpec spec;
  /// Kernel names by KernelKind.
  SmallVector<std::pair<KernelKind, std::string>> names;
  /// Blocks of `blockSize` threads that cover the layer, and its backward
  /// (NeuronSpec::getNumBackwardThreads).
  int64_t gridSize, bwdGridSize;
  int64_t blockSize;
};

/// Calls `fn(op, index, spec)` for every neuron op of `func` that has
/// generated kernels, with `storage` in its spec; `index` counts every
/// multi-step neuron op in order (step ops apart), so that names do not
/// depend on which ops are supported. A step op like an earlier one gets
/// that one's index and spec.sharesKernels. Returns the number of neuron ops
/// skipped.
unsigned forEachKernelOp(
    func::FuncOp func,
    function_ref<void(Operation *, unsigned, const NeuronSpec &)> fn,
    const NeuronStorage &storage = {});

/// Reads the storage options of the passes: `hDType` is "f32" or "bf16",
/// `recomputeChunk` in [0, 64]. Emits an error on `module` and fails
/// otherwise.
FailureOr<NeuronStorage> parseNeuronStorage(Operation *module, StringRef hDType,
                                            bool spikeBits,
                                            int64_t recomputeChunk = 0);

/// Fails, with an error on each, when a neuron layer of `func` cannot use
/// `storage`.
LogicalResult checkStorageSupported(func::FuncOp func,
                                    const NeuronStorage &storage);

/// Adds the `gpu.func` kernels of every supported neuron op of `func` to
/// `gpuModule`, in blocks of `blockSize` threads, or of each layer's
/// NeuronSpec::getBlockSize(blockSize) with `perLayerBlocks` (snn-compile;
/// --snn-neuron-to-gpu keeps its block-size option for every layer).
/// Fails, with a diagnostic, on a name that already exists.
FailureOr<std::vector<NeuronOpKernels>>
buildGPUKernels(gpu::GPUModuleOp gpuModule, func::FuncOp func,
                ArrayRef<KernelKind> kinds, int64_t blockSize,
                bool perLayerBlocks, const NeuronStorage &storage,
                unsigned &numSkipped);

/// Replaces math.exp in the generated code by its polynomial approximation,
/// so that the GPU and the host run the same arithmetic and the GPU kernel
/// needs no libdevice.
LogicalResult expandMathOps(Operation *root);

/// Replaces bf16 conversions by integer arithmetic (round to nearest even),
/// for host targets that have no bf16 instructions or runtime library.
LogicalResult expandBF16Conversions(Operation *root);

/// The kinds of kernels to generate under the given options.
SmallVector<KernelKind> getKernelKinds(bool saveH, bool backward);

} // namespace mlir::snn::kernelgen

#endif // SNN_LIB_CONVERSION_NEURONTOGPU_NEURONKERNELBUILDER_H
