//===- NIRImportOptions.cpp - command-line options of the NIR import ------===//
//
// Shared by snn-translate --import-nir and snn-opt's .nir input.
//
//===----------------------------------------------------------------------===//

#include "snn/Target/NIR/NIRImport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"

using namespace mlir;
using namespace mlir::snn;

namespace {
struct NIRImportCLOptions {
  llvm::cl::OptionCategory category{"NIR import options"};
  llvm::cl::opt<int64_t> timeSteps{
      "nir-time-steps", llvm::cl::desc("Time steps T of the imported model"),
      llvm::cl::init(NIRImportOptions().timeSteps), llvm::cl::cat(category)};
  llvm::cl::opt<int64_t> batch{"nir-batch",
                               llvm::cl::desc("Batch size B of the imported "
                                              "model"),
                               llvm::cl::init(NIRImportOptions().batch),
                               llvm::cl::cat(category)};
  llvm::cl::opt<double> dt{
      "nir-dt",
      llvm::cl::desc(
          "Integration step in seconds for discretizing NIR's continuous-time "
          "neurons by Euler steps: v += dt/tau (v_leak - v) + r dt/tau x. A "
          "CubaLIF/CubaLI updates its synaptic current first and charges the "
          "membrane with this step's current I[t] (snnTorch's Synaptic "
          "order, not textbook forward Euler's I[t-1]); docs/nir.md gives "
          "each neuron's order and the options matching each exporter"),
      llvm::cl::init(NIRImportOptions().dt), llvm::cl::cat(category)};
  llvm::cl::opt<ResetMode> reset{
      "nir-reset",
      llvm::cl::desc("Membrane reset after a spike (NIR does not say)"),
      llvm::cl::values(
          clEnumValN(ResetMode::Hard, "hard",
                     "v = v_reset (NIR's equations; Norse, SpikingJelly, "
                     "snnTorch reset_mechanism=\"zero\")"),
          clEnumValN(ResetMode::Soft, "soft",
                     "v = v - v_threshold (SpikingJelly v_reset=None, "
                     "Sinabs; snnTorch's default subtracts one step later, "
                     "see docs/nir.md)")),
      llvm::cl::init(NIRImportOptions().reset), llvm::cl::cat(category)};
};
llvm::ManagedStatic<NIRImportCLOptions> clOptions;
} // namespace

void mlir::snn::registerNIRImportCLOptions() { *clOptions; }

NIRImportOptions mlir::snn::getNIRImportCLOptions() {
  NIRImportOptions opts;
  if (!clOptions.isConstructed())
    return opts;
  opts.timeSteps = clOptions->timeSteps;
  opts.batch = clOptions->batch;
  opts.dt = clOptions->dt;
  opts.reset = clOptions->reset;
  return opts;
}

void mlir::snn::registerNIRImportDialects(DialectRegistry &registry) {
  registry.insert<SNNDialect, func::FuncDialect, arith::ArithDialect>();
}
