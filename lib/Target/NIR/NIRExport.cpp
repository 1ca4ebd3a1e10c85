#include "snn/Target/NIR/NIRExport.h"
using namespace mlir;
LogicalResult mlir::snn::exportNIR(ModuleOp, llvm::raw_ostream &, const NIRExportOptions &) { return failure(); }
void mlir::snn::registerNIRExportTranslation() {}
