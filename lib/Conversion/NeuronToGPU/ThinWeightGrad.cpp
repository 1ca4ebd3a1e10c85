//===- ThinWeightGrad.cpp - a thin weight gradient over row bits ----------===//
//
// thin_weight_grad_bits: the weight gradient gw [N, K] = gy [M, N]^T x [M, K]
// of a thin layer (N <= 32 outputs, the readout) whose input x is a spiking
// layer's spikes as row bits. Why: the readout's dense weight gradient read
// 75 MB of float spikes per SHD step (32 cuBLAS GEMMs and their sum, 44 us
// on an H100), which alone kept the layer before it writing floats; over
// bits it reads 2.4 MB of words and gy's rows only where a word has a set
// bit.
//
// The kernel writes per-segment parts [S, N, K]: part s of (o, k) is the sum
// of gy[r, o] over the rows r of segment s (kThinSegmentRows rows) whose bit
// (r, k) is set, in row order, in f32 from 0. The manifest's time_sum then
// adds the parts in segment order (in f64, rounded once): the same bits on
// the GPU and the CPU, a sum in a fixed order (no atomics).
//
// GPU: a warp per (word column, segment), lane l owning column 32 w + l and
// N sums in registers (N / 4 vectors when N is a multiple of 4); the warp
// loads kThinUnroll rows' words (the same word for every lane: one
// transaction) before it tests them, and only a word with a set bit reads
// gy's row. CPU: a segment per work item, its N x K part zeroed, then per
// row each word's set bits (ctz) add gy's row into the part's column.
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/HostKernelRange.h"
#include "snn/Conversion/NeuronToGPU/KernelArith.h"
#include "snn/Conversion/NeuronToGPU/SparseKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::snn;

namespace {
constexpr int64_t kBitsPerWord = 32;
/// Rows whose words a GPU warp loads before it tests them.
constexpr int64_t kThinUnroll = 8;
constexpr int64_t kThinWarpsPerBlock = kOpKernelBlockSize / 32;

class Emitter : public KernelArith {
public:
  Emitter(OpBuilder &b, Location loc, const OpKernelSpec &spec)
      : KernelArith(b, loc), spec(spec) {}

  Value nonzero(Value v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, i32(0));
  }

  /// Accumulator lanes of gy's row: vectors of 4 when N allows 16-byte
  /// loads, else scalars.
  int64_t width() const { return spec.outFeatures % 4 == 0 ? 4 : 1; }
  int64_t accumulators() const { return spec.outFeatures / width(); }
  Type accType() {
    return width() == 1 ? Type(b.getF32Type())
                        : Type(VectorType::get({width()}, b.getF32Type()));
  }
  Value zero() {
    if (width() == 1)
      return f32(0.0);
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(cast<VectorType>(accType()), 0.0f));
  }
  /// Accumulator a of gy's row `row`.
  Value loadGy(Value gy, Value row, int64_t a) {
    Value at = addI(mulI(row, idx(spec.outFeatures)), idx(a * width()));
    if (width() == 1)
      return load(gy, at);
    return vector::LoadOp::create(b, loc, cast<VectorType>(accType()), gy,
                                  ValueRange{at}, /*nontemporal=*/false,
                                  llvm::MaybeAlign(16));
  }
  /// sums + gy's row `row`, accumulator by accumulator.
  SmallVector<Value> addRow(ValueRange sums, Value gy, Value row) {
    SmallVector<Value> next;
    for (int64_t a = 0; a < accumulators(); ++a)
      next.push_back(arith::AddFOp::create(b, loc, sums[a], loadGy(gy, row, a)));
    return next;
  }
  /// Element (s, o, k) of the parts [S, N, K].
  Value partAt(Value s, Value o, Value k) {
    return addI(mulI(addI(mulI(s, idx(spec.outFeatures)), o),
                     idx(spec.inFeatures)),
                k);
  }
  /// `if (cond) then() else sums` with the sums as the results.
  SmallVector<Value> ifSums(Value cond, ValueRange sums,
                            function_ref<SmallVector<Value>()> then) {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange(sums), cond,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(b, loc, then());
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, loc, sums);
    }
    return llvm::to_vector_of<Value>(ifOp.getResults());
  }

  const OpKernelSpec &spec;
};
} // namespace

int64_t mlir::snn::getThinWeightGradSegments(const OpKernelSpec &spec) {
  return llvm::divideCeilSigned(spec.rows, kThinSegmentRows);
}

int64_t mlir::snn::getThinWeightGradGridSize(const OpKernelSpec &spec) {
  int64_t warps =
      spec.inFeatures / kBitsPerWord * getThinWeightGradSegments(spec);
  return llvm::divideCeilSigned(warps, kThinWarpsPerBlock);
}

void mlir::snn::buildThinWeightGradBitsGPU(OpBuilder &b, Location loc,
                                           ValueRange args, Value block,
                                           Value lane,
                                           const OpKernelSpec &spec) {
  assert(spec.outFeatures <= kMaxThinOutputs &&
         spec.inFeatures % kBitsPerWord == 0 && "a thin layer over row bits");
  Emitter e(b, loc, spec);
  Value gy = args[0], words = args[1], parts = args[2];
  int64_t m = spec.rows, rowWords = spec.inFeatures / kBitsPerWord;
  int64_t segments = getThinWeightGradSegments(spec);
  Type i32Type = b.getI32Type();
  Value warp = e.addI(e.mulI(block, e.idx(kThinWarpsPerBlock)),
                      arith::DivUIOp::create(b, loc, lane, e.idx(32)));
  Value laneInWarp = arith::RemUIOp::create(b, loc, lane, e.idx(32));
  Value lane32 = arith::IndexCastUIOp::create(b, loc, i32Type, laneInWarp);
  // Whole warps leave together: the warp's lanes share every branch below
  // but the bit test.
  OpBuilder::InsertionGuard guard(b);
  e.openIf(e.ult(warp, e.idx(rowWords * segments)));
  Value wordColumn = arith::RemUIOp::create(b, loc, warp, e.idx(rowWords));
  Value segment = arith::DivUIOp::create(b, loc, warp, e.idx(rowWords));
  Value first = e.mulI(segment, e.idx(kThinSegmentRows));
  SmallVector<Value> init(e.accumulators(), e.zero());
  auto rows = scf::ForOp::create(b, loc, e.idx(0), e.idx(kThinSegmentRows),
                                 e.idx(kThinUnroll), init);
  {
    OpBuilder::InsertionGuard body(b);
    b.setInsertionPointToStart(rows.getBody());
    Value base = e.addI(first, rows.getInductionVar());
    // The rows' words first (a row past M reads row M - 1's, taken as 0).
    SmallVector<Value> loaded, rowOf;
    for (int64_t u = 0; u < kThinUnroll; ++u) {
      Value r = e.addI(base, e.idx(u));
      Value inRows = e.ult(r, e.idx(m));
      Value rc = arith::SelectOp::create(b, loc, inRows, r, e.idx(m - 1));
      Value word = e.load(words, e.addI(e.mulI(rc, e.idx(rowWords)),
                                        wordColumn));
      loaded.push_back(arith::SelectOp::create(b, loc, inRows, word, e.i32(0)));
      rowOf.push_back(rc);
    }
    SmallVector<Value> sums(rows.getRegionIterArgs());
    for (int64_t u = 0; u < kThinUnroll; ++u) {
      Value word = loaded[u];
      // The word is the same for the warp: a row without any of its 32
      // spikes costs no branch divergence and no read of gy.
      sums = e.ifSums(e.nonzero(word), sums, [&] {
        Value bit = arith::AndIOp::create(
            b, loc, arith::ShRUIOp::create(b, loc, word, lane32), e.i32(1));
        return e.ifSums(e.nonzero(bit), sums,
                        [&] { return e.addRow(sums, gy, rowOf[u]); });
      });
    }
    scf::YieldOp::create(b, loc, sums);
  }
  Value column = e.addI(e.mulI(wordColumn, e.idx(kBitsPerWord)), laneInWarp);
  for (int64_t a = 0; a < e.accumulators(); ++a)
    for (int64_t c = 0; c < e.width(); ++c) {
      Value v = e.width() == 1 ? rows.getResult(a)
                               : vector::ExtractOp::create(
                                     b, loc, rows.getResult(a), c)
                                     .getResult();
      e.store(v, parts, e.partAt(segment, e.idx(a * e.width() + c), column));
    }
}

void mlir::snn::buildThinWeightGradBitsHost(OpBuilder &b, Location loc,
                                            func::FuncOp fn,
                                            const OpKernelSpec &spec) {
  Emitter e(b, loc, spec);
  ValueRange args = getHostTensorArgs(fn);
  Value gy = args[0], words = args[1], parts = args[2];
  int64_t m = spec.rows, k = spec.inFeatures, n = spec.outFeatures;
  int64_t rowWords = k / kBitsPerWord;
  OpBuilder::InsertionGuard guard(b);
  Value segment = createHostRangeLoop(b, loc, fn, 0,
                                      getThinWeightGradSegments(spec))
                      .getInductionVar();
  auto forRange = [&](Value first, Value end) {
    auto loop = scf::ForOp::create(b, loc, first, end, e.idx(1));
    b.setInsertionPoint(loop.getBody()->getTerminator());
    return loop.getInductionVar();
  };
  {
    OpBuilder::InsertionGuard zero(b);
    Value i = forRange(e.idx(0), e.idx(n * k));
    e.store(e.f32(0.0), parts,
            e.addI(e.mulI(segment, e.idx(n * k)), i));
  }
  Value first = e.mulI(segment, e.idx(kThinSegmentRows));
  Value end = arith::MinUIOp::create(
      b, loc, e.addI(first, e.idx(kThinSegmentRows)), e.idx(m));
  Value row = forRange(first, end);
  Value w = forRange(e.idx(0), e.idx(rowWords));
  Value word = e.load(words, e.addI(e.mulI(row, e.idx(rowWords)), w));
  emitForEachSetBit(
      b, loc, word, ValueRange{},
      [&](Value bit, ValueRange) -> SmallVector<Value> {
        Value column =
            e.addI(e.mulI(w, e.idx(kBitsPerWord)),
                   arith::IndexCastUIOp::create(b, loc, b.getIndexType(), bit));
        OpBuilder::InsertionGuard inner(b);
        Value o = forRange(e.idx(0), e.idx(n));
        Value at = e.partAt(segment, o, column);
        e.store(e.add(e.load(parts, at),
                      e.load(gy, e.addI(e.mulI(row, e.idx(n)), o))),
                parts, at);
        return {};
      });
}
