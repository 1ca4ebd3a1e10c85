//===- snn-fuzz.cpp - libFuzzer target for the snn parser and verifiers ---===//
//
// Feeds arbitrary bytes to the MLIR parser with the snn dialect loaded and
// verifies what parses. Any input must end in success or in diagnostics:
// a crash, an assertion or a hang is a bug.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include "snn/Dialect/SNN/IR/SNNDialect.h"
#include "snn/Dialect/SNN/IR/SNNOps.h"

#include <cstddef>
#include <cstdint>

static mlir::MLIRContext &getContext() {
  static mlir::MLIRContext *context = [] {
    mlir::DialectRegistry registry;
    registry.insert<mlir::snn::SNNDialect, mlir::func::FuncDialect,
                    mlir::arith::ArithDialect, mlir::tensor::TensorDialect>();
    auto *ctx = new mlir::MLIRContext(registry,
                                      mlir::MLIRContext::Threading::DISABLED);
    ctx->loadAllAvailableDialects();
    return ctx;
  }();
  return *context;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &ctx = getContext();
  // Swallow diagnostics: the fuzzer checks that they end cleanly.
  mlir::ScopedDiagnosticHandler handler(
      &ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::ParserConfig config(&ctx, /*verifyAfterParse=*/true);
  // The lexer relies on a NUL-terminated buffer, as every file snn-opt reads
  // is (MemoryBuffer adds the terminator); libFuzzer's data has none.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz-input"),
      llvm::SMLoc());
  mlir::OwningOpRef<mlir::Operation *> op =
      mlir::parseSourceFile(sourceMgr, config);
  if (op)
    (void)mlir::verify(op.get());
  return 0;
}
