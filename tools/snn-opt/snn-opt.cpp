//===- snn-opt.cpp - the snn-mlir optimizer driver ------------------------===//
//
// An MlirOptMain driver with the snn dialect, its passes, and the upstream
// dialects and passes that the compilation pipelines use.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "snn/Dialect/SNN/IR/SNNDialect.h"
#include "snn/Dialect/SNN/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::snn::registerSNNPasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  registry.insert<mlir::snn::SNNDialect>();

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "snn-mlir optimizer driver\n", registry));
}
