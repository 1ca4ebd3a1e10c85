//===- TranslateRegistration.cpp - NIR translations for snn-translate -----===//

#include "snn/Target/NIR/NIRExport.h"
#include "snn/Target/NIR/NIRImport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::snn;

void mlir::snn::registerNIRImportTranslation() {
  registerNIRImportCLOptions();
  TranslateToMLIRRegistration importNIR(
      "import-nir", "import a NIR graph (.nir, HDF5) into the snn step form",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        OwningOpRef<ModuleOp> module =
            mlir::snn::importNIR(buffer->getBuffer(),
                                 buffer->getBufferIdentifier(), context,
                                 getNIRImportCLOptions());
        return OwningOpRef<Operation *>(module.release());
      },
      registerNIRImportDialects);
}
