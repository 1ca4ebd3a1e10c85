//===- FuseBatchNormNeuron.cpp - batch norm applied by the neuron kernel --===//
//
// A batch norm followed by a neuron layer writes the whole normalized tensor
// Y = x scale + shift only for the neuron kernel to read it back. The
// neuron kernel can read x instead and apply the per-channel affine on
// load: in training the scale and shift that the batch norm's statistics
// and finish launches compute (its apply launch goes away), in inference
// the affine of the running statistics (the batch norm goes away).
//
// In training the neuron backward writes gY = dL/dY for batch_norm_bwd,
// whose first kernel reads gY and x back to sum gY and gY xhat per channel.
// When gY goes to that batch_norm_bwd alone, the neuron backward reads x
// and the saved statistics and computes those sums itself, per block in a
// fixed order (deterministic): the batch norm's statistics kernel goes away.
//
// A training lif or if layer so fused need not save H either: its
// backward can read x instead (it reads x anyway for the sums above) and
// recompute H with the forward's scale and shift, and the forward then
// writes the membrane every few steps only.
//
// The layer gets `snn.fused_batch_norm = {spatial_rank, eps[, backward]
// [, recompute]}` (FusedBatchNorm.h); both ops stay in the IR, so every
// other pass reads it unchanged.
//
//===----------------------------------------------------------------------===//

#include "FuseBatchNormNeuron.h"

#include "snn/Dialect/SNN/IR/FusedBatchNorm.h"
#include "snn/Dialect/SNN/IR/FusedPool.h"
#include "snn/Dialect/SNN/IR/SNNOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::snn;

/// Readers of the batch norm's output other than `neuron`; batch_norm_bwd
/// names it only to find the saved statistics.
static unsigned countOtherUsers(BatchNormOp bn, Operation *neuron) {
  unsigned count = 0;
  for (OpOperand &use : bn.getOutput().getUses()) {
    Operation *user = use.getOwner();
    if (user == neuron)
      continue;
    if (auto bwd = dyn_cast<BatchNormBwdOp>(user);
        bwd && &use == &bwd.getForwardMutable())
      continue;
    ++count;
  }
  return count;
}

/// Why `neuron` cannot apply `bn` on load, or an empty string.
static std::string getFusionFailure(Operation *neuron, BatchNormOp bn) {
  if (isa<PLIFOp>(neuron))
    return "snn.plif is not fused with its batch norm yet";
  if (!getInitState(neuron).empty())
    return "a layer split in time (--snn-split-time) reads its input on "
           "another rank's schedule";
  if (llvm::count(neuron->getOperands(), bn.getOutput()) != 1)
    return "the layer reads the batch norm's output more than once";
  if (unsigned others = countOtherUsers(bn, neuron))
    return llvm::formatv("the batch norm's output has {0} other user(s) "
                         "besides the layer",
                         others);
  auto type = cast<RankedTensorType>(bn.getOutput().getType());
  if (!type.getElementType().isF32())
    return "generated neuron kernels are f32 only";
  if (!type.hasStaticShape())
    return "the batch norm's output has a dynamic shape";
  // T and B lead: the batch norm's rows hold whole steps of the layer.
  if (type.getRank() < 3 + bn.getSpatialRank())
    return "the batch norm's channels are not behind the time and batch dims";
  return "";
}

BatchNormFusion mlir::snn::fuseBatchNormIntoNeuron(Operation *neuron) {
  auto layer = cast<NeuronOpInterface>(neuron);
  auto bn = layer.getInput().getDefiningOp<BatchNormOp>();
  if (!bn)
    return BatchNormFusion::NoBatchNorm;
  std::string failure = getFusionFailure(neuron, bn);
  if (!failure.empty()) {
    neuron->emitRemark() << "not fused with the preceding snn.batch_norm: "
                         << failure;
    return BatchNormFusion::Unfused;
  }
  Builder b(neuron->getContext());
  neuron->setAttr(
      kFusedBatchNormAttrName,
      b.getDictionaryAttr(
          {b.getNamedAttr("spatial_rank",
                          b.getI64IntegerAttr(bn.getSpatialRank())),
           b.getNamedAttr("eps", b.getF64FloatAttr(
                                     bn.getEps().convertToDouble()))}));
  auto type = cast<RankedTensorType>(bn.getOutput().getType());
  double mib = type.getNumElements() * 4.0 / (1 << 20);
  neuron->emitRemark() << "fused with the preceding snn.batch_norm: the "
                       << llvm::formatv("{0:F1}", mib)
                       << " MiB normalized tensor is not written";
  return BatchNormFusion::Fused;
}

/// Sets `key` in the snn.fused_batch_norm of `neuron`.
static void setFusedBatchNormEntry(Operation *neuron, StringRef key,
                                   Attribute value) {
  NamedAttrList attrs(
      neuron->getAttrOfType<DictionaryAttr>(kFusedBatchNormAttrName));
  attrs.set(key, value);
  neuron->setAttr(kFusedBatchNormAttrName,
                  attrs.getDictionary(neuron->getContext()));
}

/// The layer's neuron backward (the snn.neuron_bwd of its output), or null.
static NeuronBwdOp getNeuronBackward(Operation *neuron) {
  for (OpOperand &use : neuron->getResult(0).getUses())
    if (auto bwd = dyn_cast<NeuronBwdOp>(use.getOwner());
        bwd && &use == &bwd.getForwardMutable())
      return bwd;
  return nullptr;
}

/// Why `bwd`, the neuron backward of `neuron`, cannot compute the sums of
/// the backward of `bn`, or an empty string.
static std::string getBackwardFusionFailure(Operation *neuron,
                                            NeuronBwdOp bwd, BatchNormOp bn) {
  Value gy = bwd.getGradInput();
  auto bnBwd = gy.hasOneUse() ? dyn_cast<BatchNormBwdOp>(*gy.user_begin())
                              : BatchNormBwdOp();
  if (!bnBwd || bnBwd.getGradOutput() != gy ||
      bnBwd.getForward() != bn.getOutput())
    return "the gradient of the batch norm's output has other users than "
           "its snn.batch_norm_bwd";
  if (bnBwd.getInput() != bn.getInput())
    return "the snn.batch_norm_bwd reads another input than the batch norm";
  // The neurons of a thread (NeuronSpec::getWidth): a pooled layer's
  // window, else 4 when the step's neurons are a multiple of 4.
  auto type = cast<RankedTensorType>(bn.getOutput().getType());
  int64_t spatial = 1;
  for (int64_t d : type.getShape().take_back(bn.getSpatialRank()))
    spatial *= d;
  int64_t width = type.getNumElements() / type.getDimSize(0) % 4 == 0 ? 4 : 1;
  if (std::optional<FusedPool> pool = getFusedPool(neuron))
    width = pool->kh * pool->kw;
  if (!getBatchNormBackwardPlaneSlots(spatial, width))
    return llvm::formatv("a backward thread's {0} neurons span two channels "
                         "(a channel has {1} positions)",
                         width, spatial);
  return "";
}

BatchNormFusion mlir::snn::fuseBatchNormBackwardIntoNeuron(Operation *neuron) {
  NeuronBwdOp bwd = getNeuronBackward(neuron);
  if (!bwd)
    return BatchNormFusion::NoBatchNorm;
  auto bn = cast<NeuronOpInterface>(neuron).getInput().getDefiningOp<BatchNormOp>();
  std::string failure = getBackwardFusionFailure(neuron, bwd, bn);
  if (!failure.empty()) {
    neuron->emitRemark() << "batch norm backward not fused: " << failure;
    return BatchNormFusion::Unfused;
  }
  setFusedBatchNormEntry(neuron, "backward",
                         Builder(neuron->getContext()).getBoolAttr(true));
  neuron->emitRemark() << "batch norm backward fused: the neuron backward "
                          "sums gY and gY xhat per channel (the batch norm's "
                          "statistics kernel is not run)";
  return BatchNormFusion::Fused;
}

BatchNormFusion mlir::snn::fuseRecomputeIntoNeuron(Operation *neuron) {
  if (!getNeuronBackward(neuron))
    return BatchNormFusion::NoBatchNorm;
  if (!isa<LIFOp, IFOp>(neuron)) {
    neuron->emitRemark() << "saves H for its backward: only lif and if "
                            "layers recompute H (a cuba_lif layer would need "
                            "its current checkpointed too)";
    return BatchNormFusion::Unfused;
  }
  int64_t steps =
      cast<RankedTensorType>(neuron->getResult(0).getType()).getDimSize(0);
  int64_t chunk = std::min(steps, kFusedRecomputeChunk);
  setFusedBatchNormEntry(neuron, "recompute",
                         Builder(neuron->getContext()).getI64IntegerAttr(chunk));
  neuron->emitRemark() << "recomputes H from the batch norm's input in its "
                          "backward (chunks of "
                       << chunk << " steps): H is not saved";
  return BatchNormFusion::Fused;
}
