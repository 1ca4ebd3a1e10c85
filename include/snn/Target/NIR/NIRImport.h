//===- NIRImport.h - NIR (.nir, HDF5) to the snn dialect --------*- C++ -*-===//
//
// Imports a Neuromorphic Intermediate Representation graph into the step form
// of the snn dialect: one `func.func @forward` whose body is an
// `snn.time_loop` over per-step ops, with the NIR weights in `snn.param`s.
// Continuous-time neuron parameters are discretized by Euler steps of `dt`
// (DESIGN §2: LIF k = dt/tau, c = r dt/tau; a CubaLIF membrane is charged
// with this step's synaptic current). A cycle carries the spikes (output) of
// its last neuron. See docs/nir.md.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_TARGET_NIR_NIRIMPORT_H
#define SNN_TARGET_NIR_NIRIMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include "snn/Dialect/SNN/IR/SNNOps.h"

namespace mlir::snn {

struct NIRImportOptions {
  /// Number of time steps T of the imported model's input [T, B, ...].
  int64_t timeSteps = 8;
  /// Batch size B.
  int64_t batch = 1;
  /// Integration step in seconds (snnTorch's NIR export uses 1e-4).
  double dt = 1e-4;
  /// NIR says "v = v_reset on a spike": a hard reset. Soft (subtract) matches
  /// snnTorch's and Sinabs' default neurons.
  ResetMode reset = ResetMode::Hard;
};

/// Imports the NIR file held in `image` (its name `filename` is used in
/// diagnostics). Emits one error naming the file and node and returns null on
/// bad input.
OwningOpRef<ModuleOp> importNIR(llvm::StringRef image,
                                llvm::StringRef filename, MLIRContext *context,
                                const NIRImportOptions &options);

/// Registers `--nir-time-steps`, `--nir-batch`, `--nir-dt`, `--nir-reset`.
void registerNIRImportCLOptions();
/// The options given on the command line (defaults when not registered).
NIRImportOptions getNIRImportCLOptions();

/// Registers the `--import-nir` translation (snn-translate).
void registerNIRImportTranslation();

/// Dialects the imported IR uses.
void registerNIRImportDialects(DialectRegistry &registry);

} // namespace mlir::snn

#endif // SNN_TARGET_NIR_NIRIMPORT_H
