//===- NeuronPoolKernels.cpp - a neuron layer and its pooling, one kernel -===//
//
// A layer fused with its average or sum pooling (--snn-fuse) has one thread
// per pooling window. The window tiles the [.., H, W] map, so the thread owns
// its KH x KW neurons: it keeps their state in registers, runs each step of
// the same ThreadEmitter as the unfused kernel a window row (KW neurons) at a
// time, counts the window's spikes and writes the pooled value only. The
// spike tensor is never written.
//
//===----------------------------------------------------------------------===//

#include "NeuronThreadEmitter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::snn;
using namespace mlir::snn::kernelgen;

void kernelgen::buildPooledNeuronThread(OpBuilder &b, Location loc,
                                        const NeuronSpec &spec, Value thread,
                                        ValueRange args) {
  const FusedPool &pool = *spec.pool;
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto mulI = [&](Value a, int64_t c) -> Value {
    return arith::MulIOp::create(b, loc, a, index(c));
  };
  auto addI = [&](Value a, Value c) -> Value {
    return arith::AddIOp::create(b, loc, a, c);
  };
  // Window (outer, i, j) of the (H/KH) x (W/KW) pooled map of each outer
  // index (batch and channel).
  int64_t pooledCols = spec.cols / pool.kw;
  int64_t pooledMap = (spec.rows / pool.kh) * pooledCols;
  Value outer = arith::DivUIOp::create(b, loc, thread, index(pooledMap));
  Value inMap = arith::RemUIOp::create(b, loc, thread, index(pooledMap));
  Value i = arith::DivUIOp::create(b, loc, inMap, index(pooledCols));
  Value j = arith::RemUIOp::create(b, loc, inMap, index(pooledCols));
  Value corner = addI(addI(mulI(outer, spec.rows * spec.cols),
                           mulI(i, pool.kh * spec.cols)),
                      mulI(j, pool.kw));

  // One emitter per window row, with its parameters (and the affine of a
  // fused batch norm) loaded before the scan.
  Value x = args[0], pooled = args[1];
  unsigned bnArgs = spec.getNumBatchNormArgs(KernelKind::Forward);
  std::vector<std::unique_ptr<ThreadEmitter>> rows;
  SmallVector<Value> init;
  for (int64_t r = 0; r < pool.kh; ++r) {
    Value base = addI(corner, index(r * spec.cols));
    rows.push_back(std::make_unique<ThreadEmitter>(b, loc, spec, base));
    rows.back()->loadBatchNorm(args.slice(2, bnArgs));
    rows.back()->loadParams(args.drop_front(2 + bnArgs));
    llvm::append_range(init, rows.back()->initialState());
  }
  size_t stateSize = init.size() / pool.kh;

  Value area = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(static_cast<float>(pool.kh * pool.kw)));
  scf::ForOp::create(
      b, loc, index(0), index(spec.numSteps), index(1), init,
      [&](OpBuilder &, Location, Value t, ValueRange state) {
        SmallVector<Value> next;
        Value count;
        for (int64_t r = 0; r < pool.kh; ++r) {
          ThreadEmitter &row = *rows[r];
          SmallVector<Value> rowNext;
          Value spike = row.forwardStep(
              t, state.slice(r * stateSize, stateSize), x, /*s=*/Value(),
              /*h=*/Value(), /*iSaved=*/Value(), /*ckpt=*/Value(), rowNext);
          llvm::append_range(next, rowNext);
          Value ones = arith::SelectOp::create(b, loc, spike, row.splat(1.0),
                                               row.splat(0.0));
          Value rowCount = vector::ReductionOp::create(
              b, loc, vector::CombiningKind::ADD, ones);
          count = count ? arith::AddFOp::create(b, loc, count, rowCount)
                        : rowCount;
        }
        // The same division as the unfused average pooling kernel.
        if (pool.average)
          count = arith::DivFOp::create(b, loc, count, area);
        Value at = addI(mulI(t, spec.getNumWindows()), thread);
        memref::StoreOp::create(b, loc, count, pooled, ValueRange{at});
        scf::YieldOp::create(b, loc, next);
      });
}
