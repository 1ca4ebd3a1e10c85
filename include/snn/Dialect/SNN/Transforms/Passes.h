//===- Passes.h - snn dialect transformations -------------------*- C++ -*-===//

#ifndef SNN_DIALECT_SNN_TRANSFORMS_PASSES_H
#define SNN_DIALECT_SNN_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "snn/Dialect/SNN/IR/SNNOps.h"

namespace mlir::snn {

#define GEN_PASS_DECL
#include "snn/Dialect/SNN/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "snn/Dialect/SNN/Transforms/Passes.h.inc"

} // namespace mlir::snn

#endif // SNN_DIALECT_SNN_TRANSFORMS_PASSES_H
