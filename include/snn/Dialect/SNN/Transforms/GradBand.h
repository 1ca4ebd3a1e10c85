//===- GradBand.h - the sparse backward's surrogate band --------*- C++ -*-===//

#ifndef SNN_DIALECT_SNN_TRANSFORMS_GRADBAND_H
#define SNN_DIALECT_SNN_TRANSFORMS_GRADBAND_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace mlir::snn {

/// Parses a `grad-threshold` option value: a number > 0 or `inf`. On bad
/// text returns nullopt and says why in `why`.
std::optional<double> parseGradThreshold(llvm::StringRef text,
                                         std::string &why);

/// Gives every spiking neuron op under `root` (ops with a `surrogate`
/// attribute: multi-step and step forms) the band `grad_band = band`,
/// keeping the layer's surrogate kind, alpha and theta_grad (the default
/// surrogate where it has none). Returns the number of ops changed.
unsigned setGradBand(Operation *root, double band);

} // namespace mlir::snn

#endif // SNN_DIALECT_SNN_TRANSFORMS_GRADBAND_H
