//===- NIRExport.h - the snn dialect to NIR (.nir, HDF5) --------*- C++ -*-===//
//
// Writes a model in the step or multi-step form as a NIR graph: linear layers
// become Affine/Linear, neurons their continuous-time NIR nodes with the
// discretization inverted at the same `dt` as the import (LIF tau = dt/k,
// r = c/k). Weights come from the `snn.param` values or from a safetensors
// checkpoint whose tensor names are the parameter names.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_TARGET_NIR_NIREXPORT_H
#define SNN_TARGET_NIR_NIREXPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::snn {

struct NIRExportOptions {
  /// Integration step in seconds used to undo the discretization.
  double dt = 1e-4;
  /// A safetensors checkpoint overriding the `snn.param` values ("" = none).
  std::string weightsPath;
};

/// Writes the NIR file image of `module` (one function, by convention
/// @forward) to `os`. Emits an error at the offending op and writes nothing
/// when the model has no NIR equivalent.
LogicalResult exportNIR(ModuleOp module, llvm::raw_ostream &os,
                        const NIRExportOptions &options);

/// Registers the `--export-nir` translation and `--export-nir-weights`.
void registerNIRExportTranslation();

} // namespace mlir::snn

#endif // SNN_TARGET_NIR_NIREXPORT_H
