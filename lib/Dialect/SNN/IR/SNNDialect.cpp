//===- SNNDialect.cpp - the snn dialect -----------------------------------===//

#include "snn/Dialect/SNN/IR/SNNDialect.h"
#include "snn/Dialect/SNN/IR/SNNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::snn;

#include "snn/Dialect/SNN/IR/SNNOpsDialect.cpp.inc"
#include "snn/Dialect/SNN/IR/SNNEnums.cpp.inc"
#include "snn/Dialect/SNN/IR/SNNInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "snn/Dialect/SNN/IR/SNNAttrs.cpp.inc"

void SNNDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "snn/Dialect/SNN/IR/SNNOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "snn/Dialect/SNN/IR/SNNAttrs.cpp.inc"
      >();
}

LogicalResult
SurrogateAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      SurrogateKind kind, FloatAttr alpha, FloatAttr thetaGrad,
                      FloatAttr gradBand) {
  if (!alpha || !(alpha.getValueAsDouble() > 0.0))
    return emitError() << "surrogate '" << stringifySurrogateKind(kind)
                       << "' needs alpha > 0 (it sets the width of the "
                          "gradient window), got "
                       << (alpha ? alpha.getValueAsDouble() : 0.0);
  // NaN fails the comparison too: a band must be a positive width or inf.
  if (gradBand && !(gradBand.getValueAsDouble() > 0.0))
    return emitError() << "surrogate '" << stringifySurrogateKind(kind)
                       << "' needs grad_band > 0 (the half-width of the band "
                          "|H - v_th| <= B where the gradient is kept; inf "
                          "keeps all of it), got "
                       << gradBand.getValueAsDouble();
  return success();
}

SurrogateAttr mlir::snn::getSurrogateOrDefault(MLIRContext *ctx,
                                               SurrogateAttr attr) {
  if (attr)
    return attr;
  Builder b(ctx);
  return SurrogateAttr::get(ctx, SurrogateKind::Sigmoid, b.getF64FloatAttr(4.0),
                            FloatAttr());
}

std::optional<double> mlir::snn::getScalarParam(Attribute attr) {
  if (auto f = llvm::dyn_cast_or_null<FloatAttr>(attr))
    return f.getValueAsDouble();
  return std::nullopt;
}
