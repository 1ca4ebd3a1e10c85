//===- SNNInterfaces.td - snn op interfaces ----------------*- tablegen -*-===//

#ifndef SNN_INTERFACES_TD
#define SNN_INTERFACES_TD

include "mlir/IR/OpBase.td"

def SNN_NeuronOpInterface : OpInterface<"NeuronOpInterface"> {
  let cppNamespace = "::mlir::snn";
  let description = [{
    A stateful neuron layer. Multi-step neuron ops (`snn.lif`, ...) scan the
    leading time axis of `[T, B, features...]`; step neuron ops
    (`snn.lif_step`, ...) advance the membrane state by one step on
    `[B, features...]` and return the next state.
  }];
  let methods = [
    InterfaceMethod<"The input current (or input spikes).", "::mlir::Value",
      "getInput">,
    InterfaceMethod<"True for a per-step op (state in operands and results).",
      "bool", "isStepForm">,
    InterfaceMethod<[{Number of leading dimensions that are not features:
      2 ([T, B]) for the multi-step form, 1 ([B]) for the step form.}],
      "unsigned", "getNumLeadingDims", (ins), [{
        return $_op.isStepForm() ? 1 : 2;
      }]>,
    InterfaceMethod<"Number of state tensors (membrane, synaptic current, ...).",
      "unsigned", "getNumStates">,
  ];
}

#endif // SNN_INTERFACES_TD
