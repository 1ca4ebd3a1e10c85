//===- DiagnosticFormat.h - numbers in verifier messages --------*- C++ -*-===//

#ifndef SNN_LIB_DIALECT_SNN_IR_DIAGNOSTICFORMAT_H
#define SNN_LIB_DIALECT_SNN_IR_DIAGNOSTICFORMAT_H

#include <cstdio>
#include <string>

namespace mlir::snn {

/// Numbers in diagnostics as users write them: 1.5, not 1.500000e+00.
inline std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

} // namespace mlir::snn

#endif // SNN_LIB_DIALECT_SNN_IR_DIAGNOSTICFORMAT_H
