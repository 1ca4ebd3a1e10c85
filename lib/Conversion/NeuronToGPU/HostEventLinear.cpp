//===- HostEventLinear.cpp - event_linear on the CPU, in column chunks ----===//
//
// y [M, N] = x [M, K] wt [K, N] (+ b) over x's nonzeros, on the CPU. Why
// chunks: a row's events each read a row of wt (N floats, 5.9 KB for the
// SHD net's 1472 outputs), and a whole-row walk reads all of wt (8.7 MB:
// past L2) once per input row. Here a block of rows lists its nonzeros
// once, then runs C = 64 outputs at a time: every event adds C weights to
// C sums held in vector registers, and the block's reads of wt stay within
// a K x C strip (377 KB) at a time, so most come from L2. The events still
// gather 256 bytes each from L2: at 5% density that, not arithmetic, bounds
// the kernel (bench/results/2026-12-02-cpu2-host-event-chunks.md: SHD fc2
// 10-20% faster than the row walk, the 20-output readout 1.3-2.5x).
//
// With OpKernelSpec::weightStrips (the forward's wt, which transpose_weight
// writes for it) a chunk's strip is one contiguous block, an event's 64
// weights one 256-byte run: K runs 4 N bytes apart were a page each, and
// the SHD fc2 forward took 16.7 ms at 5% on the 2-core AMD build machine.
//
// Each output is the same sum as the row walk's: 0, then x[r, j] wt[j, o]
// added for the nonzero j in increasing order, then the bias; the same
// bits (test/Runtime/sparsify.test and the thread checks compare them with
// the dense path and across thread counts).
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/HostKernelRange.h"
#include "snn/Conversion/NeuronToGPU/KernelArith.h"
#include "snn/Conversion/NeuronToGPU/SparseKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::snn;

namespace {
/// Outputs a chunk sums at once (8 AVX2 registers), a strip of wt.
constexpr int64_t kChunkOutputs = kWeightStripColumns;
/// Bytes of a block's lists on the stack (well within the megabytes of
/// glibc's default thread stacks; 174 rows of the SHD net's K = 1472 i16
/// lists). Blocks of
/// 44 rows (128 KB) were ~10% slower at 5%: each block reads the strips from
/// L3 once.
constexpr int64_t kListBytes = 512 * 1024;
constexpr int64_t kMaxBlockRows = 256;

class Emitter : public KernelArith {
public:
  Emitter(OpBuilder &b, Location loc) : KernelArith(b, loc) {}
};
} // namespace

void mlir::snn::emitEventLinearHost(OpBuilder &b, Location loc,
                                    const OpKernelSpec &spec, func::FuncOp fn,
                                    ValueRange args) {
  int64_t k = spec.inFeatures, n = spec.outFeatures;
  Value x = args[0], wt = args[1];
  Value bias = spec.hasBias ? args[2] : Value();
  Value decision = args[args.size() - 2], y = args.back();
  assert((!spec.xBits || spec.xBinary) && "row bits are spikes");
  Emitter e(b, loc);
  OpBuilder::InsertionGuard guard(b);

  // Chunk width: 64 outputs, or the most whole vectors of 8 a narrow layer
  // has; the last n % width outputs are summed one at a time.
  int64_t width = n >= kChunkOutputs ? kChunkOutputs : n / 8 * 8;
  int64_t chunked = width ? n / width * width : 0;
  // wt[j, col] in strips (a chunk's columns, or the tail's), else [K, N].
  bool strips = spec.weightStrips && width == kChunkOutputs;
  auto weightAt = [&](Value j, Value col, bool chunk) -> Value {
    if (!strips)
      return e.addI(e.mulI(j, e.idx(n)), col);
    return getWeightStripOffset(b, loc, k, n, j, col, chunk);
  };
  bool narrowIndices = k <= 65536;
  Type indexType = narrowIndices ? b.getI16Type() : b.getI32Type();
  int64_t indexBytes = narrowIndices ? 2 : 4;
  int64_t blockRows =
      std::clamp<int64_t>(kListBytes / (k * indexBytes), 1, kMaxBlockRows);
  Value lists = memref::AllocaOp::create(
      b, loc, MemRefType::get({blockRows * k}, indexType));
  Value counts = memref::AllocaOp::create(
      b, loc, MemRefType::get({blockRows}, b.getIndexType()));

  auto ifOp = scf::IfOp::create(b, loc, emitEventPathChosen(b, loc, decision),
                                /*withElse=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  auto [first, last] = getHostRangeBounds(b, loc, fn, 0, spec.rows);
  Value block = e.openFor(first, last, blockRows);
  Value blockEnd =
      arith::MinUIOp::create(b, loc, e.addI(block, e.idx(blockRows)), last);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));

  // The block's nonzero columns, row by row, and their counts.
  {
    OpBuilder::InsertionGuard inner(b);
    Value row = e.openFor(block, blockEnd, 1);
    Value slot = e.mulI(arith::SubIOp::create(b, loc, row, block), e.idx(k));
    Value rowStart = e.mulI(row, e.idx(k));
    auto list = [&](Value j, Value at) {
      e.store(arith::IndexCastUIOp::create(b, loc, indexType, j), lists,
              e.addI(slot, at));
    };
    // Row bits (spec.xBits): the set bits of the row's words in order.
    Value count = spec.xBits
                      ? emitHostRowBitsScan(b, loc, x, row, k, list)
                      : emitHostNonzeroScan(b, loc, x, rowStart, k, list);
    e.store(count, counts, arith::SubIOp::create(b, loc, row, block));
  }

  // Sum of x[row, j] wt[j, col .. col + lanes) over the row's list: a vector
  // of `lanes` (lanes 0: a scalar) in list order, from 0.
  auto sumListed = [&](Value row, Value col, int64_t lanes) -> Value {
    Value local = arith::SubIOp::create(b, loc, row, block);
    Value slot = e.mulI(local, e.idx(k)), rowStart = e.mulI(row, e.idx(k));
    Type accType =
        lanes ? Type(VectorType::get({lanes}, b.getF32Type())) : b.getF32Type();
    Value init =
        lanes ? Value(arith::ConstantOp::create(
                    b, loc, accType,
                    DenseElementsAttr::get(cast<VectorType>(accType), 0.0f)))
              : zero;
    auto walk = scf::ForOp::create(b, loc, e.idx(0), e.load(counts, local),
                                   e.idx(1), ValueRange{init});
    OpBuilder::InsertionGuard body(b);
    b.setInsertionPointToStart(walk.getBody());
    Value j = arith::IndexCastUIOp::create(
        b, loc, b.getIndexType(),
        e.load(lists, e.addI(slot, walk.getInductionVar())));
    Value at = weightAt(j, col, lanes != 0);
    Value w =
        lanes ? Value(vector::LoadOp::create(b, loc, cast<VectorType>(accType),
                                             wt, ValueRange{at}))
              : e.load(wt, at);
    // Spikes are 1 at their events: 1 w = w, bit for bit.
    Value term = w;
    if (!spec.xBinary) {
      Value xv = e.load(x, e.addI(rowStart, j));
      if (lanes)
        xv = vector::BroadcastOp::create(b, loc, accType, xv);
      term = arith::MulFOp::create(b, loc, xv, w);
    }
    scf::YieldOp::create(b, loc,
                         ValueRange{arith::AddFOp::create(
                             b, loc, walk.getRegionIterArg(0), term)});
    return walk.getResult(0);
  };

  // Chunk by chunk over the block's rows, then the outputs past the chunks.
  if (width) {
    OpBuilder::InsertionGuard inner(b);
    Value col = e.openFor(e.idx(0), e.idx(chunked), width);
    Value row = e.openFor(block, blockEnd, 1);
    Value sum = sumListed(row, col, width);
    auto vecType = VectorType::get({width}, b.getF32Type());
    if (bias)
      sum = arith::AddFOp::create(
          b, loc, sum,
          vector::LoadOp::create(b, loc, vecType, bias, ValueRange{col}));
    vector::StoreOp::create(b, loc, sum, y,
                            ValueRange{e.addI(e.mulI(row, e.idx(n)), col)});
  }
  if (chunked < n) {
    OpBuilder::InsertionGuard inner(b);
    Value row = e.openFor(block, blockEnd, 1);
    Value col = e.openFor(e.idx(chunked), e.idx(n), 1);
    Value sum = sumListed(row, col, 0);
    if (bias)
      sum = arith::AddFOp::create(b, loc, sum, e.load(bias, col));
    e.store(sum, y, e.addI(e.mulI(row, e.idx(n)), col));
  }
}

Value mlir::snn::getWeightStripOffset(OpBuilder &b, Location loc, int64_t k,
                                      int64_t n, Value j, Value o,
                                      std::optional<bool> inStrips) {
  constexpr int64_t strip = kWeightStripColumns;
  int64_t striped = n / strip * strip;
  Emitter e(b, loc);
  auto stripAt = [&] {
    Value inStrip = arith::RemUIOp::create(b, loc, o, e.idx(strip));
    return e.addI(
        e.addI(e.mulI(arith::SubIOp::create(b, loc, o, inStrip), e.idx(k)),
               e.mulI(j, e.idx(strip))),
        inStrip);
  };
  auto tailAt = [&] {
    return e.addI(e.addI(e.idx(striped * k), e.mulI(j, e.idx(n - striped))),
                  arith::SubIOp::create(b, loc, o, e.idx(striped)));
  };
  if (inStrips)
    return *inStrips ? stripAt() : tailAt();
  Value isStrip = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, o,
                                        e.idx(striped));
  return arith::SelectOp::create(b, loc, isStrip, stripAt(), tailAt());
}
