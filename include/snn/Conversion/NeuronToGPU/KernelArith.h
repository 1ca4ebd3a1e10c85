//===- KernelArith.h - short builders for op kernel code --------*- C++ -*-===//
//
// The float and index arithmetic, constants and 1-d memref accesses that the op kernel
// emitters (OpKernels.cpp, BatchNormKernels.cpp) write, one op per call at
// one location.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_CONVERSION_NEURONTOGPU_KERNELARITH_H
#define SNN_CONVERSION_NEURONTOGPU_KERNELARITH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::snn {

/// The largest divisor of n that is at most `cap` (1 if none is larger):
/// how many steps or groups an unrolled iteration takes so that the loop
/// has no remainder.
inline int64_t getLargestDivisorAtMost(int64_t n, int64_t cap) {
  for (int64_t d = cap; d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

/// A base of the kernel emitters: `b` and `loc` are where the ops go. The
/// builders are public: the kernel functions call them on their emitter.
class KernelArith {
protected:
  KernelArith(OpBuilder &b, Location loc) : b(b), loc(loc) {}

public:
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(v)));
  }
  Value f64(double v) {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value addI(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value subI(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mulI(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value load(Value memref, Value i) {
    return memref::LoadOp::create(b, loc, memref, ValueRange{i});
  }
  void store(Value v, Value memref, Value i) {
    memref::StoreOp::create(b, loc, v, memref, ValueRange{i});
  }
  /// Opens `if (cond)` and leaves the insertion point inside it.
  void openIf(Value cond) {
    auto op = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
    b.setInsertionPointToStart(op.thenBlock());
  }
  /// `for (i = first; i < end; i += step)` with the insertion point in its
  /// body; its induction variable.
  Value openFor(Value first, Value end, int64_t step) {
    auto loop = scf::ForOp::create(b, loc, first, end, idx(step));
    b.setInsertionPoint(loop.getBody()->getTerminator());
    return loop.getInductionVar();
  }

protected:
  OpBuilder &b;
  Location loc;
};

} // namespace mlir::snn

#endif // SNN_CONVERSION_NEURONTOGPU_KERNELARITH_H
