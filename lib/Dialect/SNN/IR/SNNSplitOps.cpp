//===- SNNSplitOps.cpp - time split across ranks --------------------------===//
//
// Verifiers of the communication ops of --snn-split-time.
//
//===----------------------------------------------------------------------===//

#include "snn/Dialect/SNN/IR/SNNOps.h"
#include "DiagnosticFormat.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::snn;

/// Transfers carry one state tensor [B, features...] or its gradient.
static LogicalResult verifyTransfer(Operation *op, Type type) {
  if (cast<RankedTensorType>(type).hasStaticShape())
    return success();
  return op->emitOpError() << "transfers " << type
                           << ", which has a dynamic shape; a time split "
                              "needs static batch and feature sizes";
}

LogicalResult RecvOp::verify() { return verifyTransfer(*this, getType()); }
LogicalResult SendOp::verify() {
  return verifyTransfer(*this, getValue().getType());
}

/// `[L, rest...]` and `[1, rest...]` with the same rest and element type.
static LogicalResult verifyTimeLengthChange(Operation *op, Value many,
                                            Value one, StringRef manyName) {
  auto manyType = cast<RankedTensorType>(many.getType());
  auto oneType = cast<RankedTensorType>(one.getType());
  if (manyType.getRank() < 1 || oneType.getRank() != manyType.getRank() ||
      oneType.getDimSize(0) != 1 ||
      manyType.getShape().drop_front() != oneType.getShape().drop_front() ||
      manyType.getElementType() != oneType.getElementType())
    return op->emitOpError()
           << "expects the " << manyName << " [L, ...] and a [1, ...] tensor "
           << "with the same other dimensions, got " << manyType << " and "
           << oneType;
  return success();
}

LogicalResult TimeSumOp::verify() {
  return verifyTimeLengthChange(*this, getInput(), getOutput(), "input");
}
LogicalResult TimeBroadcastOp::verify() {
  return verifyTimeLengthChange(*this, getOutput(), getInput(), "output");
}
