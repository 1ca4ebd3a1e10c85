//===- FuseBatchNormNeuron.cpp - batch norm applied by the neuron kernel --===//
//
// A batch norm followed by a neuron layer writes the whole normalized tensor
// Y = x scale + shift only for the neuron kernel to read it back. The
// neuron kernel can read x instead and apply the per-channel affine on
// load: in training the scale and shift that the batch norm's statistics
// and finish launches compute (its apply launch goes away), in inference
// the affine of the running statistics (the batch norm goes away). The
// backward is unchanged: batch_norm_bwd reads x and the saved statistics,
// not Y, and the neuron backward reads the saved membrane.
//
// The layer gets `snn.fused_batch_norm = {spatial_rank, eps}` (FusedBatchNorm.h);
// both ops stay in the IR, so every other pass reads it unchanged.
//
//===----------------------------------------------------------------------===//

#include "FuseBatchNormNeuron.h"

#include "snn/Dialect/SNN/IR/FusedBatchNorm.h"
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
