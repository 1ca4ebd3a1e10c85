//===- NeuronSerialization.h - neuron ops as manifest ops -------*- C++ -*-===//

#ifndef SNN_LIB_TARGET_MODULE_NEURONSERIALIZATION_H
#define SNN_LIB_TARGET_MODULE_NEURONSERIALIZATION_H

#include "snn/Dialect/SNN/IR/SNNOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/JSON.h"

namespace mlir::snn {

/// Registers a per-neuron parameter (`param` of the layer, e.g. "v_th") as a
/// constant tensor and returns its id.
using NeuronConstantFn =
    function_ref<int64_t(StringRef param, DenseFPElementsAttr values)>;

/// {"kind", "alpha", "theta_grad" (when given)}.
llvm::json::Object serializeSurrogate(SurrogateAttr attr);

/// The manifest's `model` of a multi-step neuron op ("lif", "if", "plif",
/// "li", "cuba_lif").
StringRef getNeuronModelName(Operation *op);

/// Writes the attributes of the manifest's `neuron` op for `op`: `model`,
/// `features` and every parameter with its default filled in (DESIGN §2).
/// Per-neuron parameters become constant tensors through `addConstant`; their
/// ids are appended to `paramInputs` in the kernel ABI order (plif's weight
/// operand is not among them: it is an operand).
void serializeNeuronAttributes(Operation *op, llvm::json::Object &json,
                               SmallVectorImpl<int64_t> &paramInputs,
                               NeuronConstantFn addConstant);

/// The snn.add whose result is only the input of the step neuron op `op` in
/// the same time-loop body: its `neuron_step` reads both operands (an
/// `"addend"`) instead of a separate add. Null otherwise.
AddOp getFoldedStepAddend(Operation *op);

} // namespace mlir::snn

#endif // SNN_LIB_TARGET_MODULE_NEURONSERIALIZATION_H
