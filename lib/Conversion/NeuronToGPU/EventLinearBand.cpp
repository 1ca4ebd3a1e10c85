//===- EventLinearBand.cpp - an input gradient only in a surrogate band ---===//
//
// event_linear_band: y [M, N] = x [M, K] wt [K, N] over x's nonzeros, like
// event_linear, but only at the (r, c) where the neuron layer that reads y
// has a surrogate derivative: |h[r, c] - v_th| <= band (`--snn-fuse`,
// snn.band_masked_gx). Everywhere else y is left as it is: the layer's
// backward reads its output gradient only in the band (its derivative is 0
// elsewhere), so neither kernel spends a pass over the zeros. Why: in the
// sparse backward the input gradient of a hidden layer feeds only its neuron
// backward, whose band holds a few of each row's outputs (0.2-0.4% of the SHD
// net's 1472 at 1-5% activity), while event_linear sums every output of the row
// over every listed input.
//
// Each computed output is the same sum as event_linear's: 0, then x[r, j]
// wt[j, c] added for the nonzero j in increasing order; the same bits.
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/HostKernelRange.h"
#include "snn/Conversion/NeuronToGPU/KernelArith.h"
#include "snn/Conversion/NeuronToGPU/SparseKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::snn;

namespace {
/// Warps of a GPU block (a block per row).
constexpr int64_t kBandWarps = 4;
/// Listed inputs whose loads a GPU thread issues before adding them.
constexpr int64_t kBandUnroll = 8;
/// A row walk (every output of the row, then the mask) instead of a sum per
/// banded output on the CPU once more than 1 / kHostWideBand of the row is
/// in the band: the walk reads the weight rows contiguously.
constexpr int64_t kHostWideBand = 8;

/// A warp's share of a row of `length` elements: a multiple of 128 where
/// it is long (the compaction then loads 4 groups of 32 at once), else of
/// 32.
struct BandSegment {
  int64_t size, unroll;
};
BandSegment getBandSegment(int64_t length) {
  int64_t perWarp = llvm::divideCeilSigned(length, kBandWarps);
  if (perWarp > 64)
    return {static_cast<int64_t>(llvm::alignTo(perWarp, 128)), 4};
  return {static_cast<int64_t>(llvm::alignTo(perWarp, 32)), 1};
}

class Emitter : public KernelArith {
public:
  Emitter(OpBuilder &b, Location loc, const OpKernelSpec &spec)
      : KernelArith(b, loc), spec(spec) {}

  Value uge(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value toIndex(Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
  }
  Value toI32(Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), v);
  }
  /// Whether the neuron backward keeps the derivative at h (i1): not
  /// |h - v_th| > band, the same f32 ops and ordered compare as its
  /// surrogate, so that a NaN H is in the band there and here.
  Value inBand(Value h) {
    Value u = sub(h, f32(spec.bandVTh));
    Value outside =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                              math::AbsFOp::create(b, loc, u), f32(spec.band));
    return arith::XOrIOp::create(
        b, loc, outside,
        arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  }
  /// 0 + x[rowX + j] wt[j, col] over the listed j in list order
  /// (`listed(e)` gives the e-th, e < count), `unroll` terms' loads at a
  /// time, the terms past the count loaded from the first and not added.
  Value sumListed(Value x, Value wt, Value rowX, Value col, Value count,
                  int64_t unroll, function_ref<Value(Value e)> listed) {
    int64_t n = spec.outFeatures;
    auto loop = scf::ForOp::create(b, loc, idx(0), count, idx(unroll),
                                   ValueRange{f32(0)});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value e0 = loop.getInductionVar();
    SmallVector<Value> valid, terms;
    for (int64_t u = 0; u < unroll; ++u) {
      Value e = addI(e0, idx(u));
      Value inList = unroll == 1 ? Value() : ult(e, count);
      Value j = listed(inList ? select(inList, e, idx(0)) : e);
      Value v = load(x, addI(rowX, j));
      Value w = load(wt, addI(mulI(j, idx(n)), col));
      valid.push_back(inList);
      terms.push_back(mul(v, w));
    }
    Value acc = loop.getRegionIterArg(0);
    for (int64_t u = 0; u < unroll; ++u) {
      Value sum = add(acc, terms[u]);
      acc = valid[u] ? select(valid[u], sum, acc) : sum;
    }
    scf::YieldOp::create(b, loc, ValueRange{acc});
    return loop.getResult(0);
  }

  const OpKernelSpec &spec;
};
} // namespace

int64_t mlir::snn::getEventBandBlockSize() { return 32 * kBandWarps; }

/// The GPU form, a block per row: each warp lists the nonzero inputs of its
/// segment of x's row and the banded outputs of its segment of h's row in
/// shared memory (emitWarpCompaction); after the barrier, thread t
/// computes the banded outputs t, t +
/// 128, ... (in list order: consecutive threads, consecutive columns), each
/// over every listed input.
void mlir::snn::buildEventLinearBandGPU(OpBuilder &b, Location loc,
                                        gpu::GPUFuncOp kernel,
                                        const OpKernelSpec &spec) {
  int64_t k = spec.inFeatures, n = spec.outFeatures;
  BandSegment xSegment = getBandSegment(k), hSegment = getBandSegment(n);
  auto shared = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  auto sharedArray = [&](int64_t count) {
    return MemRefType::get({count}, b.getI32Type(), MemRefLayoutAttrInterface(),
                           shared);
  };
  Value inputs = kernel.addWorkgroupAttribution(
      sharedArray(kBandWarps * xSegment.size), loc);
  Value outputs = kernel.addWorkgroupAttribution(
      sharedArray(kBandWarps * hSegment.size), loc);
  Value counts =
      kernel.addWorkgroupAttribution(sharedArray(2 * kBandWarps), loc);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&kernel.front());
  ValueRange args =
      kernel.getArguments().take_front(kernel.getFunctionType().getNumInputs());
  Value x = args[0], wt = args[1], h = args[2], decision = args[3], y = args[4];
  Emitter e(b, loc, spec);
  Value row = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value lane = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value warp = arith::DivUIOp::create(b, loc, lane, e.idx(32));
  Value laneInWarp = arith::RemUIOp::create(b, loc, lane, e.idx(32));
  Value rowX = e.mulI(row, e.idx(k)), rowY = e.mulI(row, e.idx(n));
  {
    // The decision is the same for the whole block: the barrier is reached
    // by every thread or by none.
    OpBuilder::InsertionGuard g(b);
    e.openIf(emitEventPathChosen(b, loc, decision));
    auto compact = [&](Value from, Value rowStart, BandSegment segment,
                       int64_t length, Value list,
                       function_ref<Value(Value)> listed) {
      Value base = e.mulI(warp, e.idx(segment.size));
      // Segments of 128 over rows of whole vectors: one 16-byte load a
      // lane an iteration instead of four.
      bool vectors = segment.size % 128 == 0 && length % 4 == 0;
      return emitWarpCompaction(
          b, loc, from, rowStart, base, segment.size, length, laneInWarp,
          vectors ? 1 : segment.unroll,
          [&](Value j, Value, Value slot) {
            e.store(e.toI32(j), list, e.addI(base, e.toIndex(slot)));
          },
          listed, vectors ? 4 : 1);
    };
    Value listedInputs = compact(x, rowX, xSegment, k, inputs, nullptr);
    Value bandedOutputs = compact(h, rowY, hSegment, n, outputs,
                                  [&](Value hv) { return e.inBand(hv); });
    {
      OpBuilder::InsertionGuard store(b);
      e.openIf(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                     laneInWarp, e.idx(0)));
      e.store(listedInputs, counts, warp);
      e.store(bandedOutputs, counts, e.addI(warp, e.idx(kBandWarps)));
    }
    gpu::BarrierOp::create(b, loc);
    // Entry f of a list flattened over the warps' segments: in segment w
    // when f >= starts[w], at slot f + (w segment - starts[w]).
    auto flattened = [&](int64_t first) {
      SmallVector<Value> starts{e.idx(0)};
      for (int64_t w = 0; w < kBandWarps; ++w)
        starts.push_back(
            e.addI(starts.back(), e.toIndex(e.load(counts, e.idx(first + w)))));
      return starts;
    };
    SmallVector<Value> inputStarts = flattened(0);
    SmallVector<Value> outputStarts = flattened(kBandWarps);
    auto slotOf = [&](Value f, ArrayRef<Value> starts, int64_t segment) {
      Value slot = f;
      for (int64_t w = 1; w < kBandWarps; ++w)
        slot = e.select(e.uge(f, starts[w]),
                        e.addI(f, e.subI(e.idx(w * segment), starts[w])), slot);
      return slot;
    };
    Value numInputs = inputStarts.back();
    Value m = e.openFor(lane, outputStarts.back(), getEventBandBlockSize());
    Value col =
        e.toIndex(e.load(outputs, slotOf(m, outputStarts, hSegment.size)));
    Value acc =
        e.sumListed(x, wt, rowX, col, numInputs, kBandUnroll, [&](Value f) {
          return e.toIndex(
              e.load(inputs, slotOf(f, inputStarts, xSegment.size)));
        });
    e.store(acc, y, e.addI(rowY, col));
  }
  gpu::ReturnOp::create(b, loc);
}

/// The CPU form, a row per work item: y's banded outputs counted, x's
/// nonzeros listed; then either a sum per banded output over the list, or
/// (more than 1 / kHostWideBand of the row in the band) the row walk adding
/// each listed input's weight row to y's zeroed row (every output, the ones
/// outside the band too).
void mlir::snn::buildEventLinearBandHost(OpBuilder &b, Location loc,
                                         func::FuncOp fn,
                                         const OpKernelSpec &spec) {
  int64_t k = spec.inFeatures, n = spec.outFeatures;
  ValueRange args = getHostTensorArgs(fn);
  Value x = args[0], wt = args[1], h = args[2], decision = args[3], y = args[4];
  Emitter e(b, loc, spec);
  OpBuilder::InsertionGuard guard(b);
  Value list =
      memref::AllocaOp::create(b, loc, MemRefType::get({k}, b.getI32Type()));
  e.openIf(emitEventPathChosen(b, loc, decision));
  Value row = createHostRangeLoop(b, loc, fn, 0, spec.rows).getInductionVar();
  Value rowX = e.mulI(row, e.idx(k)), rowY = e.mulI(row, e.idx(n));
  Value numInputs =
      emitHostNonzeroScan(b, loc, x, rowX, k, [&](Value j, Value slot) {
        e.store(e.toI32(j), list, slot);
      });
  Value banded;
  {
    auto count = scf::ForOp::create(b, loc, e.idx(0), e.idx(n), e.idx(1),
                                    ValueRange{e.idx(0)});
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(count.getBody());
    Value at = e.addI(rowY, count.getInductionVar());
    Value in = e.inBand(e.load(h, at));
    scf::YieldOp::create(b, loc,
                         ValueRange{e.addI(count.getRegionIterArg(0),
                                           e.select(in, e.idx(1), e.idx(0)))});
    banded = count.getResult(0);
  }
  Value wide = e.ult(e.idx(n), e.mulI(banded, e.idx(kHostWideBand)));
  auto paths = scf::IfOp::create(b, loc, wide, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard walk(b);
    b.setInsertionPointToStart(paths.thenBlock());
    {
      OpBuilder::InsertionGuard zero(b);
      Value c = e.openFor(e.idx(0), e.idx(n), 1);
      e.store(e.f32(0), y, e.addI(rowY, c));
    }
    {
      OpBuilder::InsertionGuard inputs(b);
      Value f = e.openFor(e.idx(0), numInputs, 1);
      Value j = e.toIndex(e.load(list, f));
      Value v = e.load(x, e.addI(rowX, j));
      Value wRow = e.mulI(j, e.idx(n));
      Value c = e.openFor(e.idx(0), e.idx(n), 1);
      Value at = e.addI(rowY, c);
      e.store(e.add(e.load(y, at), e.mul(v, e.load(wt, e.addI(wRow, c)))), y,
              at);
    }
  }
  b.setInsertionPointToStart(paths.elseBlock());
  Value c = e.openFor(e.idx(0), e.idx(n), 1);
  Value at = e.addI(rowY, c);
  e.openIf(e.inBand(e.load(h, at)));
  Value acc = e.sumListed(x, wt, rowX, c, numInputs, 1,
                          [&](Value f) { return e.toIndex(e.load(list, f)); });
  e.store(acc, y, at);
}
