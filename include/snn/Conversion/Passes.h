//===- Passes.h - snn conversion passes -------------------------*- C++ -*-===//

#ifndef SNN_CONVERSION_PASSES_H
#define SNN_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::snn {

#define GEN_PASS_DECL
#include "snn/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "snn/Conversion/Passes.h.inc"

} // namespace mlir::snn

#endif // SNN_CONVERSION_PASSES_H
