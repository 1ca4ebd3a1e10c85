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
#include "snn/Conversion/NeuronToGPU/HostKernelRange.h"

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
    return {decision, tensor(n * k), tensor(n * k)};
  case OpKernelKind::EventLinear: {
    SmallVector<Type> types{tensor(m * k), tensor(n * k)};
    if (spec.hasBias)
      types.push_back(tensor(n));
    types.push_back(decision);
    types.push_back(tensor(m * n));
    return types;
  }
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
  layout.width = spec.outFeatures % 4 == 0 ? 4 : 1;
  int64_t groups = spec.outFeatures / layout.width;
  layout.threads = std::clamp<int64_t>(llvm::alignTo(groups, 32), 64, 1024);
  layout.segment = llvm::alignTo(
      llvm::divideCeilSigned(spec.inFeatures, layout.warps()), 32);
  if ((layout.listWords() + layout.warps()) * 4 <= kMaxListBytes)
    return layout;
  // Long rows (e.g. a weight gradient's, over T * B events) in chunks; the
  // accumulator of a thread's one group of outputs lives across them.
  if (groups > layout.threads)
    return std::nullopt;
  int64_t fit = (kMaxListBytes / 4 - layout.warps()) / layout.warps();
  layout.segment = fit / 32 * 32;
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
    if (getEventRowLayout(spec))
      return spec.rows;
    return spec.rows *
           llvm::divideCeilSigned(spec.outFeatures, kOpKernelBlockSize);
  default:
    llvm_unreachable("not an event-driven kernel");
  }
}

int64_t mlir::snn::getEventKernelBlockSize(const OpKernelSpec &spec) {
  if (spec.kind == OpKernelKind::EventLinear)
    if (std::optional<EventRowLayout> layout = getEventRowLayout(spec))
      return layout->threads;
  return kOpKernelBlockSize;
}

namespace {
/// Small builders shared by the GPU and host forms.
class EventEmitter {
public:
  EventEmitter(OpBuilder &b, Location loc, const OpKernelSpec &spec)
      : b(b), loc(loc), spec(spec) {}

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(v)));
  }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value load(Value memref, Value i) {
    return memref::LoadOp::create(b, loc, memref, ValueRange{i});
  }
  void store(Value v, Value memref, Value i) {
    memref::StoreOp::create(b, loc, v, memref, ValueRange{i});
  }
  Value addI(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mulI(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
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
    Value word = load(decision, idx(1));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, word,
                                 i32(0));
  }
  /// Opens `if (cond)` and leaves the insertion point inside it.
  void openIf(Value cond) {
    auto op = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
    b.setInsertionPointToStart(op.thenBlock());
  }
  /// The number of nonzeros of x[first], x[first + step], ... (i32).
  Value countNonzeros(Value x, Value first, Value step) {
    int64_t total = spec.rows * spec.inFeatures;
    auto loop = scf::ForOp::create(b, loc, first, idx(total), step,
                                   ValueRange{i32(0)});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value c = addI(loop.getRegionIterArg(0),
                   nonzero(load(x, loop.getInductionVar())));
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
    Type i32Type = b.getI32Type(), f32Type = b.getF32Type();
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
    auto bits = scf::WhileOp::create(
        b, loc, TypeRange{i32Type, f32Type},
        ValueRange{ballot, chunks.getRegionIterArg(0)},
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value more = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::ne, args[0],
              arith::ConstantIntOp::create(nb, l, i32Type, 0));
          scf::ConditionOp::create(nb, l, more, args);
        },
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value mask = args[0], acc = args[1];
          // The mask is nonzero here; the intrinsic needs no math lowering.
          Value bit = LLVM::CountTrailingZerosOp::create(
              nb, l, i32Type, mask, /*is_zero_poison=*/true);
          Value jj = arith::AddIOp::create(
              nb, l, c0,
              arith::IndexCastUIOp::create(nb, l, nb.getIndexType(), bit));
          Value v = memref::LoadOp::create(
              nb, l, x, ValueRange{arith::AddIOp::create(nb, l, rowStart, jj)});
          Value w = memref::LoadOp::create(
              nb, l, wt,
              ValueRange{arith::AddIOp::create(
                  nb, l,
                  arith::MulIOp::create(
                      nb, l, jj, arith::ConstantIndexOp::create(nb, l, n)),
                  col)});
          Value term = arith::MulFOp::create(nb, l, v, w);
          Value sum = arith::AddFOp::create(nb, l, acc, term);
          Value rest = arith::AndIOp::create(
              nb, l, mask,
              arith::SubIOp::create(
                  nb, l, mask, arith::ConstantIntOp::create(nb, l, i32Type, 1)));
          scf::YieldOp::create(nb, l, ValueRange{rest, sum});
        });
    scf::YieldOp::create(b, loc, ValueRange{bits.getResult(1)});
    return chunks.getResult(0);
  }
  /// y[row, col] = acc (+ b[col]).
  void storeOutput(Value acc, ValueRange args, Value row, Value col) {
    if (spec.hasBias)
      acc = arith::AddFOp::create(b, loc, acc, load(args[2], col));
    store(acc, args.back(), addI(mulI(row, idx(spec.outFeatures)), col));
  }

  OpBuilder &b;
  Location loc;
  const OpKernelSpec &spec;
};
} // namespace

void mlir::snn::emitGPUCountDecision(OpBuilder &b, Location loc, Value count,
                                     Value lane, int64_t grid, Value limit,
                                     Value decision) {
  OpKernelSpec none;
  EventEmitter e(b, loc, none);
  Value warpSum = NVVM::ReduxOp::create(b, loc, b.getI32Type(), count,
                                        NVVM::ReduxKind::ADD, e.i32(-1));
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
  // The barrier and this fence order the block's counts before its ticket;
  // the last block's fence orders everyone's before its read of the total.
  NVVM::MembarOp::create(b, loc, NVVM::MemScopeKind::GPU);
  Value ticket = e.atomicAdd(e.i32(1), decision, 1);
  e.openIf(e.eq(ticket, e.i32(grid - 1)));
  NVVM::MembarOp::create(b, loc, NVVM::MemScopeKind::GPU);
  e.storeDecision(e.atomicAdd(e.i32(0), decision, 0), limit, decision);
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
                           Value lane) {
  Value x = args[0], limit = args[1], decision = args[2];
  int64_t grid = getDensityGridSize(e.spec);
  Value first = e.addI(e.mulI(block, e.idx(kOpKernelBlockSize)), lane);
  Value count =
      e.countNonzeros(x, first, e.idx(grid * kOpKernelBlockSize));
  emitGPUCountDecision(e.b, e.loc, count, lane, grid, limit, decision);
}

/// event_linear on the GPU, compacted form (EventRowLayout): block = row.
/// Each warp compacts the nonzero inputs of its segment of the row (ballot,
/// then each active lane's rank = popcount of the lower lanes' bits) into a
/// shared index list, in input order; after a barrier each thread sums the
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
  Type i32Type = b.getI32Type(), indexType = b.getIndexType();
  Value x = args[0], wt = args[1], decision = args[args.size() - 2];
  OpBuilder::InsertionGuard g(b);
  // The decision is the same for the whole block: the barriers below are
  // reached by every thread or by none.
  e.openIf(e.eventPathChosen(decision));
  Value warp = arith::DivUIOp::create(b, loc, lane, e.idx(32));
  Value laneInWarp = arith::RemUIOp::create(b, loc, lane, e.idx(32));
  Value rowStart = e.mulI(row, e.idx(k));
  Value listBase = e.mulI(warp, e.idx(layout.segment));
  Value lowerLanes = arith::SubIOp::create(
      b, loc,
      arith::ShLIOp::create(
          b, loc, e.i32(1),
          arith::IndexCastUIOp::create(b, loc, i32Type, laneInWarp)),
      e.i32(1));
  auto popcount = [&](Value v) {
    return LLVM::CtPopOp::create(b, loc, i32Type, v).getResult();
  };
  auto toIndex = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, indexType, v).getResult();
  };
  // Each warp lists the nonzero inputs of its segment of the chunk that
  // starts at `chunkStart`, then the barrier.
  auto compact = [&](Value chunkStart) {
    Value segStart = e.addI(chunkStart, listBase);
    auto chunks = scf::ForOp::create(
        b, loc, segStart, e.addI(segStart, e.idx(layout.segment)), e.idx(32),
        ValueRange{e.i32(0)});
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(chunks.getBody());
      Value found = chunks.getRegionIterArg(0);
      Value j = e.addI(chunks.getInductionVar(), laneInWarp);
      Value inRange = e.ult(j, e.idx(k));
      Value jc = arith::SelectOp::create(b, loc, inRange, j, e.idx(k - 1));
      Value xv = e.load(x, e.addI(rowStart, jc));
      Value active = arith::AndIOp::create(
          b, loc, inRange,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, xv,
                                e.f32(0.0)));
      Value ballot = NVVM::VoteSyncOp::create(b, loc, i32Type, e.i32(-1),
                                              active,
                                              NVVM::VoteSyncKind::ballot);
      Value rank = popcount(arith::AndIOp::create(b, loc, ballot, lowerLanes));
      {
        OpBuilder::InsertionGuard store(b);
        e.openIf(active);
        e.store(arith::IndexCastUIOp::create(b, loc, i32Type, j), list,
                e.addI(listBase, toIndex(e.addI(found, rank))));
      }
      scf::YieldOp::create(b, loc,
                           ValueRange{e.addI(found, popcount(ballot))});
    }
    {
      OpBuilder::InsertionGuard store(b);
      e.openIf(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     laneInWarp, e.idx(0)));
      e.store(chunks.getResult(0), counts, warp);
    }
    gpu::BarrierOp::create(b, loc);
  };

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
    auto segments = scf::ForOp::create(b, loc, e.idx(0), e.idx(layout.warps()),
                                       e.idx(1), sums);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(segments.getBody());
    Value w = segments.getInductionVar();
    Value base = e.mulI(w, e.idx(layout.segment));
    auto inputs = scf::ForOp::create(b, loc, e.idx(0),
                                     toIndex(e.load(counts, w)), e.idx(1),
                                     segments.getRegionIterArgs());
    {
      OpBuilder::InsertionGuard body(b);
      b.setInsertionPointToStart(inputs.getBody());
      Value j = toIndex(e.load(list, e.addI(base, inputs.getInductionVar())));
      Value xv = vector::BroadcastOp::create(
          b, loc, vecType, e.load(x, e.addI(rowStart, j)));
      Value wv = loadVec(wt, e.addI(e.mulI(j, e.idx(n)), col));
      Value term = arith::MulFOp::create(b, loc, xv, wv);
      Value sum = inputs.getRegionIterArg(0);
      if (sums.size() == 1) {
        scf::YieldOp::create(
            b, loc, ValueRange{arith::AddFOp::create(b, loc, sum, term)});
      } else {
        Value y = arith::SubFOp::create(b, loc, term,
                                        inputs.getRegionIterArg(1));
        Value t = arith::AddFOp::create(b, loc, sum, y);
        Value lost = arith::SubFOp::create(
            b, loc, arith::SubFOp::create(b, loc, t, sum), y);
        scf::YieldOp::create(b, loc, ValueRange{t, lost});
      }
    }
    scf::YieldOp::create(b, loc, inputs.getResults());
    return segments.getResults();
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
  if (layout.chunks == 1) {
    compact(e.idx(0));
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
  int64_t chunkInputs = layout.listWords();
  auto chunkLoop = scf::ForOp::create(b, loc, e.idx(0),
                                      e.idx(layout.chunks * chunkInputs),
                                      e.idx(chunkInputs),
                                      ValueRange{zero, zero});
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(chunkLoop.getBody());
    compact(chunkLoop.getInductionVar());
    ValueRange sums = accumulate(chunkLoop.getRegionIterArgs(), col);
    // Every thread is done with the list before the next chunk's.
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, sums);
  }
  e.openIf(inRange);
  storeRow(chunkLoop.getResult(0), col);
}

gpu::GPUFuncOp mlir::snn::buildEventGPUKernel(OpBuilder &b, Location loc,
                                              StringRef name,
                                              const OpKernelSpec &spec) {
  gpu::GPUFuncOp kernel = createOpGPUKernelFunc(b, loc, name, spec);
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i)
    kernel.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                      b.getUnitAttr());
  std::optional<EventRowLayout> layout;
  if (spec.kind == OpKernelKind::EventLinear)
    layout = getEventRowLayout(spec);
  BlockArgument list, counts, tile;
  auto shared = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  auto sharedArray = [&](int64_t count, Type type) {
    return MemRefType::get({count}, type, MemRefLayoutAttrInterface(), shared);
  };
  if (layout) {
    list = kernel.addWorkgroupAttribution(
        sharedArray(layout->listWords(), b.getI32Type()), loc);
    counts = kernel.addWorkgroupAttribution(
        sharedArray(layout->warps(), b.getI32Type()), loc);
  }
  // A padded row: the column reads of the tile hit 32 different banks.
  constexpr int64_t kTilePitch = kTransposeTile + 1;
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
    emitDensityGPU(e, args, block, lane);
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
    passes([&](Value r) {
      Value o = e.addI(o0, r), j = e.addI(j0, tx);
      e.openIf(both(e.ult(o, e.idx(n)), e.ult(j, e.idx(k))));
      e.store(e.load(w, e.addI(e.mulI(o, e.idx(k)), j)), tile,
              e.addI(e.mulI(r, e.idx(kTilePitch)), tx));
    });
    gpu::BarrierOp::create(b, loc);
    passes([&](Value r) {
      Value j = e.addI(j0, r), o = e.addI(o0, tx);
      e.openIf(both(e.ult(j, e.idx(k)), e.ult(o, e.idx(n))));
      e.store(e.load(tile, e.addI(e.mulI(tx, e.idx(kTilePitch)), r)), wt,
              e.addI(e.mulI(j, e.idx(n)), o));
    });
    break;
  }
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
    return llvm::divideCeilSigned(spec.inFeatures, kTransposeTile);
  default:
    return spec.rows;
  }
}

func::FuncOp mlir::snn::buildEventHostKernel(OpBuilder &b, Location loc,
                                             StringRef name,
                                             const OpKernelSpec &spec) {
  // A row writes and reads its N outputs at least once: rows of ~16k
  // outputs are worth a thread of their own.
  int64_t grain = spec.kind == OpKernelKind::EventLinear
                      ? llvm::divideCeilSigned(16384, spec.outFeatures)
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
  switch (spec.kind) {
  case OpKernelKind::SpikeDensity: {
    Value x = args[0], limit = args[1], decision = args[2];
    OpBuilder::InsertionGuard g(b);
    rangeLoop();
    e.storeDecision(e.countNonzeros(x, e.idx(0), e.idx(1)), limit, decision);
    break;
  }
  case OpKernelKind::TransposeWeight: {
    // In 32 x 32 tiles: both the reads and the writes of a tile stay in
    // the cache (a plain double loop strides through w by k floats).
    Value decision = args[0], w = args[1], wt = args[2];
    OpBuilder::InsertionGuard g(b);
    e.openIf(e.eventPathChosen(decision));
    constexpr int64_t tile = kTransposeTile;
    auto withinTile = [&](Value first, int64_t count) {
      Value end = arith::MinUIOp::create(b, loc, e.addI(first, e.idx(tile)),
                                         e.idx(count));
      return loopFrom(first, end, 1);
    };
    Value j0 = e.mulI(rangeLoop(), e.idx(tile));
    Value o0 = loopFrom(e.idx(0), e.idx(n), tile);
    Value j = withinTile(j0, k);
    Value o = withinTile(o0, n);
    e.store(e.load(w, e.addI(e.mulI(o, e.idx(k)), j)), wt,
            e.addI(e.mulI(j, e.idx(n)), o));
    break;
  }
  case OpKernelKind::EventLinear: {
    // Per row: zero the output row, add x[row, j] * wt[j, :] for every
    // nonzero input j (a contiguous row: vectorized), then the bias.
    Value x = args[0], wt = args[1], decision = args[args.size() - 2];
    Value y = args.back();
    OpBuilder::InsertionGuard g(b);
    e.openIf(e.eventPathChosen(decision));
    Value row = rangeLoop();
    Value outStart = e.mulI(row, e.idx(n));
    {
      OpBuilder::InsertionGuard inner(b);
      Value o = forLoop(n);
      e.store(e.f32(0.0), y, e.addI(outStart, o));
    }
    {
      OpBuilder::InsertionGuard inner(b);
      Value j = forLoop(k);
      Value xv = e.load(x, e.addI(e.mulI(row, e.idx(k)), j));
      e.openIf(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, xv,
                                     e.f32(0.0)));
      Value wStart = e.mulI(j, e.idx(n));
      Value o = forLoop(n);
      Value at = e.addI(outStart, o);
      Value term = arith::MulFOp::create(b, loc, xv,
                                         e.load(wt, e.addI(wStart, o)));
      e.store(arith::AddFOp::create(b, loc, e.load(y, at), term), y, at);
    }
    if (spec.hasBias) {
      OpBuilder::InsertionGuard inner(b);
      Value o = forLoop(n);
      Value at = e.addI(outStart, o);
      e.store(arith::AddFOp::create(b, loc, e.load(y, at), e.load(args[2], o)),
              y, at);
    }
    break;
  }
  default:
    llvm_unreachable("not an event-driven kernel");
  }
  func::ReturnOp::create(b, loc);
  return fn;
}
