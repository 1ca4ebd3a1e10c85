//===- Passes.td - snn dialect transformations -------------*- tablegen -*-===//

#ifndef SNN_DIALECT_SNN_TRANSFORMS_PASSES_TD
#define SNN_DIALECT_SNN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

#endif // SNN_DIALECT_SNN_TRANSFORMS_PASSES_TD
