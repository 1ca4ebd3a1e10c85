//===- BlockSum.cpp - deterministic sums over a GPU block -----------------===//

#include "BlockSum.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

SmallVector<Value> mlir::snn::emitBlockSum(OpBuilder &b, Location loc,
                                           Value scratch, Value lane,
                                           int64_t threads,
                                           ValueRange partials) {
  return emitSegmentedBlockSum(b, loc, scratch, lane, threads, threads,
                               partials);
}

SmallVector<Value> mlir::snn::emitSegmentedBlockSum(OpBuilder &b, Location loc,
                                                    Value scratch, Value lane,
                                                    int64_t threads,
                                                    int64_t segment,
                                                    ValueRange partials) {
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Value k of thread `lane` lives at k * threads + lane.
  SmallVector<Value> slots;
  for (auto [k, partial] : llvm::enumerate(partials)) {
    Value at = k == 0 ? lane
                      : Value(arith::AddIOp::create(
                            b, loc, lane, idx(int64_t(k) * threads)));
    memref::StoreOp::create(b, loc, partial, scratch, ValueRange{at});
    slots.push_back(at);
  }
  gpu::BarrierOp::create(b, loc);
  // A tree: at each level the lower half of each run's threads adds the
  // upper.
  Value inRun = segment == threads
                    ? lane
                    : Value(arith::RemUIOp::create(b, loc, lane, idx(segment)));
  for (int64_t stride = segment / 2; stride >= 1; stride /= 2) {
    Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         inRun, idx(stride));
    auto level = scf::IfOp::create(b, loc, active, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard ig(b);
      b.setInsertionPointToStart(level.thenBlock());
      for (Value at : slots) {
        Value other = arith::AddIOp::create(b, loc, at, idx(stride));
        Value mine = memref::LoadOp::create(b, loc, scratch, ValueRange{at});
        Value theirs =
            memref::LoadOp::create(b, loc, scratch, ValueRange{other});
        Value sum = arith::AddFOp::create(b, loc, mine, theirs);
        memref::StoreOp::create(b, loc, sum, scratch, ValueRange{at});
      }
    }
    gpu::BarrierOp::create(b, loc);
  }
  // The run's sums are at its first thread's slots.
  Value first = segment == threads
                    ? idx(0)
                    : Value(arith::SubIOp::create(b, loc, lane, inRun));
  SmallVector<Value> sums;
  for (size_t k = 0; k < partials.size(); ++k) {
    Value at = k == 0 ? first
                      : Value(arith::AddIOp::create(
                            b, loc, first, idx(int64_t(k) * threads)));
    sums.push_back(memref::LoadOp::create(b, loc, scratch, ValueRange{at}));
  }
  return sums;
}
