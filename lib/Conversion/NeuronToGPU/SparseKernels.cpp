//===- SparseKernels.cpp - kernels of event-driven linear layers ----------===//
//
// The GPU and host forms of spike_density, transpose_weight and
// event_linear (SparseKernels.h). Both forms add the weights of a row's
// nonzero inputs in input order and add the bias last, as the dense path
// does (y = x w^T, then + b), so the two paths differ only by the GEMM's
// summation order.
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/SparseKernels.h"
#include "snn/Conversion/NeuronToGPU/EventLinearTiles.h"
#include "snn/Conversion/NeuronToGPU/HostKernelRange.h"
#include "snn/Conversion/NeuronToGPU/KernelArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>

#include <cmath>

using namespace mlir;
using namespace mlir::snn;

/// Both forms of transpose_weight go in square tiles of this side.
static constexpr int64_t kTransposeTile = 32;
/// Bits of x per u32 word (event_weight_grad_bits; pack_bits' layout).
static constexpr int64_t kBitsPerWord = 32;
/// Threads of an event row's block at most.
static constexpr int64_t kMaxRowThreads = 1024;

int64_t mlir::snn::getEventPathLimit(double crossover, int64_t elements) {
  return static_cast<int64_t>(std::floor(crossover * double(elements)));
}

SmallVector<Type> mlir::snn::getEventKernelArgTypes(const OpKernelSpec &spec,
                                                    MLIRContext *ctx) {
  Type f32 = Float32Type::get(ctx);
  auto tensor = [&](int64_t n) -> Type { return MemRefType::get({n}, f32); };
  Type decision = MemRefType::get({2}, IntegerType::get(ctx, 32));
  Type limit = MemRefType::get({1}, IntegerType::get(ctx, 32));
  int64_t m = spec.rows, k = spec.inFeatures, n = spec.outFeatures;
  switch (spec.kind) {
  case OpKernelKind::SpikeDensity:
    return {tensor(m * k), limit, decision};
  case OpKernelKind::TransposeWeight:
    return {decision, tensor(spec.transposeBatch * n * k),
            tensor(spec.transposeBatch * n * k)};
  case OpKernelKind::EventLinear: {
    // x [M, K] (xBits: [M, K / 32] words), wt [K, N], b, decision, y.
    assert((!spec.xBits || k % kBitsPerWord == 0) && "rows of whole words");
    Type x = spec.xBits ? Type(MemRefType::get({m * k / kBitsPerWord},
                                               IntegerType::get(ctx, 32)))
                        : tensor(m * k);
    SmallVector<Type> types{x, tensor(n * k)};
    if (spec.hasBias)
      types.push_back(tensor(n));
    types.push_back(decision);
    types.push_back(tensor(m * n));
    return types;
  }
  case OpKernelKind::EventConv2d: {
    // x [images, C, H, W] (or NHWC), wt [C KH KW, O], b, decision, y.
    const ConvColumnsGeometry &g = spec.columns;
    SmallVector<Type> types{tensor(g.getInputElements()), tensor(n * k)};
    if (spec.hasBias)
      types.push_back(tensor(n));
    types.push_back(decision);
    types.push_back(tensor(g.images * n * g.oh * g.ow));
    return types;
  }
  case OpKernelKind::EventConv2dWeightGrad: {
    // x [images, C, H, W] (or NHWC), gy [images, OH OW, O], decision, gwᵀ.
    const ConvColumnsGeometry &g = spec.columns;
    return {tensor(g.getInputElements()), tensor(g.images * g.oh * g.ow * n),
            decision, tensor(n * k)};
  }
  case OpKernelKind::EventLinearBits: {
    // gy^T [N, M], x [M, K] as words (and values), gw [N, K].
    int64_t events = spec.inFeatures, cols = spec.outFeatures;
    int64_t words = llvm::divideCeilSigned(events * cols, kBitsPerWord);
    SmallVector<Type> types{
        tensor(m * events),
        MemRefType::get({words}, IntegerType::get(ctx, 32))};
    if (spec.xValues)
      types.push_back(tensor(events * cols));
    types.push_back(decision);
    types.push_back(tensor(m * cols));
    return types;
  }
  case OpKernelKind::CompactRows: {
    // x [M, K] (xBits: [M, K / 32] words), (countsNonzeros: limit,)
    // decision, columns [M, K] (, values [M, K]).
    Type i32 = IntegerType::get(ctx, 32);
    assert(!(spec.xBits && spec.xValues) && "row bits are spikes: no values");
    assert((!spec.xBits || k % kBitsPerWord == 0) && "rows of whole words");
    Type x = spec.xBits ? Type(MemRefType::get({m * k / kBitsPerWord}, i32))
                        : tensor(m * k);
    SmallVector<Type> types{x};
    if (spec.countsNonzeros)
      types.push_back(limit);
    types.push_back(decision);
    types.push_back(MemRefType::get({m * k}, i32));
    if (spec.xValues)
      types.push_back(tensor(m * k));
    return types;
  }
  case OpKernelKind::CompactColumns: {
    // gy [M, N] (xBits: its occupancy as [M, N / 32] words), decision, its
    // column lists [N, M].
    Type i32 = IntegerType::get(ctx, 32);
    assert((!spec.xBits || k % kBitsPerWord == 0) && "rows of whole words");
    Type gy = spec.xBits ? Type(MemRefType::get({m * k / kBitsPerWord}, i32))
                         : tensor(m * k);
    return {gy, decision, MemRefType::get({m * k}, i32)};
  }
  case OpKernelKind::EventLinearLists: {
    // gy^T [N, M] (columnSegment: gy [M, N], then its column lists
    // [N, M]), x's lists (columns and values [M, K]), decision, gw [N, K].
    Type i32 = IntegerType::get(ctx, 32);
    int64_t events = spec.inFeatures, cols = spec.outFeatures;
    SmallVector<Type> types{tensor(m * events)};
    if (spec.columnSegment)
      types.push_back(MemRefType::get({m * events}, i32));
    types.push_back(MemRefType::get({events * cols}, i32));
    if (spec.xValues)
      types.push_back(tensor(events * cols));
    types.push_back(decision);
    types.push_back(tensor(m * cols));
    return types;
  }
  case OpKernelKind::EventLinearTiles: {
    // x's lists (columns and values [M, K]), w [N, K], b, decision, y.
    SmallVector<Type> types{MemRefType::get({m * k}, IntegerType::get(ctx, 32))};
    if (spec.xValues)
      types.push_back(tensor(m * k));
    types.push_back(tensor(k * n));
    if (spec.hasBias)
      types.push_back(tensor(n));
    types.push_back(decision);
    types.push_back(tensor(m * n));
    return types;
  }
  case OpKernelKind::EventLinearBand:
    // x [M, K], wt [K, N], h [M, N], decision, y [M, N].
    return {tensor(m * k), tensor(k * n), tensor(m * n), decision,
            tensor(m * n)};
  case OpKernelKind::ThinWeightGradBits:
    // gy [M, N], x [M, K] as row bits, parts [S, N, K].
    assert(k % kBitsPerWord == 0 && "rows of whole words");
    return {tensor(m * n),
            MemRefType::get({m * k / kBitsPerWord}, IntegerType::get(ctx, 32)),
            tensor(getThinWeightGradSegments(spec) * n * k)};
  default:
    llvm_unreachable("not an event-driven kernel");
  }
}

/// Blocks of spike_density: enough for every SM several times over, each
/// thread counting at least kDensityElementsPerThread inputs.
static int64_t getDensityGridSize(const OpKernelSpec &spec) {
  constexpr int64_t kDensityElementsPerThread = 16, kMaxDensityBlocks = 1024;
  int64_t perBlock = kOpKernelBlockSize * kDensityElementsPerThread;
  return std::clamp<int64_t>(
      llvm::divideCeilSigned(spec.rows * spec.inFeatures, perBlock), 1,
      kMaxDensityBlocks);
}

std::optional<EventRowLayout>
mlir::snn::getEventRowLayout(const OpKernelSpec &spec) {
  // Static shared memory of a block is at most 48 KiB; keep room for two
  // blocks per SM's worth of other state.
  constexpr int64_t kMaxListBytes = 40 * 1024;
  EventRowLayout layout;
  if (spec.kind == OpKernelKind::EventLinearLists) {
    // A row of gw per block: as many warps as their accumulator rows (K
    // floats each) fit in kMaxListsAccumulatorBytes, at most 8; the event
    // lists of gy^T's row take the rest of kMaxListBytes, in chunks.
    constexpr int64_t kMaxListsAccumulatorBytes = 24 * 1024;
    constexpr int64_t kMaxListsWarps = 8;
    int64_t rowBytes = 4 * spec.outFeatures;
    int64_t warps = std::clamp<int64_t>(kMaxListsAccumulatorBytes / rowBytes,
                                        1, kMaxListsWarps);
    int64_t listBytes = kMaxListBytes - warps * rowBytes - 4 * warps;
    // Segments in multiples of 128 inputs where they fit (the compaction
    // then loads 4 groups of 32 at once).
    int64_t perWarp = listBytes / 4 / warps;
    int64_t segment = perWarp >= 128 ? perWarp / 128 * 128 : perWarp / 32 * 32;
    if (segment < 32)
      return std::nullopt;
    layout.threads = 32 * warps;
    layout.accumulators = warps * spec.outFeatures;
    layout.segment = std::min<int64_t>(
        segment,
        llvm::alignTo(llvm::divideCeilSigned(spec.inFeatures, warps),
                      segment % 128 == 0 ? 128 : 32));
    layout.chunks = llvm::divideCeilSigned(spec.inFeatures, layout.listWords());
    return layout;
  }
  int64_t groups;
  if (spec.kind == OpKernelKind::EventLinearBits) {
    // A thread per output column, several when K > 1024: every block's
    // event list is shared by all of its columns.
    layout.columns = llvm::divideCeilSigned(spec.outFeatures, kMaxRowThreads);
    groups = llvm::divideCeilSigned(spec.outFeatures, layout.columns);
  } else {
    layout.width = spec.outFeatures % 4 == 0 ? 4 : 1;
    groups = spec.outFeatures / layout.width;
  }
  layout.threads =
      std::clamp<int64_t>(llvm::alignTo(groups, 32), 64, kMaxRowThreads);
  // Segments longer than 64 inputs in multiples of 128 where the list
  // still fits: the compaction then loads 4 groups of 32 at once.
  int64_t perWarp = llvm::divideCeilSigned(spec.inFeatures, layout.warps());
  layout.segment = llvm::alignTo(perWarp, 32);
  if (perWarp > 64 &&
      (layout.warps() * llvm::alignTo(perWarp, 128) + layout.warps()) * 4 <=
          kMaxListBytes)
    layout.segment = llvm::alignTo(perWarp, 128);
  if ((layout.listWords() + layout.warps()) * 4 <= kMaxListBytes)
    return layout;
  // Long rows (e.g. a weight gradient's, over T * B events) in chunks; the
  // accumulator of a thread's one group of outputs lives across them.
  if (groups > layout.threads)
    return std::nullopt;
  int64_t fit = (kMaxListBytes / 4 - layout.warps()) / layout.warps();
  layout.segment = fit >= 128 ? fit / 128 * 128 : fit / 32 * 32;
  layout.chunks = llvm::divideCeilSigned(spec.inFeatures, layout.listWords());
  return layout;
}

int64_t mlir::snn::getEventKernelGridSize(const OpKernelSpec &spec) {
  switch (spec.kind) {
  case OpKernelKind::SpikeDensity:
    return getDensityGridSize(spec);
  case OpKernelKind::TransposeWeight:
    return llvm::divideCeilSigned(spec.inFeatures, kTransposeTile) *
           llvm::divideCeilSigned(spec.outFeatures, kTransposeTile);
  case OpKernelKind::EventLinear:
  case OpKernelKind::EventLinearBits:
  case OpKernelKind::EventLinearLists:
    if (getEventRowLayout(spec))
      return spec.rows;
    return spec.rows *
           llvm::divideCeilSigned(spec.outFeatures, kOpKernelBlockSize);
  case OpKernelKind::CompactRows:
    return llvm::divideCeilSigned(spec.rows, kOpKernelBlockSize / 32);
  case OpKernelKind::CompactColumns:
    return llvm::divideCeilSigned(
        llvm::divideCeilSigned(spec.inFeatures, 32) *
            llvm::divideCeilSigned(spec.rows, spec.columnSegment),
        kOpKernelBlockSize / 32);
  case OpKernelKind::EventLinearTiles:
    return getEventTileGridSize(spec);
  case OpKernelKind::EventLinearBand:
    return spec.rows;
  case OpKernelKind::ThinWeightGradBits:
    return getThinWeightGradGridSize(spec);
  case OpKernelKind::EventConv2d: // no GPU form: the CPU's items
    return spec.rows;
  case OpKernelKind::EventConv2dWeightGrad:
    return spec.columns.channels;
  default:
    llvm_unreachable("not an event-driven kernel");
  }
}

bool mlir::snn::hasEventListsKernel(const OpKernelSpec &spec) {
  return getEventRowLayout(spec).has_value();
}

int64_t mlir::snn::getEventKernelBlockSize(const OpKernelSpec &spec) {
  if (spec.kind == OpKernelKind::EventLinearTiles)
    return kEventTileThreads;
  if (spec.kind == OpKernelKind::EventLinearBand)
    return getEventBandBlockSize();
  if (spec.kind == OpKernelKind::EventLinear ||
      spec.kind == OpKernelKind::EventLinearBits ||
      spec.kind == OpKernelKind::EventLinearLists)
    if (std::optional<EventRowLayout> layout = getEventRowLayout(spec))
      return layout->threads;
  return kOpKernelBlockSize;
}

namespace {
/// Small builders shared by the GPU and host forms.
class EventEmitter : public KernelArith {
public:
  EventEmitter(OpBuilder &b, Location loc, const OpKernelSpec &spec)
      : KernelArith(b, loc), spec(spec) {}

  // The kernel functions build their own ops at the emitter's place too.
  using KernelArith::b;
  using KernelArith::loc;

  Value toIndex(Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
  }
  /// 1 where x != 0 (as i32).
  Value nonzero(Value x) {
    Value ne = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                     f32(0.0));
    return arith::ExtUIOp::create(b, loc, b.getI32Type(), ne);
  }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  }
  /// Adds the i32 `v` to word `word` of `memref` atomically; the old value.
  Value atomicAdd(Value v, Value memref, int64_t word) {
    return memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addi, v,
                                       memref, ValueRange{idx(word)})
        .getResult();
  }
  /// Whether the decision says "event-driven path".
  Value eventPathChosen(Value decision) {
    return emitEventPathChosen(b, loc, decision);
  }
  /// The number of nonzeros of x[first], x[first + step], ... (i32).
  /// `unroll` loads per iteration, issued before any is counted (the last
  /// ones clamped to a valid index and not counted past the end): a GPU
  /// thread then keeps that many loads in flight instead of one.
  Value countNonzeros(Value x, Value first, int64_t step, int64_t unroll = 1) {
    int64_t total = spec.rows * spec.inFeatures;
    auto loop = scf::ForOp::create(b, loc, first, idx(total),
                                   idx(step * unroll), ValueRange{i32(0)});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    if (unroll == 1) {
      Value c = addI(loop.getRegionIterArg(0), nonzero(load(x, i)));
      scf::YieldOp::create(b, loc, ValueRange{c});
      return loop.getResult(0);
    }
    SmallVector<Value> loaded, inRange;
    for (int64_t u = 0; u < unroll; ++u) {
      Value at = addI(i, idx(u * step));
      Value valid = ult(at, idx(total));
      inRange.push_back(valid);
      loaded.push_back(
          load(x, arith::SelectOp::create(b, loc, valid, at, idx(total - 1))));
    }
    Value c = loop.getRegionIterArg(0);
    for (int64_t u = 0; u < unroll; ++u) {
      Value counted = arith::AndIOp::create(
          b, loc, inRange[u],
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, loaded[u],
                                f32(0.0)));
      c = addI(c, arith::ExtUIOp::create(b, loc, b.getI32Type(), counted));
    }
    scf::YieldOp::create(b, loc, ValueRange{c});
    return loop.getResult(0);
  }
  /// Writes the count and the decision (count <= limit[0]) into
  /// `decision`. The limit is a tensor, not a constant: the runtime sets it
  /// from the module's calibration for the device.
  void storeDecision(Value count, Value limitTensor, Value decision) {
    store(count, decision, idx(0));
    Value limit = load(limitTensor, idx(0));
    Value event =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, count, limit);
    store(arith::ExtUIOp::create(b, loc, b.getI32Type(), event), decision,
          idx(1));
  }
  /// Sum over the nonzero x[row, j], in j order, of x[row, j] wt[j, col]
  /// (GPU; every thread of the warp must call it, col clamped to a valid
  /// column). Per chunk of 32 inputs: one coalesced load, a warp ballot of
  /// the nonzeros, then a loop over the set bits only (the compaction).
  Value sumNonzeroColumnsGPU(Value x, Value wt, Value row, Value col,
                             Value laneInWarp) {
    int64_t k = spec.inFeatures, n = spec.outFeatures;
    Type i32Type = b.getI32Type();
    Value rowStart = mulI(row, idx(k));
    auto chunks = scf::ForOp::create(b, loc, idx(0), idx(k), idx(32),
                                     ValueRange{f32(0.0)});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(chunks.getBody());
    Value c0 = chunks.getInductionVar();
    Value j = addI(c0, laneInWarp);
    Value inRange = ult(j, idx(k));
    Value jc = arith::SelectOp::create(b, loc, inRange, j, idx(k - 1));
    Value xv = load(x, addI(rowStart, jc));
    Value active = arith::AndIOp::create(
        b, loc, inRange,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, xv,
                              f32(0.0)));
    Value ballot = NVVM::VoteSyncOp::create(b, loc, i32Type, i32(-1), active,
                                            NVVM::VoteSyncKind::ballot);
    Value sum = emitForEachSetBit(
                    b, loc, ballot, ValueRange{chunks.getRegionIterArg(0)},
                    [&](Value bit, ValueRange acc) -> SmallVector<Value> {
                      Value jj = addI(c0, toIndex(bit));
                      Value v = load(x, addI(rowStart, jj));
                      Value w = load(wt, addI(mulI(jj, idx(n)), col));
                      Value term = arith::MulFOp::create(b, loc, v, w);
                      return {arith::AddFOp::create(b, loc, acc[0], term)};
                    })
                    .front();
    scf::YieldOp::create(b, loc, ValueRange{sum});
    return chunks.getResult(0);
  }
  /// One compensated (Kahan) step: {sum + term, the part of it lost}.
  std::pair<Value, Value> kahanAdd(Value sum, Value lost, Value term) {
    Value y = arith::SubFOp::create(b, loc, term, lost);
    Value t = arith::AddFOp::create(b, loc, sum, y);
    Value l = arith::SubFOp::create(
        b, loc, arith::SubFOp::create(b, loc, t, sum), y);
    return {t, l};
  }
  /// Whether bit `bit` (index) of the u32 words is set (i1).
  Value bitIsSet(Value words, Value bit) {
    Type i32Type = b.getI32Type();
    Value word = load(words, arith::DivUIOp::create(b, loc, bit,
                                                     idx(kBitsPerWord)));
    Value shift = arith::IndexCastUIOp::create(
        b, loc, i32Type,
        arith::RemUIOp::create(b, loc, bit, idx(kBitsPerWord)));
    Value one = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, word, shift), i32(1));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, one,
                                 i32(0));
  }
  /// g * x[bit] where `set`, else g (x read only at set bits).
  Value valueAtSetBit(Value g, Value x, Value bit, Value set) {
    auto read = scf::IfOp::create(b, loc, TypeRange{b.getF32Type()}, set,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(read.thenBlock());
    scf::YieldOp::create(
        b, loc, ValueRange{arith::MulFOp::create(b, loc, g, load(x, bit))});
    b.setInsertionPointToStart(read.elseBlock());
    scf::YieldOp::create(b, loc, ValueRange{g});
    return read.getResult(0);
  }
  /// The chunks of a compacted GPU row in turn (EventRowLayout), `body`
  /// folding the sums over one, a barrier after each (every thread is done
  /// with the list before the next chunk's overwrites it).
  SmallVector<Value>
  chunkLoop(const EventRowLayout &layout, ValueRange init,
            function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    int64_t chunkInputs = layout.listWords();
    auto loop = scf::ForOp::create(b, loc, idx(0),
                                   idx(layout.chunks * chunkInputs),
                                   idx(chunkInputs), init);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> sums =
        body(loop.getInductionVar(), loop.getRegionIterArgs());
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, sums);
    return llvm::to_vector_of<Value>(loop.getResults());
  }
  /// y[row, col] = acc (+ b[col]).
  void storeOutput(Value acc, ValueRange args, Value row, Value col) {
    if (spec.hasBias)
      acc = arith::AddFOp::create(b, loc, acc, load(args[2], col));
    store(acc, args.back(), addI(mulI(row, idx(spec.outFeatures)), col));
  }

  const OpKernelSpec &spec;
};
} // namespace

/// In a block's thread 0, after its count is added to word 0: a fence that
/// releases the count before the block's ticket (word 1); the last block's
/// fence orders everyone's counts before its read of the total, from which
/// it writes the decision.
static void emitLastBlockDecision(EventEmitter &e, int64_t grid, Value limit,
                                  Value decision) {
  NVVM::MembarOp::create(e.b, e.loc, NVVM::MemScopeKind::GPU);
  Value ticket = e.atomicAdd(e.i32(1), decision, 1);
  e.openIf(e.eq(ticket, e.i32(grid - 1)));
  NVVM::MembarOp::create(e.b, e.loc, NVVM::MemScopeKind::GPU);
  e.storeDecision(e.atomicAdd(e.i32(0), decision, 0), limit, decision);
}

void mlir::snn::emitGPUCountDecision(OpBuilder &b, Location loc, Value count,
                                     Value lane, int64_t grid, Value limit,
                                     Value decision, Value warpSums) {
  OpKernelSpec none;
  EventEmitter e(b, loc, none);
  Value warpSum = NVVM::ReduxOp::create(b, loc, b.getI32Type(), count,
                                        NVVM::ReduxKind::ADD, e.i32(-1));
  if (warpSums) {
    // The warps' sums through shared memory, then thread 0 adds the block's
    // with one atomic and one fence: per warp, the fence after its atomic
    // stalled a third of the density kernel's cycles (Nsight Compute, H200).
    int64_t warps = cast<MemRefType>(warpSums.getType()).getDimSize(0);
    {
      OpBuilder::InsertionGuard g(b);
      e.openIf(e.eq(arith::RemUIOp::create(b, loc, lane, e.idx(32)), e.idx(0)));
      e.store(warpSum, warpSums,
              arith::DivUIOp::create(b, loc, lane, e.idx(32)));
    }
    gpu::BarrierOp::create(b, loc);
    OpBuilder::InsertionGuard g(b);
    e.openIf(e.eq(lane, e.idx(0)));
    Value total = warpSum;
    for (int64_t w = 1; w < warps; ++w)
      total = e.addI(total, e.load(warpSums, e.idx(w)));
    e.atomicAdd(total, decision, 0);
    emitLastBlockDecision(e, grid, limit, decision);
    return;
  }
  {
    OpBuilder::InsertionGuard g(b);
    e.openIf(e.eq(arith::RemUIOp::create(b, loc, lane, e.idx(32)), e.idx(0)));
    e.atomicAdd(warpSum, decision, 0);
    // Release the count before the block's ticket below.
    NVVM::MembarOp::create(b, loc, NVVM::MemScopeKind::GPU);
  }
  gpu::BarrierOp::create(b, loc);
  OpBuilder::InsertionGuard g(b);
  e.openIf(e.eq(lane, e.idx(0)));
  // With the barrier before it, the fence orders the block's counts before
  // its ticket.
  emitLastBlockDecision(e, grid, limit, decision);
}

void mlir::snn::emitHostCountDecision(OpBuilder &b, Location loc, Value count,
                                      Value rangeItems, int64_t items,
                                      Value limit, Value decision) {
  OpKernelSpec none;
  EventEmitter e(b, loc, none);
  OpBuilder::InsertionGuard g(b);
  // An empty range (past the items) takes no ticket.
  e.openIf(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                 rangeItems, e.i32(0)));
  e.atomicAdd(count, decision, 0);
  // Sequentially consistent atomics: every range's count is in word 0
  // before its items are in the ticket.
  Value before = e.atomicAdd(rangeItems, decision, 1);
  e.openIf(e.eq(arith::AddIOp::create(b, loc, before, rangeItems),
                e.i32(items)));
  e.storeDecision(e.atomicAdd(e.i32(0), decision, 0), limit, decision);
}

/// spike_density on the GPU: a grid of blocks over the input, each thread
/// counting a strided (coalesced) share; one warp reduction and one atomic
/// add per warp into word 0, which the op zeroes before the launch. The
/// last block to finish (a ticket in word 1, also zeroed) writes the
/// decision. Integer sums: the count does not depend on the order.
static void emitDensityGPU(EventEmitter &e, ValueRange args, Value block,
                           Value lane, Value warpSums) {
  Value x = args[0], limit = args[1], decision = args[2];
  int64_t grid = getDensityGridSize(e.spec);
  Value first = e.addI(e.mulI(block, e.idx(kOpKernelBlockSize)), lane);
  // 8 loads in flight per thread: with one, each waited for the last (the
  // SHD input's 9M floats: 30 -> 26 us on an H200,
  // bench/results/2026-12-02-H200-density-transpose.md).
  Value count = e.countNonzeros(x, first, grid * kOpKernelBlockSize,
                                /*unroll=*/8);
  emitGPUCountDecision(e.b, e.loc, count, lane, grid, limit, decision,
                       warpSums);
}

Value mlir::snn::emitWarpCompaction(
    OpBuilder &b, Location loc, Value x, Value rowStart, Value begin,
    int64_t span, int64_t length, Value laneInWarp, int64_t unroll,
    function_ref<void(Value j, Value value, Value slot)> store,
    function_ref<Value(Value value)> listed, int64_t width) {
  assert((width == 1 || width == 4) && "scalars or 16-byte vectors");
  assert(span % (32 * width * unroll) == 0 && length % width == 0 &&
         "whole groups and vectors");
  OpKernelSpec none;
  EventEmitter e(b, loc, none);
  Type i32Type = b.getI32Type();
  auto vecType = VectorType::get({width}, b.getF32Type());
  Value lowerLanes = arith::SubIOp::create(
      b, loc,
      arith::ShLIOp::create(
          b, loc, e.i32(1),
          arith::IndexCastUIOp::create(b, loc, i32Type, laneInWarp)),
      e.i32(1));
  auto popcount = [&](Value v) {
    return LLVM::CtPopOp::create(b, loc, i32Type, v).getResult();
  };
  int64_t group = 32 * width;
  auto groups = scf::ForOp::create(b, loc, begin, e.addI(begin, e.idx(span)),
                                   e.idx(group * unroll), ValueRange{e.i32(0)});
  OpBuilder::InsertionGuard inner(b);
  b.setInsertionPointToStart(groups.getBody());
  Value found = groups.getRegionIterArg(0);
  SmallVector<Value> js, loaded, inRanges;
  Value laneStart = e.mulI(laneInWarp, e.idx(width));
  for (int64_t u = 0; u < unroll; ++u) {
    // length is a multiple of the width: a vector is all in range or out.
    Value j =
        e.addI(groups.getInductionVar(), e.addI(laneStart, e.idx(group * u)));
    Value inRange = e.ult(j, e.idx(length));
    Value jc =
        arith::SelectOp::create(b, loc, inRange, j, e.idx(length - width));
    js.push_back(j);
    inRanges.push_back(inRange);
    Value at = e.addI(rowStart, jc);
    loaded.push_back(width == 1 ? e.load(x, at)
                                : vector::LoadOp::create(b, loc, vecType, x,
                                                         ValueRange{at},
                                                         /*nontemporal=*/false,
                                                         llvm::MaybeAlign(16))
                                      .getResult());
  }
  for (int64_t u = 0; u < unroll; ++u) {
    // Element c of lane l goes after the group's listed elements of the
    // lower lanes (a ballot per element of the lanes' vectors) and lane
    // l's own listed elements before c: element order.
    Value groupStart = found, rank = e.i32(0);
    SmallVector<Value> values, actives;
    for (int64_t c = 0; c < width; ++c) {
      Value v =
          width == 1
              ? loaded[u]
              : vector::ExtractOp::create(b, loc, loaded[u], c).getResult();
      Value chosen =
          listed ? listed(v)
                 : arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                         e.f32(0.0));
      Value active = arith::AndIOp::create(b, loc, inRanges[u], chosen);
      Value ballot = NVVM::VoteSyncOp::create(
          b, loc, i32Type, e.i32(-1), active, NVVM::VoteSyncKind::ballot);
      rank = e.addI(
          rank, popcount(arith::AndIOp::create(b, loc, ballot, lowerLanes)));
      found = e.addI(found, popcount(ballot));
      values.push_back(v);
      actives.push_back(active);
    }
    Value slot = e.addI(groupStart, rank);
    for (int64_t c = 0; c < width; ++c) {
      {
        OpBuilder::InsertionGuard guard(b);
        e.openIf(actives[c]);
        store(e.addI(js[u], e.idx(c)), values[c], slot);
      }
      if (c + 1 < width)
        slot =
            e.addI(slot, arith::ExtUIOp::create(b, loc, i32Type, actives[c]));
    }
  }
  scf::YieldOp::create(b, loc, ValueRange{found});
  return groups.getResult(0);
}

static Value emitWarpBitsCompaction(EventEmitter &e, Value words, Value row,
                                    int64_t k, Value laneInWarp, Value columns,
                                    Value rowStart);

namespace {
/// The event lists of the compacted GPU forms (EventRowLayout): each warp
/// lists the nonzero inputs of its segment of a row's chunk in shared
/// memory (ballot, then each active lane's rank = popcount of the lower
/// lanes' bits), in input order; the block then folds over the lists,
/// segments in order.
class RowCompactor {
public:
  RowCompactor(EventEmitter &e, const EventRowLayout &layout, Value list,
               Value counts, Value lane)
      : e(e), b(e.b), loc(e.loc), layout(layout), list(list), counts(counts) {
    warp = arith::DivUIOp::create(b, loc, lane, e.idx(32));
    laneInWarp = arith::RemUIOp::create(b, loc, lane, e.idx(32));
    listBase = e.mulI(warp, e.idx(layout.segment));
  }

  /// Lists the nonzero x[rowStart + i] for i in the warp's segment of the
  /// chunk that starts at `chunkStart` (i < length), then the barrier.
  /// Up to 4 groups of 32 inputs per iteration (a warp scanning a long
  /// segment would wait one load latency per 32 inputs).
  void compact(Value x, Value rowStart, int64_t length, Value chunkStart) {
    // 128 inputs a group as one 16-byte load a lane where rows are whole
    // vectors, and up to 8 groups' loads issued before the first is
    // listed: one group an iteration waited a load latency per 128 inputs
    // (the SHD readout's row, 6 groups per warp, 43.7 us on an H100).
    bool vectors = layout.segment % 128 == 0 && length % 4 == 0;
    int64_t unroll = layout.segment % 128 == 0 ? 4
                     : layout.segment % 64 == 0 ? 2
                                                : 1;
    if (vectors) {
      int64_t groups = layout.segment / 128;
      unroll = getLargestDivisorAtMost(groups, std::min<int64_t>(groups, 8));
    }
    Value found = emitWarpCompaction(
        b, loc, x, rowStart, e.addI(chunkStart, listBase), layout.segment,
        length, laneInWarp, unroll,
        [&](Value j, Value, Value slot) {
          e.store(arith::IndexCastUIOp::create(b, loc, b.getI32Type(), j),
                  list, e.addI(listBase, e.toIndex(slot)));
        },
        nullptr, vectors ? 4 : 1);
    {
      OpBuilder::InsertionGuard store(b);
      e.openIf(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     laneInWarp, e.idx(0)));
      e.store(found, counts, warp);
    }
    gpu::BarrierOp::create(b, loc);
  }

  /// The same lists from a row of bits (spec.xBits: K / 32 words a row,
  /// K within one chunk): the first warp lists the whole row
  /// (emitWarpBitsCompaction), the others none; then the barrier.
  void compactBits(Value words, Value row, int64_t k) {
    assert(layout.listWords() >= k && "the row's list in one chunk");
    Type i32Type = b.getI32Type();
    auto first = scf::IfOp::create(b, loc, TypeRange{i32Type},
                                   e.eq(warp, e.idx(0)),
                                   /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard branch(b);
      b.setInsertionPointToStart(first.thenBlock());
      scf::YieldOp::create(b, loc,
                           ValueRange{emitWarpBitsCompaction(
                               e, words, row, k, laneInWarp, list, e.idx(0))});
      b.setInsertionPointToStart(first.elseBlock());
      scf::YieldOp::create(b, loc, ValueRange{e.i32(0)});
    }
    {
      OpBuilder::InsertionGuard store(b);
      e.openIf(e.eq(laneInWarp, e.idx(0)));
      e.store(first.getResult(0), counts, warp);
    }
    gpu::BarrierOp::create(b, loc);
  }

  /// Folds `body(j, values)` over the listed inputs j, segments in order.
  SmallVector<Value>
  fold(ValueRange init,
       function_ref<SmallVector<Value>(Value j, ValueRange values)> body) {
    auto segments = scf::ForOp::create(b, loc, e.idx(0),
                                       e.idx(layout.warps()), e.idx(1), init);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(segments.getBody());
    Value w = segments.getInductionVar();
    Value base = e.mulI(w, e.idx(layout.segment));
    auto inputs = scf::ForOp::create(b, loc, e.idx(0),
                                     e.toIndex(e.load(counts, w)), e.idx(1),
                                     segments.getRegionIterArgs());
    {
      OpBuilder::InsertionGuard loopBody(b);
      b.setInsertionPointToStart(inputs.getBody());
      Value j = e.toIndex(e.load(list, e.addI(base, inputs.getInductionVar())));
      scf::YieldOp::create(b, loc, body(j, inputs.getRegionIterArgs()));
    }
    scf::YieldOp::create(b, loc, inputs.getResults());
    return llvm::to_vector_of<Value>(segments.getResults());
  }

private:
  EventEmitter &e;
  OpBuilder &b;
  Location loc;
  const EventRowLayout &layout;
  Value list, counts, warp, laneInWarp, listBase;
};
} // namespace

/// event_linear on the GPU, compacted form (EventRowLayout): block = row.
/// Each warp compacts the nonzero inputs of its segment of the row into a
/// shared index list (RowCompactor); after a barrier each thread sums the
/// transposed weight rows of the listed inputs for `width` adjacent output
/// features (one 16-byte load per input when width = 4), the segments in
/// order: the same order as the host form and the per-tile form. A long
/// row repeats this per chunk, a barrier before the list is overwritten,
/// and sums with compensation.
static void emitCompactedEventLinearGPU(EventEmitter &e, ValueRange args,
                                        const EventRowLayout &layout,
                                        Value list, Value counts, Value row,
                                        Value lane) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  const OpKernelSpec &spec = e.spec;
  int64_t k = spec.inFeatures, n = spec.outFeatures;
  Value x = args[0], wt = args[1], decision = args[args.size() - 2];
  OpBuilder::InsertionGuard g(b);
  // The decision is the same for the whole block: the barriers below are
  // reached by every thread or by none.
  e.openIf(e.eventPathChosen(decision));
  RowCompactor lists(e, layout, list, counts, lane);
  Value rowStart = e.mulI(row, e.idx(k));

  auto vecType = VectorType::get({layout.width}, b.getF32Type());
  llvm::MaybeAlign align(layout.width * 4);
  auto loadVec = [&](Value memref, Value at) {
    return vector::LoadOp::create(b, loc, vecType, memref, ValueRange{at},
                                  /*nontemporal=*/false, align)
        .getResult();
  };
  // sums + the listed inputs' x[row, j] * wt[j, col...], segments in
  // order. sums is {sum} or, for a chunked row, {sum, compensation}: a
  // weight gradient's sum runs over up to T * B events, where plain
  // summation's rounding grows with the count; compensated (Kahan) sums
  // stay as close to the exact sum as the dense GEMM's.
  auto accumulate = [&](ValueRange sums, Value col) {
    return lists.fold(sums, [&](Value j, ValueRange acc) -> SmallVector<Value> {
      // A set bit is a spike of 1: 1 w = w, the same bits.
      Value xv = spec.xBits ? Value()
                            : vector::BroadcastOp::create(
                                  b, loc, vecType,
                                  e.load(x, e.addI(rowStart, j)))
                                  .getResult();
      Value wv = loadVec(wt, e.addI(e.mulI(j, e.idx(n)), col));
      Value term = xv ? arith::MulFOp::create(b, loc, xv, wv).getResult() : wv;
      if (acc.size() == 1)
        return {arith::AddFOp::create(b, loc, acc[0], term)};
      auto [t, lost] = e.kahanAdd(acc[0], acc[1], term);
      return {t, lost};
    });
  };
  auto storeRow = [&](Value acc, Value col) {
    if (spec.hasBias)
      acc = arith::AddFOp::create(b, loc, acc, loadVec(args[2], col));
    vector::StoreOp::create(b, loc, acc, args.back(),
                            ValueRange{e.addI(e.mulI(row, e.idx(n)), col)},
                            /*nontemporal=*/false, align);
  };
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vecType, b.getF32FloatAttr(0.0f)));
  int64_t groups = n / layout.width;
  assert((!spec.xBits || layout.chunks == 1) && "row bits in one chunk");
  if (layout.chunks == 1) {
    if (spec.xBits)
      lists.compactBits(x, row, k);
    else
      lists.compact(x, rowStart, k, e.idx(0));
    auto columns = scf::ForOp::create(b, loc, lane, e.idx(groups),
                                      e.idx(layout.threads));
    b.setInsertionPointToStart(columns.getBody());
    Value col = e.mulI(columns.getInductionVar(), e.idx(layout.width));
    storeRow(accumulate(ValueRange{zero}, col)[0], col);
    return;
  }
  // One group of outputs per thread (getEventRowLayout); threads past the
  // last group read column 0 and store nothing.
  Value inRange = e.ult(lane, e.idx(groups));
  Value col = arith::SelectOp::create(
      b, loc, inRange, e.mulI(lane, e.idx(layout.width)), e.idx(0));
  SmallVector<Value> sums = e.chunkLoop(
      layout, ValueRange{zero, zero}, [&](Value chunkStart, ValueRange acc) {
        lists.compact(x, rowStart, k, chunkStart);
        return accumulate(acc, col);
      });
  e.openIf(inRange);
  storeRow(sums[0], col);
}

/// event_weight_grad_bits on the GPU: block = output row j of gw, its
/// events (the nonzero gy^T[j, r]) listed by RowCompactor in chunks; thread
/// t owns the columns t, t + threads, ... of gw[j, :]. Per listed event r a
/// thread reads the word holding bit (r, k) of each of its columns: the 32
/// lanes of a warp read consecutive bits, one or two words (a broadcast),
/// instead of a float each. Sums in event order, compensated, a set bit
/// at a time (x's value at it too when x is not binary).
static void emitEventWeightGradBitsGPU(EventEmitter &e, ValueRange args,
                                       const EventRowLayout &layout,
                                       Value list, Value counts, Value row,
                                       Value lane) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  const OpKernelSpec &spec = e.spec;
  int64_t events = spec.inFeatures, k = spec.outFeatures;
  Value gyT = args[0], words = args[1], decision = args[args.size() - 2];
  Value x = spec.xValues ? args[2] : Value();
  OpBuilder::InsertionGuard g(b);
  e.openIf(e.eventPathChosen(decision));
  RowCompactor lists(e, layout, list, counts, lane);
  Value rowStart = e.mulI(row, e.idx(events));
  // The thread's columns; only the last may run past K (then clamped to
  // column 0, its bits never counted).
  SmallVector<Value> cols, valid;
  for (int64_t c = 0; c < layout.columns; ++c) {
    Value col = e.addI(lane, e.idx(c * layout.threads));
    Value inRange;
    if ((c + 1) * layout.threads > k) {
      inRange = e.ult(col, e.idx(k));
      col = arith::SelectOp::create(b, loc, inRange, col, e.idx(0));
    }
    cols.push_back(col);
    valid.push_back(inRange);
  }
  SmallVector<Value> init(2 * layout.columns, e.f32(0.0));
  SmallVector<Value> sums = e.chunkLoop(
      layout, init, [&](Value chunkStart, ValueRange acc) {
        lists.compact(gyT, rowStart, events, chunkStart);
        return lists.fold(acc, [&](Value r, ValueRange sums) {
          Value gv = e.load(gyT, e.addI(rowStart, r));
          Value first = e.mulI(r, e.idx(k));
          SmallVector<Value> next;
          for (int64_t c = 0; c < layout.columns; ++c) {
            Value bit = e.addI(first, cols[c]);
            Value set = e.bitIsSet(words, bit);
            if (valid[c])
              set = arith::AndIOp::create(b, loc, set, valid[c]);
            Value term = spec.xValues ? e.valueAtSetBit(gv, x, bit, set) : gv;
            auto [t, lost] = e.kahanAdd(sums[2 * c], sums[2 * c + 1], term);
            // An unset bit leaves both the sum and its compensation.
            next.push_back(arith::SelectOp::create(b, loc, set, t, sums[2 * c]));
            next.push_back(
                arith::SelectOp::create(b, loc, set, lost, sums[2 * c + 1]));
          }
          return next;
        });
      });
  Value gw = args.back();
  for (int64_t c = 0; c < layout.columns; ++c) {
    OpBuilder::InsertionGuard store(b);
    if (valid[c])
      e.openIf(valid[c]);
    e.store(sums[2 * c], gw, e.addI(e.mulI(row, e.idx(k)), cols[c]));
  }
}

/// compact_rows of a row of spikes given as bits (spec.xBits: K / 32 u32
/// words a row): the warp's lanes load the row's words at once (32 a
/// round), then per word, in order, every lane takes bit `lane` of it from
/// a shuffle, and a set bit's slot is the count so far plus the popcount of
/// the lower lanes' bits, as emitWarpCompaction's ballot gives for floats:
/// the same lists. Every lane must call it; returns the count (i32).
static Value emitWarpBitsCompaction(EventEmitter &e, Value words, Value row,
                                    int64_t k, Value laneInWarp, Value columns,
                                    Value rowStart) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Type i32Type = b.getI32Type();
  int64_t rowWords = k / kBitsPerWord;
  Value lane32 = arith::IndexCastUIOp::create(b, loc, i32Type, laneInWarp);
  Value lowerLanes = arith::SubIOp::create(
      b, loc, arith::ShLIOp::create(b, loc, e.i32(1), lane32), e.i32(1));
  auto popcount = [&](Value v) {
    return LLVM::CtPopOp::create(b, loc, i32Type, v).getResult();
  };
  Value wordStart = e.mulI(row, e.idx(rowWords));
  SmallVector<Value> loaded;
  for (int64_t r = 0; r * 32 < rowWords; ++r) {
    Value w = e.addI(laneInWarp, e.idx(32 * r));
    Value inRange = e.ult(w, e.idx(rowWords));
    Value wc = arith::SelectOp::create(b, loc, inRange, w, e.idx(rowWords - 1));
    Value word = e.load(words, e.addI(wordStart, wc));
    loaded.push_back(arith::SelectOp::create(b, loc, inRange, word, e.i32(0)));
  }
  Value found = e.i32(0);
  for (int64_t w = 0; w < rowWords; ++w) {
    Value word = NVVM::ShflOp::create(
        b, loc, i32Type, e.i32(-1), loaded[w / 32], e.i32(w % 32), e.i32(0x1f),
        NVVM::ShflKind::idx, UnitAttr());
    Value bit = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, word, lane32), e.i32(1));
    Value rank = popcount(arith::AndIOp::create(b, loc, word, lowerLanes));
    {
      OpBuilder::InsertionGuard guard(b);
      e.openIf(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, bit,
                                     e.i32(0)));
      Value column =
          arith::AddIOp::create(b, loc, lane32, e.i32(w * kBitsPerWord));
      e.store(column, columns,
              e.addI(rowStart, e.toIndex(e.addI(found, rank))));
    }
    found = e.addI(found, popcount(word));
  }
  return found;
}

/// compact_rows on the GPU: a warp per row of x [M, K], up to 512 columns
/// per round of loads (emitWarpCompaction: coalesced loads, a ballot per 32,
/// each nonzero's slot from the popcount of the lower lanes' bits). The
/// list holds the row's
/// nonzero columns in column order (and their values), then -1 unless the
/// row is full: a reader finds the end in the slots it loads anyway.
static void emitCompactRowsGPU(EventEmitter &e, ValueRange args, Value block,
                               Value lane, Value warpSums) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  const OpKernelSpec &spec = e.spec;
  int64_t m = spec.rows, k = spec.inFeatures;
  Type i32Type = b.getI32Type();
  unsigned counts = spec.countsNonzeros;
  Value x = args[0], decision = args[1 + counts], columns = args[2 + counts];
  Value values = spec.xValues ? args[3 + counts] : Value();
  OpBuilder::InsertionGuard g(b);
  // Counting, it writes the decision (always the event path: its layer
  // has no other); else it runs only on the event path.
  if (!counts)
    e.openIf(e.eventPathChosen(decision));
  Value warp = arith::DivUIOp::create(b, loc, lane, e.idx(32));
  Value laneInWarp = arith::RemUIOp::create(b, loc, lane, e.idx(32));
  Value row = e.addI(e.mulI(block, e.idx(kOpKernelBlockSize / 32)), warp);
  // Whole warps only: the ballots below need every lane. The row's count
  // comes out of the branch: every thread of the block reaches the count's
  // barrier.
  auto inRows =
      scf::IfOp::create(b, loc, TypeRange{i32Type}, e.ult(row, e.idx(m)),
                        /*withElseRegion=*/true);
  b.setInsertionPointToStart(inRows.elseBlock());
  scf::YieldOp::create(b, loc, ValueRange{e.i32(0)});
  b.setInsertionPointToStart(inRows.thenBlock());
  // Up to 16 groups of 32 columns per load round, as few rounds as that
  // allows, the groups spread evenly over them: a round waits for its
  // loads once (a row of 1472 floats in 3 rounds instead of 12).
  // Rows of whole 16-byte vectors: groups of 128 columns, up to 8 a round
  // (a row of 700 floats in one round of 6 loads a lane instead of two of
  // 11).
  bool vectors = k % 4 == 0;
  int64_t width = vectors ? 4 : 1;
  int64_t kMaxGroupsPerRound = vectors ? 8 : 16;
  int64_t groups = llvm::divideCeilSigned(k, 32 * width);
  int64_t rounds = llvm::divideCeilSigned(groups, kMaxGroupsPerRound);
  int64_t unroll = llvm::divideCeilSigned(groups, rounds);
  Value rowStart = e.mulI(row, e.idx(k));
  Value found =
      spec.xBits
          ? emitWarpBitsCompaction(e, x, row, k, laneInWarp, columns, rowStart)
          : emitWarpCompaction(
                b, loc, x, rowStart, e.idx(0), rounds * unroll * 32 * width, k,
                laneInWarp, unroll,
                [&](Value j, Value xv, Value slot) {
                  Value at = e.addI(rowStart, e.toIndex(slot));
                  e.store(arith::IndexCastUIOp::create(b, loc, i32Type, j),
                          columns, at);
                  if (values)
                    e.store(xv, values, at);
                },
                nullptr, width);
  Value count = e.toIndex(found);
  {
    OpBuilder::InsertionGuard end(b);
    e.openIf(arith::AndIOp::create(b, loc, e.eq(laneInWarp, e.idx(0)),
                                   e.ult(count, e.idx(k))));
    e.store(e.i32(-1), columns, e.addI(rowStart, count));
  }
  scf::YieldOp::create(b, loc, ValueRange{found});
  if (!spec.countsNonzeros)
    return;
  b.setInsertionPointAfter(inRows);
  // A row's count once (lane 0 of its warp), then the block's sum as
  // spike_density's.
  Value mine = arith::SelectOp::create(b, loc, e.eq(laneInWarp, e.idx(0)),
                                       inRows.getResult(0), e.i32(0));
  emitGPUCountDecision(b, loc, mine, lane, getEventKernelGridSize(spec),
                       args[1], decision, warpSums);
}

/// event_weight_grad_lists on the GPU: block = row j of gw, a shared
/// accumulator row of K floats per warp. The events (the rows r with
/// gy[r, j] != 0) of each warp's segment of each chunk of rows come either
/// from gy^T[j, :], listed by RowCompactor in shared memory, or
/// (columnSegment) from compact_columns' lists of gy's column j, read 32
/// slots at a time (up to the first -1); a warp then takes its events in
/// order and, per event r, adds g = gy[r, j] (times x's value) at the
/// columns listed for x's row r:
/// O(nonzeros of x[r, :]) per event, not O(K). A row's columns are
/// distinct, so the lanes of one event never collide; a warp barrier orders
/// one event's adds before the next one's. At the end the block adds the
/// warps' rows in warp order: no atomics, the same sums every run, and the
/// same sums from either source of events.
static void emitEventWeightGradListsGPU(EventEmitter &e, ValueRange args,
                                        const EventRowLayout &layout,
                                        Value list, Value counts, Value acc,
                                        Value row, Value lane) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  const OpKernelSpec &spec = e.spec;
  int64_t events = spec.inFeatures, k = spec.outFeatures;
  int64_t columnSegment = spec.columnSegment;
  Type i32Type = b.getI32Type();
  // gy^T [N, M], or gy [M, N] and its column lists.
  Value gyIn = args[0];
  Value gyRows = columnSegment ? args[1] : Value();
  unsigned xAt = columnSegment ? 2 : 1;
  Value xColumns = args[xAt];
  Value xValues = spec.xValues ? args[xAt + 1] : Value();
  Value decision = args[args.size() - 2], gw = args.back();
  OpBuilder::InsertionGuard g(b);
  e.openIf(e.eventPathChosen(decision));
  auto strided = [&](int64_t count, function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lane, e.idx(count),
                                   e.idx(layout.threads));
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  };
  strided(layout.accumulators,
          [&](Value i) { e.store(e.f32(0.0), acc, i); });
  gpu::BarrierOp::create(b, loc);
  Value warp = arith::DivUIOp::create(b, loc, lane, e.idx(32));
  Value laneInWarp = arith::RemUIOp::create(b, loc, lane, e.idx(32));
  Value accRow = e.mulI(warp, e.idx(k));
  Value rowStart = e.mulI(row, e.idx(events));
  Value listBase = e.mulI(warp, e.idx(layout.segment));
  Value lowerLanes = arith::SubIOp::create(
      b, loc,
      arith::ShLIOp::create(b, loc, e.i32(1),
                            arith::IndexCastUIOp::create(b, loc, i32Type,
                                                         laneInWarp)),
      e.i32(1));
  auto notI1 = [&](Value v) {
    return arith::XOrIOp::create(
               b, loc, v,
               arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1))
        .getResult();
  };
  // Adds g (times the value) at the listed columns among 32 loaded slots
  // that come before the list's end (-1 or slot K); the ends' ballot.
  auto addSlots = [&](Value g, Value column, Value value, Value inRow) {
    Value end = arith::OrIOp::create(
        b, loc, notI1(inRow),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, column,
                              e.i32(0)));
    Value ends = NVVM::VoteSyncOp::create(b, loc, i32Type, e.i32(-1), end,
                                          NVVM::VoteSyncKind::ballot);
    Value listed = arith::AndIOp::create(
        b, loc,
        e.eq(arith::AndIOp::create(b, loc, ends, lowerLanes), e.i32(0)),
        notI1(end));
    OpBuilder::InsertionGuard add(b);
    e.openIf(listed);
    Value a = e.addI(accRow, e.toIndex(column));
    Value term = value ? arith::MulFOp::create(b, loc, g, value) : g;
    e.store(arith::AddFOp::create(b, loc, e.load(acc, a), term), acc, a);
    return ends;
  };
  // The warp's events [i, i + kEventsAtOnce) of n (uniform), `event(at)`
  // giving event at's (r, g): the loads of their g and first 32 list slots
  // go out together (they need only the events' rows), then the events add
  // in order.
  constexpr int64_t kEventsAtOnce = 4;
  auto addEvents = [&](Value i, Value n,
                       function_ref<std::pair<Value, Value>(Value)> event) {
    Value last = arith::SubIOp::create(b, loc, n, e.idx(1));
    Value slot0 = arith::MinUIOp::create(b, loc, laneInWarp, e.idx(k - 1));
    Value inRow0 = e.ult(laneInWarp, e.idx(k));
    SmallVector<Value> gs, firsts, columns, values;
    for (int64_t u = 0; u < kEventsAtOnce; ++u) {
      // Past the warp's last event: a repeat of it, loaded but not added.
      Value at = arith::MinUIOp::create(b, loc, e.addI(i, e.idx(u)), last);
      auto [r, gv] = event(at);
      gs.push_back(gv);
      firsts.push_back(e.mulI(r, e.idx(k)));
      Value slot = e.addI(firsts.back(), slot0);
      columns.push_back(e.load(xColumns, slot));
      values.push_back(xValues ? e.load(xValues, slot) : Value());
    }
    for (int64_t u = 0; u < kEventsAtOnce; ++u) {
      OpBuilder::InsertionGuard eventGuard(b);
      if (u > 0) // uniform across the warp
        e.openIf(e.ult(e.addI(i, e.idx(u)), n));
      Value ends = addSlots(gs[u], columns[u], values[u], inRow0);
      if (k > 32) {
        // A list longer than 32: the next 32 slots until its end.
        OpBuilder::InsertionGuard rest(b);
        e.openIf(e.eq(ends, e.i32(0)));
        Value gv = gs[u], first = firsts[u];
        scf::WhileOp::create(
            b, loc, TypeRange{b.getIndexType()}, ValueRange{e.idx(32)},
            [&](OpBuilder &nb, Location l, ValueRange state) {
              Value more = arith::CmpIOp::create(
                  nb, l, arith::CmpIPredicate::ult, state[0],
                  arith::ConstantIndexOp::create(nb, l, k));
              scf::ConditionOp::create(nb, l, more, state);
            },
            [&](OpBuilder &nb, Location l, ValueRange state) {
              OpBuilder::InsertionGuard body(b);
              b.setInsertionPointToStart(nb.getInsertionBlock());
              Value slot = e.addI(state[0], laneInWarp);
              Value inRow = e.ult(slot, e.idx(k));
              Value at = e.addI(first, arith::SelectOp::create(
                                           b, loc, inRow, slot, e.idx(k - 1)));
              Value more = addSlots(gv, e.load(xColumns, at),
                                    xValues ? e.load(xValues, at) : Value(),
                                    inRow);
              // No end among these 32 slots: the next 32 (past K: done).
              Value next = arith::SelectOp::create(
                  b, loc, e.eq(more, e.i32(0)), e.addI(state[0], e.idx(32)),
                  e.idx(k));
              scf::YieldOp::create(b, loc, ValueRange{next});
            });
      }
      // The next event may add at the same columns from other lanes.
      NVVM::SyncWarpOp::create(b, loc, e.i32(-1));
    }
  };
  // The n (uniform) events of the warp, kEventsAtOnce at a time.
  auto eachEvents = [&](Value n,
                        function_ref<std::pair<Value, Value>(Value)> event) {
    auto own = scf::ForOp::create(b, loc, e.idx(0), n, e.idx(kEventsAtOnce));
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(own.getBody());
    addEvents(own.getInductionVar(), n, event);
  };

  if (!columnSegment) {
    RowCompactor lists(e, layout, list, counts, lane);
    // (A dummy loop value: scf.for without one brings its own terminator.)
    e.chunkLoop(layout, ValueRange{e.i32(0)}, [&](Value chunkStart,
                                                 ValueRange carried) {
      lists.compact(gyIn, rowStart, events, chunkStart);
      eachEvents(e.toIndex(e.load(counts, warp)), [&](Value at) {
        Value r = e.toIndex(e.load(list, e.addI(listBase, at)));
        return std::make_pair(r, e.load(gyIn, e.addI(rowStart, r)));
      });
      return SmallVector<Value>{carried[0]};
    });
  } else {
    // The warp's segment of chunk c starts at row (c W + w) segment; its
    // lists are the column's segments of columnSegment rows in it.
    assert(layout.segment % columnSegment == 0 && "segments must nest");
    // gy's row length (gw's rows), not to be confused with an event count.
    int64_t gyWidth = spec.rows;
    auto chunks = scf::ForOp::create(b, loc, e.idx(0), e.idx(layout.chunks),
                                     e.idx(1));
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(chunks.getBody());
      Value segmentStart = e.mulI(
          e.addI(e.mulI(chunks.getInductionVar(), e.idx(layout.warps())),
                 warp),
          e.idx(layout.segment));
      auto parts = scf::ForOp::create(
          b, loc, e.idx(0), e.idx(layout.segment / columnSegment), e.idx(1));
      b.setInsertionPointToStart(parts.getBody());
      Value first = e.addI(
          segmentStart, e.mulI(parts.getInductionVar(), e.idx(columnSegment)));
      // Uniform across the warp.
      e.openIf(e.ult(first, e.idx(events)));
      Value length = arith::MinUIOp::create(
          b, loc, e.idx(columnSegment),
          arith::SubIOp::create(b, loc, e.idx(events), first));
      Value base = e.addI(rowStart, first);
      Type i1 = b.getI1Type();
      scf::WhileOp::create(
          b, loc, TypeRange{b.getIndexType(), i1},
          ValueRange{e.idx(0), arith::ConstantIntOp::create(b, loc, i1, 1)},
          [&](OpBuilder &nb, Location l, ValueRange state) {
            OpBuilder::InsertionGuard cond(b);
            b.setInsertionPointToStart(nb.getInsertionBlock());
            Value more = arith::AndIOp::create(b, loc, state[1],
                                               e.ult(state[0], length));
            scf::ConditionOp::create(b, loc, more, state);
          },
          [&](OpBuilder &nb, Location l, ValueRange state) {
            OpBuilder::InsertionGuard body(b);
            b.setInsertionPointToStart(nb.getInsertionBlock());
            // 32 slots: the listed rows, then -1 or the segment's end (the
            // slots after the -1 were never written: the first end ends
            // the list).
            Value slot = e.addI(state[0], laneInWarp);
            Value inList = e.ult(slot, length);
            Value at = e.addI(base, arith::SelectOp::create(
                                        b, loc, inList, slot, e.idx(0)));
            Value listed = e.load(gyRows, at);
            Value end = notI1(arith::AndIOp::create(
                b, loc, inList,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                      listed, e.i32(0))));
            // The lanes before the first end (32 when there is none).
            Value found = LLVM::CountTrailingZerosOp::create(
                b, loc, i32Type,
                NVVM::VoteSyncOp::create(b, loc, i32Type, e.i32(-1), end,
                                         NVVM::VoteSyncKind::ballot),
                /*is_zero_poison=*/false);
            Value valid = e.ult(
                arith::IndexCastUIOp::create(b, loc, i32Type, laneInWarp),
                found);
            Value r = e.toIndex(
                arith::SelectOp::create(b, loc, valid, listed, e.i32(0)));
            Value gv = e.load(gyIn, e.addI(e.mulI(r, e.idx(gyWidth)), row));
            Value ri = arith::IndexCastUIOp::create(b, loc, i32Type, r);
            auto fromLane = [&](Value v, Value src) -> Value {
              return NVVM::ShflOp::create(
                  b, loc, v.getType(), e.i32(-1), v,
                  arith::IndexCastUIOp::create(b, loc, i32Type, src),
                  e.i32(0x1f), NVVM::ShflKind::idx, UnitAttr());
            };
            eachEvents(e.toIndex(found), [&](Value at) {
              return std::make_pair(e.toIndex(fromLane(ri, at)),
                                    fromLane(gv, at));
            });
            scf::YieldOp::create(
                b, loc,
                ValueRange{e.addI(state[0], e.idx(32)),
                           e.eq(found, e.i32(32))});
          });
    }
    gpu::BarrierOp::create(b, loc);
  }
  strided(k, [&](Value col) {
    Value sum = e.load(acc, col);
    for (int64_t w = 1; w < layout.warps(); ++w)
      sum = arith::AddFOp::create(b, loc, sum,
                                  e.load(acc, e.addI(col, e.idx(w * k))));
    e.store(sum, gw, e.addI(e.mulI(row, e.idx(k)), col));
  });
}

namespace {
/// A compact_columns warp's task: a segment of columnSegment rows of gy
/// [M, N] and a strip of 32 columns (the lane's column), neighbouring warps
/// on neighbouring strips of the same rows.
struct ColumnTask {
  Value first, strip, column, length, listStart;
};
} // namespace

/// Opens `if` around the warp's compact_columns task (the event path
/// chosen, a task left: whole warps) and returns it.
static ColumnTask openColumnTask(EventEmitter &e, Value decision, Value block,
                                 Value lane) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  int64_t m = e.spec.rows, segment = e.spec.columnSegment;
  int64_t strips = llvm::divideCeilSigned(e.spec.inFeatures, 32);
  int64_t segments = llvm::divideCeilSigned(m, segment);
  e.openIf(e.eventPathChosen(decision));
  Value task = e.addI(e.mulI(block, e.idx(kOpKernelBlockSize / 32)),
                      arith::DivUIOp::create(b, loc, lane, e.idx(32)));
  e.openIf(e.ult(task, e.idx(strips * segments)));
  ColumnTask t;
  t.first = e.mulI(arith::DivUIOp::create(b, loc, task, e.idx(strips)),
                   e.idx(segment));
  t.strip = arith::RemUIOp::create(b, loc, task, e.idx(strips));
  t.column = e.addI(e.mulI(t.strip, e.idx(32)),
                    arith::RemUIOp::create(b, loc, lane, e.idx(32)));
  t.length = arith::MinUIOp::create(
      b, loc, e.idx(segment), arith::SubIOp::create(b, loc, e.idx(m), t.first));
  t.listStart = e.addI(e.mulI(t.column, e.idx(m)), t.first);
  return t;
}

/// compact_columns on the GPU: a warp per (segment of columnSegment rows,
/// 32 columns) of gy [M, N], a lane per column: 8 rows of coalesced loads
/// at once, each lane appending its column's nonzero rows in order, then -1
/// unless the segment is full. No lane waits for another.
static void emitCompactColumnsGPU(EventEmitter &e, ValueRange args,
                                  Value block, Value lane) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  const OpKernelSpec &spec = e.spec;
  int64_t n = spec.inFeatures, segment = spec.columnSegment;
  // 8 rows of loads in flight per lane (32 measured no faster on an H100,
  // bench/results/2026-11-27-H100-backward-columns.md).
  constexpr int64_t kRowsAtOnce = 8;
  Type i32Type = b.getI32Type();
  Value gy = args[0], rows = args[2];
  OpBuilder::InsertionGuard g(b);
  ColumnTask task = openColumnTask(e, args[1], block, lane);
  Value first = task.first, j = task.column, length = task.length,
        listStart = task.listStart;
  Value inColumn = e.ult(j, e.idx(n));
  Value jc = arith::MinUIOp::create(b, loc, j, e.idx(n - 1));
  auto loop = scf::ForOp::create(b, loc, e.idx(0), e.idx(segment),
                                 e.idx(kRowsAtOnce), ValueRange{e.idx(0)});
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i0 = loop.getInductionVar();
    SmallVector<Value> inRows, values;
    for (int64_t u = 0; u < kRowsAtOnce; ++u) {
      Value i = e.addI(i0, e.idx(u));
      inRows.push_back(e.ult(i, length));
      Value r = e.addI(first, arith::SelectOp::create(b, loc, inRows.back(),
                                                      i, e.idx(0)));
      values.push_back(e.load(gy, e.addI(e.mulI(r, e.idx(n)), jc)));
    }
    Value count = loop.getRegionIterArg(0);
    for (int64_t u = 0; u < kRowsAtOnce; ++u) {
      Value set = arith::AndIOp::create(
          b, loc, arith::AndIOp::create(b, loc, inRows[u], inColumn),
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, values[u],
                                e.f32(0.0)));
      {
        OpBuilder::InsertionGuard store(b);
        e.openIf(set);
        Value r = e.addI(first, e.addI(i0, e.idx(u)));
        e.store(arith::IndexCastUIOp::create(b, loc, i32Type, r), rows,
                e.addI(listStart, count));
      }
      count = e.addI(count, arith::IndexCastUIOp::create(
                                b, loc, b.getIndexType(),
                                arith::ExtUIOp::create(b, loc, i32Type, set)));
    }
    scf::YieldOp::create(b, loc, ValueRange{count});
  }
  Value count = loop.getResult(0);
  e.openIf(arith::AndIOp::create(b, loc, inColumn, e.ult(count, length)));
  e.store(e.i32(-1), rows, e.addI(listStart, count));
}

/// compact_columns of gy's occupancy bits (spec.xBits: the neuron backward
/// that wrote gy wrote them, N / 32 words a row): a warp per (segment, strip
/// of 32 columns = one word of each row), a lane per column. Per 32 rows the
/// lanes load their row's word, 32 ballots turn the rows' words into each
/// column's mask of rows (lane c keeps ballot c), and each lane appends its
/// set bits in order: the lists of the floats' kernel, from 1/32 of the
/// bytes.
static void emitCompactColumnsBitsGPU(EventEmitter &e, ValueRange args,
                                      Value block, Value lane) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  const OpKernelSpec &spec = e.spec;
  int64_t n = spec.inFeatures, segment = spec.columnSegment;
  int64_t rowWords = n / kBitsPerWord;
  Type i32Type = b.getI32Type();
  Value bits = args[0], rows = args[2];
  OpBuilder::InsertionGuard g(b);
  // Whole warps (the ballots need every lane); the strip is a row's word.
  ColumnTask task = openColumnTask(e, args[1], block, lane);
  Value first = task.first, strip = task.strip, length = task.length,
        listStart = task.listStart;
  Value laneInWarp = arith::RemUIOp::create(b, loc, lane, e.idx(32));
  Value lane32 = arith::IndexCastUIOp::create(b, loc, i32Type, laneInWarp);
  auto loop = scf::ForOp::create(b, loc, e.idx(0), e.idx(segment), e.idx(32),
                                 ValueRange{e.idx(0)});
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i0 = loop.getInductionVar();
    Value i = e.addI(i0, laneInWarp);
    Value inRange = e.ult(i, length);
    Value r =
        e.addI(first, arith::SelectOp::create(b, loc, inRange, i, e.idx(0)));
    Value word = arith::SelectOp::create(
        b, loc, inRange,
        e.load(bits, e.addI(e.mulI(r, e.idx(rowWords)), strip)), e.i32(0));
    Value mask = e.i32(0);
    for (int64_t c = 0; c < 32; ++c) {
      Value set = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(b, loc, word, e.i32(int64_t(1) << c)),
          e.i32(0));
      Value ballot = NVVM::VoteSyncOp::create(b, loc, i32Type, e.i32(-1), set,
                                              NVVM::VoteSyncKind::ballot);
      mask =
          arith::SelectOp::create(b, loc, e.eq(lane32, e.i32(c)), ballot, mask);
    }
    Value rowBase = e.addI(first, i0);
    Value count =
        emitForEachSetBit(
            b, loc, mask, ValueRange{loop.getRegionIterArg(0)},
            [&](Value bit, ValueRange state) -> SmallVector<Value> {
              Value row = e.addI(rowBase, e.toIndex(bit));
              e.store(arith::IndexCastUIOp::create(b, loc, i32Type, row), rows,
                      e.addI(listStart, state[0]));
              return {e.addI(state[0], e.idx(1))};
            })
            .front();
    scf::YieldOp::create(b, loc, ValueRange{count});
  }
  Value count = loop.getResult(0);
  e.openIf(e.ult(count, length));
  e.store(e.i32(-1), rows, e.addI(listStart, count));
}

gpu::GPUFuncOp mlir::snn::buildEventGPUKernel(OpBuilder &b, Location loc,
                                              StringRef name,
                                              const OpKernelSpec &spec) {
  // --snn-compile rejects an event-driven convolution for a GPU target.
  assert(spec.kind != OpKernelKind::EventConv2d &&
         spec.kind != OpKernelKind::EventConv2dWeightGrad &&
         spec.transposeBatch == 1 && "event-driven convolutions: CPU only");
  gpu::GPUFuncOp kernel = createOpGPUKernelFunc(b, loc, name, spec);
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
    kernel.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                      b.getUnitAttr());
  if (spec.kind == OpKernelKind::EventLinearBand) {
    buildEventLinearBandGPU(b, loc, kernel, spec);
    return kernel;
  }
  std::optional<EventRowLayout> layout;
  if (spec.kind == OpKernelKind::EventLinear ||
      spec.kind == OpKernelKind::EventLinearBits ||
      spec.kind == OpKernelKind::EventLinearLists)
    layout = getEventRowLayout(spec);
  BlockArgument list, counts, tile, acc;
  auto shared = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  auto sharedArray = [&](int64_t count, Type type) {
    return MemRefType::get({count}, type, MemRefLayoutAttrInterface(), shared);
  };
  // The lists of events come from shared memory unless compact_columns
  // listed them.
  if (layout && !spec.columnSegment) {
    list = kernel.addWorkgroupAttribution(
        sharedArray(layout->listWords(), b.getI32Type()), loc);
    counts = kernel.addWorkgroupAttribution(
        sharedArray(layout->warps(), b.getI32Type()), loc);
  }
  if (layout && layout->accumulators)
    acc = kernel.addWorkgroupAttribution(
        sharedArray(layout->accumulators, b.getF32Type()), loc);
  // A padded row: the column reads of the tile hit 32 different banks.
  constexpr int64_t kTilePitch = kTransposeTile + 1;
  Value warpSums;
  if (spec.kind == OpKernelKind::SpikeDensity ||
      (spec.kind == OpKernelKind::CompactRows && spec.countsNonzeros))
    warpSums = kernel.addWorkgroupAttribution(
        sharedArray(kOpKernelBlockSize / 32, b.getI32Type()), loc);
  if (spec.kind == OpKernelKind::TransposeWeight)
    tile = kernel.addWorkgroupAttribution(
        sharedArray(kTransposeTile * kTilePitch, b.getF32Type()), loc);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&kernel.front());
  b.getContext()->getOrLoadDialect<NVVM::NVVMDialect>();
  ValueRange args = kernel.getArguments().take_front(
      kernel.getFunctionType().getNumInputs());
  EventEmitter e(b, loc, spec);
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value lane = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value width = e.idx(kOpKernelBlockSize);
  int64_t k = spec.inFeatures, n = spec.outFeatures;
  switch (spec.kind) {
  case OpKernelKind::SpikeDensity:
    emitDensityGPU(e, args, block, lane, warpSums);
    break;
  case OpKernelKind::TransposeWeight: {
    // wt[j * n + o] = w[o * k + j], a 32 x 32 tile per block through
    // shared memory: the reads of w run along j and the writes of wt along
    // o, both coalesced (a thread per element would stride one of them).
    Value decision = args[0], w = args[1], wt = args[2];
    constexpr int64_t tileSide = kTransposeTile;
    constexpr int64_t rowsPerPass = kOpKernelBlockSize / tileSide;
    int64_t tilesJ = llvm::divideCeilSigned(k, tileSide);
    Value o0 = e.mulI(arith::DivUIOp::create(b, loc, block, e.idx(tilesJ)),
                      e.idx(tileSide));
    Value j0 = e.mulI(arith::RemUIOp::create(b, loc, block, e.idx(tilesJ)),
                      e.idx(tileSide));
    Value tx = arith::RemUIOp::create(b, loc, lane, e.idx(tileSide));
    Value ty = arith::DivUIOp::create(b, loc, lane, e.idx(tileSide));
    // The decision is the same for the whole block: all threads or none
    // reach the barrier.
    OpBuilder::InsertionGuard g(b);
    e.openIf(e.eventPathChosen(decision));
    auto passes = [&](function_ref<void(Value)> body) {
      auto loop = scf::ForOp::create(b, loc, e.idx(0), e.idx(tileSide),
                                     e.idx(rowsPerPass));
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(loop.getBody());
      body(e.addI(ty, loop.getInductionVar()));
    };
    auto both = [&](Value x, Value y) {
      return arith::AndIOp::create(b, loc, x, y).getResult();
    };
    // The tile's loads from w go out together (clamped to a valid element,
    // not stored past the edges): a load per pass in a guarded loop waited
    // a memory latency each, 4 per block.
    SmallVector<Value> rows, loaded, valid;
    for (int64_t p = 0; p < tileSide; p += rowsPerPass) {
      Value r = e.addI(ty, e.idx(p));
      Value o = e.addI(o0, r), j = e.addI(j0, tx);
      Value inside = both(e.ult(o, e.idx(n)), e.ult(j, e.idx(k)));
      Value at = arith::SelectOp::create(
          b, loc, inside, e.addI(e.mulI(o, e.idx(k)), j), e.idx(0));
      rows.push_back(r);
      valid.push_back(inside);
      loaded.push_back(e.load(w, at));
    }
    for (size_t p = 0; p < rows.size(); ++p) {
      OpBuilder::InsertionGuard store(b);
      e.openIf(valid[p]);
      e.store(loaded[p], tile, e.addI(e.mulI(rows[p], e.idx(kTilePitch)), tx));
    }
    gpu::BarrierOp::create(b, loc);
    passes([&](Value r) {
      Value j = e.addI(j0, r), o = e.addI(o0, tx);
      e.openIf(both(e.ult(j, e.idx(k)), e.ult(o, e.idx(n))));
      e.store(e.load(tile, e.addI(e.mulI(tx, e.idx(kTilePitch)), r)), wt,
              e.addI(e.mulI(j, e.idx(n)), o));
    });
    break;
  }
  case OpKernelKind::EventLinearBits:
    emitEventWeightGradBitsGPU(e, args, *layout, list, counts, block, lane);
    break;
  case OpKernelKind::ThinWeightGradBits:
    buildThinWeightGradBitsGPU(b, loc, args, block, lane, spec);
    break;
  case OpKernelKind::CompactRows:
    emitCompactRowsGPU(e, args, block, lane, warpSums);
    break;
  case OpKernelKind::CompactColumns:
    if (spec.xBits)
      emitCompactColumnsBitsGPU(e, args, block, lane);
    else
      emitCompactColumnsGPU(e, args, block, lane);
    break;
  case OpKernelKind::EventLinearLists:
    emitEventWeightGradListsGPU(e, args, *layout, list, counts, acc, block,
                                lane);
    break;
  case OpKernelKind::EventLinearTiles:
    emitEventLinearTilesGPU(b, loc, spec, args, block, lane);
    break;
  case OpKernelKind::EventLinear: {
    if (layout) {
      emitCompactedEventLinearGPU(e, args, *layout, list, counts, block, lane);
      break;
    }
    // Block (row, tile): thread t computes output feature tile * 256 + t.
    // Every thread takes part in the warp ballots (threads past the last
    // feature read a valid column and store nothing).
    Value x = args[0], wt = args[1], decision = args[args.size() - 2];
    int64_t tiles = llvm::divideCeilSigned(n, kOpKernelBlockSize);
    Value row = arith::DivUIOp::create(b, loc, block, e.idx(tiles));
    Value tile = arith::RemUIOp::create(b, loc, block, e.idx(tiles));
    Value col = e.addI(e.mulI(tile, width), lane);
    Value inRange = e.ult(col, e.idx(n));
    Value colc = arith::SelectOp::create(b, loc, inRange, col, e.idx(n - 1));
    Value laneInWarp = arith::RemUIOp::create(b, loc, lane, e.idx(32));
    OpBuilder::InsertionGuard g(b);
    e.openIf(e.eventPathChosen(decision));
    Value acc = e.sumNonzeroColumnsGPU(x, wt, row, colc, laneInWarp);
    e.openIf(inRange);
    e.storeOutput(acc, args, row, col);
    break;
  }
  default:
    llvm_unreachable("not an event-driven kernel");
  }
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

/// Work items of the host form: the whole count (one item), tiles of 32
/// input features of the transpose, rows of event_linear.
static int64_t getEventHostItems(const OpKernelSpec &spec) {
  switch (spec.kind) {
  case OpKernelKind::SpikeDensity:
    return 1;
  case OpKernelKind::TransposeWeight:
    return spec.transposeBatch *
           llvm::divideCeilSigned(spec.inFeatures, kTransposeTile);
  case OpKernelKind::CompactColumns:
    return llvm::divideCeilSigned(spec.inFeatures, 32);
  case OpKernelKind::EventLinearTiles:
    return getEventTileCount(spec);
  case OpKernelKind::ThinWeightGradBits:
    return getThinWeightGradSegments(spec);
  case OpKernelKind::EventConv2dWeightGrad:
    return spec.columns.channels;
  default:
    return spec.rows;
  }
}

/// Columns of gw a host row takes at once: their compensations live on the
/// stack.
static constexpr int64_t kHostBitsTile = 4096;

/// event_weight_grad_bits on the CPU: per row j of gw (a work item) and
/// tile of columns, the events r (nonzero gy^T[j, r]) in order; per event
/// the words of x's bits (r, tile), masked to the tile, and a compensated
/// add of g (times x's value) for each set bit (ctz, then clear it).
static void emitEventWeightGradBitsHost(EventEmitter &e, func::FuncOp fn,
                                        ValueRange args) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  const OpKernelSpec &spec = e.spec;
  int64_t events = spec.inFeatures, k = spec.outFeatures;
  int64_t tile = std::min(k, kHostBitsTile);
  Type i32Type = b.getI32Type(), i64Type = b.getI64Type();
  Value gyT = args[0], words = args[1], decision = args[args.size() - 2];
  Value x = spec.xValues ? args[2] : Value(), gw = args.back();
  OpBuilder::InsertionGuard g(b);
  Value lost = memref::AllocaOp::create(
      b, loc, MemRefType::get({tile}, b.getF32Type()));
  e.openIf(e.eventPathChosen(decision));
  auto loop = [&](Value first, Value end) {
    auto op = scf::ForOp::create(b, loc, first, end, e.idx(1));
    b.setInsertionPoint(op.getBody()->getTerminator());
    return op.getInductionVar();
  };
  auto toI64 = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, i64Type, v).getResult();
  };
  Value row = createHostRangeLoop(b, loc, fn, 0, spec.rows).getInductionVar();
  Value outStart = e.mulI(row, e.idx(k));
  {
    OpBuilder::InsertionGuard inner(b);
    Value o = loop(e.idx(0), e.idx(k));
    e.store(e.f32(0.0), gw, e.addI(outStart, o));
  }
  auto tiles = scf::ForOp::create(b, loc, e.idx(0), e.idx(k), e.idx(tile));
  b.setInsertionPoint(tiles.getBody()->getTerminator());
  Value c0 = tiles.getInductionVar();
  Value c1 = arith::MinUIOp::create(b, loc, e.addI(c0, e.idx(tile)), e.idx(k));
  {
    OpBuilder::InsertionGuard inner(b);
    Value i = loop(e.idx(0), e.idx(tile));
    e.store(e.f32(0.0), lost, i);
  }
  Value r = loop(e.idx(0), e.idx(events));
  Value gv = e.load(gyT, e.addI(e.mulI(row, e.idx(events)), r));
  e.openIf(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, gv,
                                 e.f32(0.0)));
  Value rowBits = e.mulI(r, e.idx(k));
  Value first = e.addI(rowBits, c0), last = e.addI(rowBits, c1);
  Value word32 = e.idx(kBitsPerWord);
  Value w = loop(
      arith::DivUIOp::create(b, loc, first, word32),
      e.addI(arith::DivUIOp::create(
                 b, loc, arith::SubIOp::create(b, loc, last, e.idx(1)), word32),
             e.idx(1)));
  // The word's bits in [first, last): ((1 << hi) - 1) & ~((1 << lo) - 1),
  // in 64 bits so that hi = 32 shifts in range.
  Value wordStart = e.mulI(w, word32);
  Value lo = toI64(arith::SubIOp::create(
      b, loc, arith::MaxUIOp::create(b, loc, first, wordStart), wordStart));
  Value hi = toI64(arith::SubIOp::create(
      b, loc,
      arith::MinUIOp::create(b, loc, last, e.addI(wordStart, word32)),
      wordStart));
  auto lowBits = [&](Value n) {
    Value one = arith::ConstantIntOp::create(b, loc, i64Type, 1);
    return arith::SubIOp::create(
        b, loc, arith::ShLIOp::create(b, loc, one, n), one);
  };
  Value mask = arith::TruncIOp::create(
      b, loc, i32Type,
      arith::XOrIOp::create(b, loc, lowBits(hi), lowBits(lo)));
  Value bits = arith::AndIOp::create(b, loc, e.load(words, w), mask);
  emitForEachSetBit(
      b, loc, bits, ValueRange{},
      [&](Value bit, ValueRange) -> SmallVector<Value> {
        Value at = e.addI(wordStart, e.toIndex(bit));
        Value col = arith::SubIOp::create(b, loc, at, rowBits);
        Value term = x ? arith::MulFOp::create(b, loc, gv, e.load(x, at))
                       : gv;
        Value out = e.addI(outStart, col);
        Value slot = arith::SubIOp::create(b, loc, col, c0);
        auto [t, l2] = e.kahanAdd(e.load(gw, out), e.load(lost, slot), term);
        e.store(t, gw, out);
        e.store(l2, lost, slot);
        return {};
      });
}

Value mlir::snn::emitEventPathChosen(OpBuilder &b, Location loc,
                                    Value decision) {
  Value word = memref::LoadOp::create(
      b, loc, decision, ValueRange{arith::ConstantIndexOp::create(b, loc, 1)});
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne, word,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0));
}

void mlir::snn::emitHostListWalk(OpBuilder &b, Location loc, Value columns,
                                 Value listStart, int64_t k,
                                 function_ref<void(Value at)> body) {
  emitHostListWalk(b, loc, columns, listStart,
                   arith::ConstantIndexOp::create(b, loc, k), body);
}

void mlir::snn::emitHostListWalk(OpBuilder &b, Location loc, Value columns,
                                 Value listStart, Value k,
                                 function_ref<void(Value at)> body) {
  OpKernelSpec none;
  EventEmitter e(b, loc, none);
  scf::WhileOp::create(
      b, loc, TypeRange{b.getIndexType()}, ValueRange{e.idx(0)},
      [&](OpBuilder &nb, Location l, ValueRange state) {
        OpBuilder::InsertionGuard before(b);
        b.setInsertionPointToStart(nb.getInsertionBlock());
        Value p = state[0];
        Value inRow = e.ult(p, k);
        // A full row has no -1: slot K is never read.
        auto listed = scf::IfOp::create(b, loc, TypeRange{b.getI1Type()},
                                        inRow, /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard branch(b);
          b.setInsertionPointToStart(listed.thenBlock());
          Value column = e.load(columns, e.addI(listStart, p));
          scf::YieldOp::create(
              b, loc,
              ValueRange{arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::sge, column, e.i32(0))});
          b.setInsertionPointToStart(listed.elseBlock());
          scf::YieldOp::create(b, loc, ValueRange{inRow});
        }
        scf::ConditionOp::create(b, loc, listed.getResult(0), state);
      },
      [&](OpBuilder &nb, Location l, ValueRange state) {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(nb.getInsertionBlock());
        {
          // The body may leave the insertion point in a loop of its own.
          OpBuilder::InsertionGuard slot(b);
          body(e.addI(listStart, state[0]));
        }
        scf::YieldOp::create(b, loc, ValueRange{e.addI(state[0], e.idx(1))});
      });
}

func::FuncOp mlir::snn::buildEventHostKernel(OpBuilder &b, Location loc,
                                             StringRef name,
                                             const OpKernelSpec &spec) {
  // A row writes and reads its N outputs at least once: rows of ~16k
  // outputs are worth a thread of their own (a tile of event_linear_tiles
  // runs every row: one is).
  bool rows = spec.kind == OpKernelKind::EventLinear ||
              spec.kind == OpKernelKind::EventLinearBand ||
              spec.kind == OpKernelKind::EventLinearBits ||
              spec.kind == OpKernelKind::EventLinearLists;
  int64_t grain = rows ? llvm::divideCeilSigned(16384, spec.outFeatures)
                  : spec.kind == OpKernelKind::CompactRows
                      ? llvm::divideCeilSigned(16384, spec.inFeatures)
                      : 1;
  func::FuncOp fn = createRangedHostFunc(
      b, loc, name, getEventKernelArgTypes(spec, b.getContext()),
      getEventHostItems(spec), grain);
  // Every argument is a different tensor: LLVM vectorizes the row updates
  // without runtime overlap checks.
  for (unsigned i = 0; i + 2 < fn.getNumArguments(); ++i)
    fn.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(), b.getUnitAttr());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&fn.front());
  ValueRange args = getHostTensorArgs(fn);
  EventEmitter e(b, loc, spec);
  int64_t k = spec.inFeatures, n = spec.outFeatures;
  // A loop whose body takes the insertion point; its induction variable.
  auto loopFrom = [&](Value first, Value end, int64_t step) {
    auto loop = scf::ForOp::create(b, loc, first, end, e.idx(step));
    b.setInsertionPoint(loop.getBody()->getTerminator());
    return loop.getInductionVar();
  };
  auto forLoop = [&](int64_t count) {
    return loopFrom(e.idx(0), e.idx(count), 1);
  };
  // The items [begin, end) of this call.
  auto rangeLoop = [&]() {
    return createHostRangeLoop(b, loc, fn, 0, getEventHostItems(spec))
        .getInductionVar();
  };
  // The rows of this call, each output row [width] zeroed first: {row,
  // its first output}.
  auto zeroedRows = [&](Value out, int64_t width) {
    Value row = rangeLoop();
    Value outStart = e.mulI(row, e.idx(width));
    OpBuilder::InsertionGuard inner(b);
    Value o = forLoop(width);
    e.store(e.f32(0.0), out, e.addI(outStart, o));
    return std::make_pair(row, outStart);
  };
  switch (spec.kind) {
  case OpKernelKind::EventLinearBand:
    buildEventLinearBandHost(b, loc, fn, spec);
    break;
  case OpKernelKind::ThinWeightGradBits:
    buildThinWeightGradBitsHost(b, loc, fn, spec);
    break;
  case OpKernelKind::EventLinearBits:
    emitEventWeightGradBitsHost(e, fn, args);
    break;
  case OpKernelKind::EventLinearTiles:
    emitEventLinearTilesHost(b, loc, spec, fn, args);
    break;
  case OpKernelKind::CompactRows: {
    // Per row: its nonzero columns in order (and their values), then -1
    // unless the row is full.
    // Counting, the rows' counts add up in the loop and the range adds its
    // sum into the decision (emitHostCountDecision); else it runs only on
    // the event path.
    unsigned counts = spec.countsNonzeros;
    Value x = args[0], decision = args[1 + counts], columns = args[2 + counts];
    Value values = spec.xValues ? args[3 + counts] : Value();
    OpBuilder::InsertionGuard g(b);
    if (!counts)
      e.openIf(e.eventPathChosen(decision));
    auto [first, last] = getHostRangeBounds(b, loc, fn, 0, spec.rows);
    auto rows =
        scf::ForOp::create(b, loc, first, last, e.idx(1), ValueRange{e.i32(0)});
    if (spec.countsNonzeros) {
      OpBuilder::InsertionGuard after(b);
      b.setInsertionPointAfter(rows);
      Value items = arith::IndexCastOp::create(
          b, loc, b.getI32Type(), arith::SubIOp::create(b, loc, last, first));
      emitHostCountDecision(b, loc, rows.getResult(0), items, spec.rows,
                            args[1], decision);
    }
    b.setInsertionPointToStart(rows.getBody());
    Value row = rows.getInductionVar();
    Value rowStart = e.mulI(row, e.idx(k));
    auto list = [&](Value j, Value found) {
      Value slot = e.addI(rowStart, found);
      e.store(arith::IndexCastUIOp::create(b, loc, b.getI32Type(), j), columns,
              slot);
      if (values)
        e.store(e.load(x, e.addI(rowStart, j)), values, slot);
    };
    // Row bits: the set bits of the row's K / 32 words in order.
    Value count = spec.xBits
                      ? emitHostRowBitsScan(b, loc, x, row, k, list)
                      : emitHostNonzeroScan(b, loc, x, rowStart, k, list);
    {
      OpBuilder::InsertionGuard end(b);
      e.openIf(e.ult(count, e.idx(k)));
      e.store(e.i32(-1), columns, e.addI(rowStart, count));
    }
    scf::YieldOp::create(
        b, loc,
        ValueRange{arith::AddIOp::create(
            b, loc, rows.getRegionIterArg(0),
            arith::IndexCastUIOp::create(b, loc, b.getI32Type(), count))});
    break;
  }
  case OpKernelKind::CompactColumns: {
    // Per strip of 32 columns of gy [M, N] and segment of rows: each
    // column's nonzero rows in order, then -1 unless the segment is full
    // (the rows of the strip are contiguous: cache lines, not a stride).
    int64_t m = spec.rows, segment = spec.columnSegment;
    Value gy = args[0], decision = args[1], rows = args[2];
    OpBuilder::InsertionGuard g(b);
    Value counts = memref::AllocaOp::create(
        b, loc, MemRefType::get({32}, b.getIndexType()));
    e.openIf(e.eventPathChosen(decision));
    Value j0 = e.mulI(rangeLoop(), e.idx(32));
    Value width = arith::MinUIOp::create(
        b, loc, e.idx(32), arith::SubIOp::create(b, loc, e.idx(k), j0));
    Value first = loopFrom(e.idx(0), e.idx(m), segment);
    Value length = arith::MinUIOp::create(
        b, loc, e.idx(segment), arith::SubIOp::create(b, loc, e.idx(m), first));
    {
      OpBuilder::InsertionGuard inner(b);
      e.store(e.idx(0), counts, forLoop(32));
    }
    {
      OpBuilder::InsertionGuard inner(b);
      Value r = loopFrom(first, e.addI(first, length), 1);
      auto append = [&](Value jj) {
        Value count = e.load(counts, jj);
        e.store(arith::IndexCastUIOp::create(b, loc, b.getI32Type(), r), rows,
                e.addI(e.addI(e.mulI(e.addI(j0, jj), e.idx(m)), first), count));
        e.store(e.addI(count, e.idx(1)), counts, jj);
      };
      if (spec.xBits) {
        // gy's occupancy bits: the strip of row r is one word.
        Value word =
            e.load(gy, e.addI(e.mulI(r, e.idx(k / kBitsPerWord)),
                              arith::DivUIOp::create(b, loc, j0, e.idx(32))));
        emitForEachSetBit(b, loc, word, ValueRange{},
                          [&](Value bit, ValueRange) -> SmallVector<Value> {
                            append(e.toIndex(bit));
                            return {};
                          });
      } else {
        // The strip's nonzeros in row r, 8 columns compared at a time.
        emitHostNonzeroScan(b, loc, gy, e.addI(e.mulI(r, e.idx(k)), j0), width,
                            [&](Value jj, Value) { append(jj); });
      }
    }
    Value jj = loopFrom(e.idx(0), width, 1);
    Value count = e.load(counts, jj);
    e.openIf(e.ult(count, length));
    e.store(e.i32(-1), rows,
            e.addI(e.addI(e.mulI(e.addI(j0, jj), e.idx(m)), first), count));
    break;
  }
  case OpKernelKind::EventLinearLists: {
    // Per row j of gw: zero it, then per event r (nonzero gy[r, j]) in
    // order add g (times x's value) at x's listed columns of row r. The
    // events: gy^T[j, :]'s nonzeros, or compact_columns' lists of column j
    // segment by segment.
    int64_t events = spec.inFeatures, cols = spec.outFeatures;
    int64_t segment = spec.columnSegment;
    Value gyIn = args[0], gyRows = segment ? args[1] : Value();
    unsigned xAt = segment ? 2 : 1;
    Value xColumns = args[xAt];
    Value xValues = spec.xValues ? args[xAt + 1] : Value();
    Value decision = args[args.size() - 2], gw = args.back();
    OpBuilder::InsertionGuard g(b);
    e.openIf(e.eventPathChosen(decision));
    auto [row, outStart] = zeroedRows(gw, cols);
    // x's list of row r up to its -1 (or slot K).
    auto addEvent = [&](Value r, Value gv) {
      emitHostListWalk(
          b, loc, xColumns, e.mulI(r, e.idx(cols)), cols, [&](Value at) {
            Value out = e.addI(outStart, e.toIndex(e.load(xColumns, at)));
            Value term = xValues ? arith::MulFOp::create(b, loc, gv,
                                                         e.load(xValues, at))
                                 : gv;
            e.store(arith::AddFOp::create(b, loc, e.load(gw, out), term), gw,
                    out);
          });
    };
    if (segment) {
      Value first = loopFrom(e.idx(0), e.idx(events), segment);
      Value length = arith::MinUIOp::create(
          b, loc, e.idx(segment),
          arith::SubIOp::create(b, loc, e.idx(events), first));
      emitHostListWalk(
          b, loc, gyRows, e.addI(e.mulI(row, e.idx(events)), first), length,
          [&](Value at) {
            Value r = e.toIndex(e.load(gyRows, at));
            addEvent(r, e.load(gyIn, e.addI(e.mulI(r, e.idx(spec.rows)), row)));
          });
      break;
    }
    Value r = forLoop(events);
    Value gv = e.load(gyIn, e.addI(e.mulI(row, e.idx(events)), r));
    e.openIf(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, gv,
                                   e.f32(0.0)));
    addEvent(r, gv);
    break;
  }
  case OpKernelKind::SpikeDensity: {
    Value x = args[0], limit = args[1], decision = args[2];
    OpBuilder::InsertionGuard g(b);
    rangeLoop();
    e.storeDecision(e.countNonzeros(x, e.idx(0), 1), limit, decision);
    break;
  }
  case OpKernelKind::TransposeWeight: {
    // wt [K, N] = w [N, K]^T, per strip of 32 rows of wt: 8 x 8 blocks
    // transposed in vector registers (8 loads of 8, 24 shuffles, 8 stores
    // of 8; a scalar loop strided through w by K floats per element), the
    // columns and rows past the last whole block one at a time.
    Value decision = args[0], w = args[1], wt = args[2];
    OpBuilder::InsertionGuard g(b);
    e.openIf(e.eventPathChosen(decision));
    constexpr int64_t tile = kTransposeTile, lanes = 8;
    int64_t k8 = k / lanes * lanes, n8 = n / lanes * lanes;
    // wt[j, o]: [K, N], or in strips for the host event_linear
    // (OpKernelSpec::weightStrips).
    bool strips = spec.weightStrips && n >= kWeightStripColumns;
    auto wtAt = [&](Value j, Value o) -> Value {
      if (!strips)
        return e.addI(e.mulI(j, e.idx(n)), o);
      return getWeightStripOffset(b, loc, k, n, j, o);
    };
    // A batch of matrices: item i is tile i % tiles of matrix i / tiles.
    Value item = rangeLoop(), base;
    if (spec.transposeBatch > 1) {
      int64_t tiles = llvm::divideCeilSigned(k, tile);
      base = e.mulI(arith::DivUIOp::create(b, loc, item, e.idx(tiles)),
                    e.idx(n * k));
      item = arith::RemUIOp::create(b, loc, item, e.idx(tiles));
      w = memref::SubViewOp::create(b, loc, w, ArrayRef<OpFoldResult>{base},
                                    ArrayRef<OpFoldResult>{b.getIndexAttr(n * k)},
                                    ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
      wt = memref::SubViewOp::create(b, loc, wt, ArrayRef<OpFoldResult>{base},
                                     ArrayRef<OpFoldResult>{b.getIndexAttr(n * k)},
                                     ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    }
    auto copy = [&](Value j, Value o) {
      e.store(e.load(w, e.addI(e.mulI(o, e.idx(k)), j)), wt, wtAt(j, o));
    };
    Value j0 = e.mulI(item, e.idx(tile));
    Value jEnd =
        arith::MinUIOp::create(b, loc, e.addI(j0, e.idx(tile)), e.idx(k));
    Value jBlocksEnd = arith::MaxUIOp::create(
        b, loc, j0, arith::MinUIOp::create(b, loc, jEnd, e.idx(k8)));
    {
      OpBuilder::InsertionGuard blocks(b);
      Value j8 = loopFrom(j0, jBlocksEnd, lanes);
      {
        OpBuilder::InsertionGuard inner(b);
        Value o8 = loopFrom(e.idx(0), e.idx(n8), lanes);
        auto vecType = VectorType::get({lanes}, b.getF32Type());
        SmallVector<Value> v;
        for (int64_t r = 0; r < lanes; ++r)
          v.push_back(vector::LoadOp::create(
              b, loc, vecType, w,
              ValueRange{e.addI(e.mulI(e.addI(o8, e.idx(r)), e.idx(k)), j8)}));
        auto shuffle = [&](Value x, Value y, ArrayRef<int64_t> mask) {
          return vector::ShuffleOp::create(b, loc, x, y, mask).getResult();
        };
        // unpacklo/hi, then shufps 0x44/0xEE, then vperm2f128 0x20/0x31.
        SmallVector<Value> t, u, c(lanes);
        for (int64_t r = 0; r < lanes; r += 2) {
          t.push_back(shuffle(v[r], v[r + 1], {0, 8, 1, 9, 4, 12, 5, 13}));
          t.push_back(shuffle(v[r], v[r + 1], {2, 10, 3, 11, 6, 14, 7, 15}));
        }
        for (int64_t q : {0, 1, 4, 5}) {
          u.push_back(shuffle(t[q], t[q + 2], {0, 1, 8, 9, 4, 5, 12, 13}));
          u.push_back(shuffle(t[q], t[q + 2], {2, 3, 10, 11, 6, 7, 14, 15}));
        }
        for (int64_t q = 0; q < 4; ++q) {
          c[q] = shuffle(u[q], u[q + 4], {0, 1, 2, 3, 8, 9, 10, 11});
          c[q + 4] = shuffle(u[q], u[q + 4], {4, 5, 6, 7, 12, 13, 14, 15});
        }
        for (int64_t r = 0; r < lanes; ++r)
          vector::StoreOp::create(b, loc, c[r], wt,
                                  ValueRange{wtAt(e.addI(j8, e.idx(r)), o8)});
      }
      if (n8 < n) {
        Value j = loopFrom(j8, e.addI(j8, e.idx(lanes)), 1);
        copy(j, loopFrom(e.idx(n8), e.idx(n), 1));
      }
    }
    Value j = loopFrom(jBlocksEnd, jEnd, 1);
    copy(j, loopFrom(e.idx(0), e.idx(n), 1));
    break;
  }
  case OpKernelKind::EventLinear:
    emitEventLinearHost(b, loc, spec, fn, args);
    break;
  case OpKernelKind::EventConv2d:
    emitEventConvHost(b, loc, spec, fn, args);
    break;
  case OpKernelKind::EventConv2dWeightGrad:
    emitEventConvWeightGradHost(b, loc, spec, fn, args);
    break;
  default:
    llvm_unreachable("not an event-driven kernel");
  }
  func::ReturnOp::create(b, loc);
  return fn;
}
