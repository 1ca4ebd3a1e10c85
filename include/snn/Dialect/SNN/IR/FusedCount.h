//===- FusedCount.h - input counts of event layers in neuron kernels -*- C++ -*-===//
//
// An event-driven linear layer (`--snn-sparsify`) first counts the nonzeros
// of its input to choose its path. When that input is the spikes of a
// neuron layer (forward) or the input gradient of its neuron backward
// (backward), `--snn-fuse` marks the layer: its forward kernels count the
// spikes they write (`snn.fused_spike_count`), its backward kernel the
// gradient entries it writes (`snn.fused_grad_count`), and write the
// layer's decision, so that no separate `spike_density` kernel re-reads the
// tensor (docs/artifact-format.md, "Counts fused into neuron kernels").
//
//===----------------------------------------------------------------------===//

#ifndef SNN_DIALECT_SNN_IR_FUSEDCOUNT_H
#define SNN_DIALECT_SNN_IR_FUSEDCOUNT_H

#include "snn/Dialect/SNN/IR/SNNOps.h"

namespace mlir::snn {

constexpr llvm::StringLiteral kFusedSpikeCountAttrName =
    "snn.fused_spike_count";
constexpr llvm::StringLiteral kFusedGradCountAttrName = "snn.fused_grad_count";

/// The event-driven snn.linear ops that read `spikes` (directly or through
/// snn.flatten, which keeps every element).
inline SmallVector<LinearOp> getEventLinearReaders(Value spikes) {
  SmallVector<LinearOp> readers;
  SmallVector<Value> values{spikes};
  while (!values.empty()) {
    Value v = values.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (auto flatten = dyn_cast<FlattenOp>(user))
        values.push_back(flatten.getResult());
      else if (auto linear = dyn_cast<LinearOp>(user);
               linear && linear.getEventDriven() && linear.getInput() == v)
        readers.push_back(linear);
    }
  }
  return readers;
}

/// The event-driven snn.linear_bwd ops whose output gradient is `gx`.
inline SmallVector<LinearBwdOp> getEventLinearBwdReaders(Value gx) {
  SmallVector<LinearBwdOp> readers;
  for (Operation *user : gx.getUsers())
    if (auto bwd = dyn_cast<LinearBwdOp>(user);
        bwd && bwd.getEventDriven() && bwd.getGradOutput() == gx)
      readers.push_back(bwd);
  return readers;
}

/// The snn.neuron_bwd of the multi-step layer `op` (null when none reads
/// its spikes as the forward operand).
inline NeuronBwdOp getNeuronBackward(Operation *op) {
  for (OpOperand &use : op->getResult(0).getUses())
    if (auto bwd = dyn_cast<NeuronBwdOp>(use.getOwner());
        bwd && &use == &bwd.getForwardMutable())
      return bwd;
  return {};
}

} // namespace mlir::snn

#endif // SNN_DIALECT_SNN_IR_FUSEDCOUNT_H
