//===- EventDrivenCrossover.h - the event_driven attribute's check -*- C++ -*-===//

#ifndef SNN_LIB_DIALECT_SNN_IR_EVENTDRIVENCROSSOVER_H
#define SNN_LIB_DIALECT_SNN_IR_EVENTDRIVENCROSSOVER_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/APFloat.h"

#include <optional>

namespace mlir::snn {

/// An `event_driven` crossover, when present, is a density in (0, 1]: that
/// of `densityOf` ("input", "grad_output") up to which the event-driven
/// path runs.
inline LogicalResult verifyEventDrivenCrossover(Operation *op,
                                                std::optional<APFloat> crossover,
                                                StringRef densityOf) {
  if (!crossover)
    return success();
  double d = crossover->convertToDouble();
  if (d > 0.0 && d <= 1.0)
    return success();
  return op->emitOpError() << "event_driven crossover must be a density in "
                              "(0, 1] (the "
                           << densityOf
                           << " density up to which the event-driven path "
                              "runs), got "
                           << d;
}

} // namespace mlir::snn

#endif // SNN_LIB_DIALECT_SNN_IR_EVENTDRIVENCROSSOVER_H
