//===- HostKernelRange.cpp - host kernels over a range of work items ------===//

#include "snn/Conversion/NeuronToGPU/HostKernelRange.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::snn;

func::FuncOp mlir::snn::createRangedHostFunc(OpBuilder &b, Location loc,
                                             StringRef name,
                                             TypeRange tensorTypes,
                                             int64_t items, int64_t grain) {
  SmallVector<Type> types(tensorTypes);
  types.append(2, b.getIndexType());
  auto fn = func::FuncOp::create(
      b, loc, name, FunctionType::get(b.getContext(), types, {}));
  fn->setAttr(kHostItemsAttr, b.getI64IntegerAttr(items));
  fn->setAttr(kHostGrainAttr, b.getI64IntegerAttr(std::max<int64_t>(grain, 1)));
  fn.addEntryBlock();
  return fn;
}

ValueRange mlir::snn::getHostTensorArgs(func::FuncOp fn) {
  return fn.getArguments().drop_back(2);
}

std::pair<Value, Value>
mlir::snn::getHostRangeBounds(OpBuilder &b, Location loc, func::FuncOp fn,
                              int64_t offset, int64_t count) {
  auto idx = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value zero = idx(0), n = idx(count);
  // clamp(x - offset, 0, count): the part of [begin, end) in this segment.
  auto local = [&](Value x) {
    Value shifted =
        offset ? Value(arith::SubIOp::create(b, loc, x, idx(offset))) : x;
    Value low = arith::MaxSIOp::create(b, loc, shifted, zero);
    return arith::MinSIOp::create(b, loc, low, n);
  };
  unsigned numArgs = fn.getNumArguments();
  return {local(fn.getArgument(numArgs - 2)),
          local(fn.getArgument(numArgs - 1))};
}

scf::ForOp mlir::snn::createHostRangeLoop(OpBuilder &b, Location loc,
                                          func::FuncOp fn, int64_t offset,
                                          int64_t count) {
  auto [first, last] = getHostRangeBounds(b, loc, fn, offset, count);
  auto loop = scf::ForOp::create(
      b, loc, first, last, arith::ConstantIndexOp::create(b, loc, 1));
  b.setInsertionPoint(loop.getBody()->getTerminator());
  return loop;
}

std::pair<int64_t, int64_t> mlir::snn::getHostRange(func::FuncOp fn) {
  auto items = fn->getAttrOfType<IntegerAttr>(kHostItemsAttr);
  auto grain = fn->getAttrOfType<IntegerAttr>(kHostGrainAttr);
  if (!items || !grain)
    return {1, 1};
  return {items.getInt(), grain.getInt()};
}
