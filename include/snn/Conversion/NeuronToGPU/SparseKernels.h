//===- SparseKernels.h - kernels of event-driven linear layers --*- C++ -*-===//
//
// An `event_driven` snn.linear runs as: spike_density (counts the input's
// nonzeros, writes the decision), transpose_weight and event_linear (both
// return at once unless the decision is the event-driven path), next to the
// dense GEMM (which the runtime skips when the decision is the event-driven
// path: the CPU runtime by reading it, the CUDA runtime with a conditional
// graph node). The decision lives in device memory: no host
// synchronisation.
// The decision tensor is two i32 words: the nonzero count, then 1 for the
// event-driven path, 0 for the dense one. spike_density compares the count
// with a one-word i32 tensor, the limit, which the module initializes to
// getEventPathLimit of the compile-time crossover and the runtime may
// replace by a measured one (calibration.json): no recompilation.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_CONVERSION_NEURONTOGPU_SPARSEKERNELS_H
#define SNN_CONVERSION_NEURONTOGPU_SPARSEKERNELS_H

#include "snn/Conversion/NeuronToGPU/OpKernels.h"

namespace mlir::snn {

/// The largest nonzero count of an input with `elements` elements for which
/// the event-driven path runs at density `crossover` (the limit tensor's
/// initial value).
int64_t getEventPathLimit(double crossover, int64_t elements);

/// Argument types in ABI order (OpKernelSpec::getTensorsPerSegment); the
/// decision is `memref<2xi32>`, x's words (event_weight_grad_bits) an i32
/// memref of ceil(M K / 32), every other tensor a static 1-d f32 memref.
SmallVector<Type> getEventKernelArgTypes(const OpKernelSpec &spec,
                                         MLIRContext *ctx);

/// spike_density: up to 1024 blocks over the input (its decision must be
/// zero before the launch: the op says "zero_outputs"); transpose_weight:
/// one thread per weight; event_linear: one block per row (compacted form,
/// getEventRowLayout) or per (row, 256 output features).
int64_t getEventKernelGridSize(const OpKernelSpec &spec);
/// Threads per block: event_linear's compacted form sizes its block to the
/// output row; the others use kOpKernelBlockSize.
int64_t getEventKernelBlockSize(const OpKernelSpec &spec);

/// How event_linear's compacted GPU form splits a row: a block per row, each
/// warp compacts the nonzero inputs of a `segment` of the row into shared
/// memory, then each thread sums `width` output features (16-byte loads of
/// the transposed weight when N allows) over the compacted lists. A row
/// whose list does not fit in shared memory at once is taken in `chunks`
/// of warps() * segment inputs (a barrier between them); that needs one
/// group of output features per thread.
struct EventRowLayout {
  int64_t threads = 0; ///< per block
  int64_t width = 1;   ///< output features per thread and load (1 or 4)
  /// event_weight_grad_bits: the output columns of a thread, `threads`
  /// apart (consecutive lanes read consecutive bits of one word).
  int64_t columns = 1;
  /// event_weight_grad_lists: the shared accumulators, a row of gw per
  /// warp (warps() * K floats).
  int64_t accumulators = 0;
  int64_t segment = 0; ///< inputs per warp and chunk, a multiple of 32
  int64_t chunks = 1;  ///< passes over the row
  int64_t warps() const { return threads / 32; }
  int64_t listWords() const { return warps() * segment; }
};
/// The compacted form's layout, or nothing when its index list does not fit
/// in shared memory and a thread has several groups of output features
/// (very wide outputs: the per-(row, tile) form runs). event_weight_grad_bits
/// always has one: its threads hold up to ceil(K / 1024) columns each.
std::optional<EventRowLayout> getEventRowLayout(const OpKernelSpec &spec);

/// Whether event_weight_grad_lists has a GPU form for this spec: a warp's
/// accumulator row (K floats) and some of the event list fit in shared
/// memory (K up to about 10000).
bool hasEventListsKernel(const OpKernelSpec &spec);

/// The end of a GPU kernel that counts nonzeros for a decision (spike_density,
/// and a neuron kernel that counts its output for an event-driven layer):
/// `count` is the calling thread's (i32); every thread of the block calls
/// this (blocks of a multiple of 32 threads, `grid` of them). Each warp
/// adds its sum to decision[0] with one atomic, each block then takes a
/// ticket in decision[1], and the last block writes the decision
/// (decision[1] = decision[0] <= limit[0]). With `warpSums` (a workgroup
/// i32 array of one slot per warp) the block's sum goes out with one
/// atomic instead of one per warp. The decision must be zero before the
/// launch.
void emitGPUCountDecision(OpBuilder &b, Location loc, Value count, Value lane,
                          int64_t grid, Value limit, Value decision,
                          Value warpSums = Value());

/// The host twin, at the end of a ranged host kernel (HostKernelRange.h) of
/// `items` work items: `count` (i32) is the range's, `rangeItems` (i32) its
/// number of items. The range adds its count, then its items as a ticket
/// in decision[1]; the range that completes the items writes the decision.
/// Any split into ranges, run on any threads, gives the same words; the
/// decision must be zero before the first range.
void emitHostCountDecision(OpBuilder &b, Location loc, Value count,
                           Value rangeItems, int64_t items, Value limit,
                           Value decision);

/// Whether `decision` (memref<2xi32>) says "event-driven path" (i1): every
/// event-driven kernel returns at once unless it does.
Value emitEventPathChosen(OpBuilder &b, Location loc, Value decision);
/// Host code: `body(at)` for each slot `at` (index into `columns`) of the
/// compact_rows list of K slots that starts at `listStart`, in order, up to
/// its -1 (or slot K when the row is full).
void emitHostListWalk(OpBuilder &b, Location loc, Value columns,
                      Value listStart, int64_t k,
                      function_ref<void(Value at)> body);
/// The same over a list of `k` (index) slots.
void emitHostListWalk(OpBuilder &b, Location loc, Value columns,
                      Value listStart, Value k,
                      function_ref<void(Value at)> body);
gpu::GPUFuncOp buildEventGPUKernel(OpBuilder &b, Location loc, StringRef name,
                                   const OpKernelSpec &spec);

/// GPU code: a warp's in-order compaction of the x[rowStart + j] for j in
/// [begin, begin + span) (j < length; span a multiple of 32 * unroll) that
/// `listed(value)` (i1) selects, the nonzeros when it is null: per
/// iteration `unroll` groups of 32 elements, their loads first, then per
/// group a ballot and each listed element's slot (the count so far plus
/// the popcount of the lower lanes' bits), given to `store(j, value,
/// slot)`. Every lane must call it; returns the count (i32). With
/// `width` 4 a lane loads 4 consecutive elements at once (16 bytes) and a
/// group is 128 elements (4 ballots, the same slots): rowStart, begin and
/// length must then be multiples of 4 and span of 128 * unroll.
Value emitWarpCompaction(
    OpBuilder &b, Location loc, Value x, Value rowStart, Value begin,
    int64_t span, int64_t length, Value laneInWarp, int64_t unroll,
    function_ref<void(Value j, Value value, Value slot)> store,
    function_ref<Value(Value value)> listed = nullptr, int64_t width = 1);

/// `while (mask) { state = body(ctz(mask), state); mask &= mask - 1; }` over
/// an i32 mask, the set bits in increasing order (host or GPU code); the
/// final state.
SmallVector<Value> emitForEachSetBit(
    OpBuilder &b, Location loc, Value mask, ValueRange state,
    function_ref<SmallVector<Value>(Value bit, ValueRange state)> body);

/// Host code: body(j, slot) for each j in [0, k) where x[rowStart + j] is
/// not 0, in increasing j, `slot` counting the earlier ones (index); 8
/// floats compared at a time, only the set bits visited. Returns the count.
Value emitHostNonzeroScan(OpBuilder &b, Location loc, Value x, Value rowStart,
                          int64_t k,
                          function_ref<void(Value j, Value slot)> body);
/// The same over k (index) elements.
Value emitHostNonzeroScan(OpBuilder &b, Location loc, Value x, Value rowStart,
                          Value k,
                          function_ref<void(Value j, Value slot)> body);

/// Host code: body(j, slot) for each set bit j of row `row` of row bits
/// (`words`: K / 32 u32 words a row, K a multiple of 32), in increasing j,
/// `slot` counting the earlier ones (index). Returns the count.
Value emitHostRowBitsScan(OpBuilder &b, Location loc, Value words, Value row,
                          int64_t k,
                          function_ref<void(Value j, Value slot)> body);

/// The element of wt[j, o] (index values) in a host transposed weight
/// [K, N] stored in strips (OpKernelSpec::weightStrips, N >= 64): strip
/// o / 64 as [K, 64], the columns past the last whole strip as
/// [K, N % 64] after the strips. `inStrips`: whether o lies in the strips,
/// in the tail, or either (std::nullopt: chosen at run time). A run of 8
/// columns from a multiple of 8 stays contiguous in either part.
Value getWeightStripOffset(OpBuilder &b, Location loc, int64_t k, int64_t n,
                           Value j, Value o,
                           std::optional<bool> inStrips = std::nullopt);

/// The CPU form of event_linear (x dense): a block of rows lists its
/// nonzero inputs, then sums 64 outputs at a time over each row's list in
/// vector registers (HostEventLinear.cpp). `args` are the host function's
/// tensors (getEventKernelArgTypes).
void emitEventLinearHost(OpBuilder &b, Location loc, const OpKernelSpec &spec,
                         func::FuncOp fn, ValueRange args);

/// event_conv2d, the CPU only: per image (a work item) the outputs
/// [OH OW, O] from zero, for each nonzero input in the input's order its
/// value times the weights of each tap that reaches an output, O at a time
/// in vector registers; then the bias (HostEventConv.cpp). wt is the
/// weight transposed to [C KH KW, O] (NHWC: [KH KW C, O]).
void emitEventConvHost(OpBuilder &b, Location loc, const OpKernelSpec &spec,
                       func::FuncOp fn, ValueRange args);

/// event_conv2d_weight_grad, the CPU only: per input channel c (a work
/// item) the rows of gwᵀ [C KH KW, O] (NHWC: [KH KW C, O]) of its taps from
/// zero, then over the images, for each nonzero input of channel c in
/// memory order and each tap that reaches an output, x times gy's O values
/// at that output (gy as [images, OH OW, O]) added to the tap's row
/// (HostEventConv.cpp). Items write disjoint rows: any split, the same bits.
void emitEventConvWeightGradHost(OpBuilder &b, Location loc,
                                 const OpKernelSpec &spec, func::FuncOp fn,
                                 ValueRange args);

/// An event kernel's spec: kind and its rows, in and out features.
inline OpKernelSpec makeEventKernelSpec(OpKernelKind kind, int64_t rows,
                                        int64_t in, int64_t out) {
  OpKernelSpec spec;
  spec.kind = kind;
  spec.rows = rows;
  spec.inFeatures = in;
  spec.outFeatures = out;
  return spec;
}

/// thin_weight_grad_bits (ThinWeightGrad.cpp): gw [N, K] = gy [M, N]^T x
/// over x's row bits for N <= kMaxThinOutputs, as parts [S, N, K] of
/// kThinSegmentRows rows each (time_sum adds them).
inline constexpr int64_t kMaxThinOutputs = 32;
inline constexpr int64_t kThinSegmentRows = 128;
/// S, the parts' segments.
int64_t getThinWeightGradSegments(const OpKernelSpec &spec);
/// Blocks of kOpKernelBlockSize threads: a warp per (word column, segment).
int64_t getThinWeightGradGridSize(const OpKernelSpec &spec);
/// Its GPU body at the insertion point (args: gy, x's words, parts).
void buildThinWeightGradBitsGPU(OpBuilder &b, Location loc, ValueRange args,
                                Value block, Value lane,
                                const OpKernelSpec &spec);
/// Its CPU body, a segment per work item, into the ranged host function.
void buildThinWeightGradBitsHost(OpBuilder &b, Location loc, func::FuncOp fn,
                                 const OpKernelSpec &spec);

/// event_linear_band (EventLinearBand.cpp): the threads of its GPU block.
int64_t getEventBandBlockSize();
/// Its GPU body, a block per row, into the empty `kernel` (and its return).
void buildEventLinearBandGPU(OpBuilder &b, Location loc, gpu::GPUFuncOp kernel,
                             const OpKernelSpec &spec);
/// Its CPU body, a row per work item, into the ranged host function `fn`.
void buildEventLinearBandHost(OpBuilder &b, Location loc, func::FuncOp fn,
                              const OpKernelSpec &spec);

/// The CPU form: event_linear as above; the other row kernels a row at a
/// time, adding the contiguous transposed weight row of each listed input
/// to the output row (vectorized by LLVM); event_weight_grad_bits visits the
/// set bits of each event's words (ctz) and sums with compensation, in tiles of
/// up to 4096 columns.
func::FuncOp buildEventHostKernel(OpBuilder &b, Location loc, StringRef name,
                                  const OpKernelSpec &spec);

} // namespace mlir::snn

#endif // SNN_CONVERSION_NEURONTOGPU_SPARSEKERNELS_H
