//===- snn-opt.cpp - the snn-mlir optimizer driver ------------------------===//
//
// An MlirOptMain driver with the snn dialect, its passes, and the upstream
// dialects and passes that the compilation pipelines use. An input file
// ending in `.nir` is imported first (the --nir-* options apply).
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include "snn/Conversion/Passes.h"
#include "snn/Dialect/SNN/IR/SNNDialect.h"
#include "snn/Dialect/SNN/Transforms/Passes.h"
#include "snn/Target/NIR/NIRImport.h"

using namespace mlir;

/// Imports a NIR file and runs the usual MlirOptMain processing on its IR.
static LogicalResult runOnNIRFile(llvm::StringRef inputFilename,
                                  llvm::StringRef outputFilename,
                                  DialectRegistry &registry) {
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file =
      openInputFile(inputFilename, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return failure();
  }
  std::string text;
  {
    MLIRContext context(registry);
    llvm::SourceMgr sourceMgr;
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    OwningOpRef<ModuleOp> module =
        snn::importNIR(file->getBuffer(), inputFilename, &context,
                       snn::getNIRImportCLOptions());
    if (!module)
      return failure();
    // Keep the NIR node names as locations for later diagnostics.
    llvm::raw_string_ostream os(text);
    module->print(os, OpPrintingFlags().enableDebugInfo());
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return failure();
  }
  if (failed(MlirOptMain(output->os(),
                         llvm::MemoryBuffer::getMemBufferCopy(text,
                                                              inputFilename),
                         registry, config)))
    return failure();
  output->keep();
  return success();
}

int main(int argc, char **argv) {
  registerAllPasses();
  snn::registerSNNPasses();
  snn::registerSNNConversionPasses();
  snn::registerNIRImportCLOptions();

  DialectRegistry registry;
  registerAllDialects(registry);
  // The GPU pipelines need the to-LLVM interfaces, the NVVM target and the
  // LLVM IR translations.
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<snn::SNNDialect>();

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "snn-mlir optimizer driver\n", registry);
  if (llvm::StringRef(inputFilename).ends_with(".nir"))
    return asMainReturnCode(
        runOnNIRFile(inputFilename, outputFilename, registry));
  return asMainReturnCode(
      MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
