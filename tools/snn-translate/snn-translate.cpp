//===- snn-translate.cpp - translations between snn IR and model files ----===//
//
// `--import-nir model.nir` prints the step-form snn IR of a NIR graph;
// `--export-nir model.mlir -o model.nir` writes one.
//
//===----------------------------------------------------------------------===//

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

#include "snn/Target/NIR/NIRExport.h"
#include "snn/Target/NIR/NIRImport.h"

int main(int argc, char **argv) {
  mlir::snn::registerNIRImportTranslation();
  mlir::snn::registerNIRExportTranslation();
  return mlir::failed(mlir::mlirTranslateMain(
      argc, argv, "snn-mlir translation driver (NIR import and export)\n"));
}
