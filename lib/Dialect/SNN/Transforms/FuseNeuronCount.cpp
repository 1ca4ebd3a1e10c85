//===- FuseNeuronCount.cpp - event layer input counts in neuron kernels ---===//
//
// An event-driven linear layer starts with a `spike_density` kernel that
// reads its whole input back to count the nonzeros. When the input is the
// spikes a neuron kernel has just written (or, in the sparse backward, the
// input gradient its backward kernel has just written), that kernel can
// count them while they are in registers and write the layer's decision
// itself. This selects those layers: one event-driven reader of the tensor
// (a second reader would need a second decision, so each keeps its own
// density kernel), a layer whose kernel writes that tensor per neuron (not
// fused with its pooling, not split in time, a backward that does not also
// sum its batch norm's gradient).
//
//===----------------------------------------------------------------------===//

#include "FuseNeuronCount.h"
#include "FusionRemarks.h"

#include "snn/Dialect/SNN/IR/FusedBatchNorm.h"
#include "snn/Dialect/SNN/IR/FusedCount.h"
#include "snn/Dialect/SNN/IR/FusedPool.h"

using namespace mlir;
using namespace mlir::snn;

/// Why the kernels of `op` cannot count the tensor (empty when they can).
static std::string whyNotCounting(Operation *op, size_t readers, bool grad) {
  if (readers > 1)
    return "its input feeds " + std::to_string(readers) +
           " event-driven layers, each with its own decision";
  if (isa<LIOp>(op))
    return "the layer is a non-spiking readout";
  if (!cast<RankedTensorType>(op->getResult(0).getType())
           .getElementType()
           .isF32())
    return "the tensor is not f32";
  if (op->hasAttr(kFusedPoolAttrName))
    return "the layer is fused with its pooling (its kernels write no "
           "per-neuron spikes)";
  if (!getInitState(op).empty() || !getFinalState(op).empty())
    return "the layer is split in time (its kernels see one rank's steps)";
  if (grad) {
    std::optional<FusedBatchNorm> bn = getFusedBatchNorm(op);
    if (bn && bn->backward)
      return "the layer's backward sums its batch norm's gradient";
  }
  return "";
}

/// Marks `op` with `attr` when `readers` is one event layer whose input its
/// kernels can count; a remark on each reader.
template <typename ReaderOp>
static void fuseCount(Operation *op, ArrayRef<ReaderOp> readers,
                      StringRef attr, bool grad, CountFusion &result) {
  if (readers.empty())
    return;
  std::string why = whyNotCounting(op, readers.size(), grad);
  StringRef what = grad ? "gradient count" : "spike count";
  for (ReaderOp reader : readers) {
    if (why.empty())
      reader.emitRemark() << what << " fused into " << describeForRemark(op);
    else
      reader.emitRemark() << what << " not fused into " << describeForRemark(op)
                          << ": " << why;
  }
  if (!why.empty()) {
    ++result.unfused;
    return;
  }
  op->setAttr(attr, UnitAttr::get(op->getContext()));
  ++result.fused;
}

CountFusion mlir::snn::fuseCountsIntoNeuron(Operation *op) {
  CountFusion result;
  SmallVector<LinearOp> forward = getEventLinearReaders(op->getResult(0));
  fuseCount<LinearOp>(op, forward, kFusedSpikeCountAttrName, false, result);
  if (NeuronBwdOp bwd = getNeuronBackward(op)) {
    SmallVector<LinearBwdOp> backward =
        getEventLinearBwdReaders(bwd.getGradInput());
    fuseCount<LinearBwdOp>(op, backward, kFusedGradCountAttrName, true,
                           result);
  }
  return result;
}
