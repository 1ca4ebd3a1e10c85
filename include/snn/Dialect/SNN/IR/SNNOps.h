//===- SNNOps.h - snn dialect operations ------------------------*- C++ -*-===//

#ifndef SNN_DIALECT_SNN_IR_SNNOPS_H
#define SNN_DIALECT_SNN_IR_SNNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "snn/Dialect/SNN/IR/SNNDialect.h"

#include "snn/Dialect/SNN/IR/SNNEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "snn/Dialect/SNN/IR/SNNAttrs.h.inc"

#include "snn/Dialect/SNN/IR/SNNInterfaces.h.inc"

namespace mlir::snn {
class YieldOp;

/// The surrogate of a neuron op, or the default (sigmoid, alpha = 4).
SurrogateAttr getSurrogateOrDefault(MLIRContext *ctx, SurrogateAttr attr);

/// The value of a scalar neuron parameter (f64 attribute), if it is a scalar.
std::optional<double> getScalarParam(Attribute attr);
} // namespace mlir::snn

#define GET_OP_CLASSES
#include "snn/Dialect/SNN/IR/SNNOps.h.inc"

namespace mlir::snn {
/// The time-split state of a multi-step neuron op (snn.lif, ...): its `init`
/// operands and `final_state` results, empty when it has none or is not a
/// multi-step neuron op.
OperandRange getInitState(Operation *neuron);
ResultRange getFinalState(Operation *neuron);
/// The type of one state tensor of a multi-step neuron op: [B, features...].
RankedTensorType getNeuronStateType(NeuronOpInterface neuron);
} // namespace mlir::snn

#endif // SNN_DIALECT_SNN_IR_SNNOPS_H
