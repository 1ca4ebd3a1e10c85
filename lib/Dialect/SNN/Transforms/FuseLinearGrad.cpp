//===- FuseLinearGrad.cpp - a thin linear's gx in the neuron backward -----===//
//
// The backward of a readout y = S Wᵀ with few outputs C writes the input
// gradient gx = gy W, [T, B, F] (75 MB for the SHD net's 1472-neuron layer
// at batch 128), only for the layer's neuron backward to read it back; the
// GEMM itself is 2 C flops per element. When nothing else reads gx and the
// layer's surrogate has a finite band, the neuron backward uses gx only
// where |H - v_th| <= band (0.2-0.4% of the SHD layer's entries at 1-5%
// activity): it forms gy[t, b, :] W itself at those steps, from W and gy
// in cache (FusedLinearGrad.h). This selects those pairs.
//
//===----------------------------------------------------------------------===//

#include "FuseLinearGrad.h"
#include "FusionRemarks.h"

#include "snn/Dialect/SNN/IR/BandMaskedGrad.h"
#include "snn/Dialect/SNN/IR/FusedBatchNorm.h"
#include "snn/Dialect/SNN/IR/FusedLinearGrad.h"
#include "snn/Dialect/SNN/IR/FusedPool.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::snn;

/// Why the neuron backward of `neuron` cannot compute gx of `bwd` (empty
/// when it can).
static std::string whyNotFused(LinearBwdOp bwd, Operation *neuron) {
  if (!isa<LIFOp, IFOp, PLIFOp, CubaLIFOp>(neuron))
    return "the layer " + describeForRemark(neuron) +
           " is not a multi-step spiking layer with a generated kernel";
  if (!hasFiniteGradBand(neuron))
    return "the layer's surrogate has no finite grad_band (set "
           "grad-threshold in --snn-autodiff): every entry would need gy W, "
           "and a thread's C weights per neuron do not fit its registers";
  auto type = cast<RankedTensorType>(neuron->getResult(0).getType());
  auto weight = cast<RankedTensorType>(bwd.getWeight().getType());
  if (!type.getElementType().isF32() || !weight.getElementType().isF32())
    return "the tensors are not f32";
  if (!type.hasStaticShape() || !weight.hasStaticShape())
    return "the shapes are not static";
  if (neuron->hasAttr(kFusedPoolAttrName))
    return "the layer is fused with its pooling";
  if (std::optional<FusedBatchNorm> bn = getFusedBatchNorm(neuron);
      bn && bn->backward)
    return "the layer's backward sums its batch norm's gradient";
  if (!getInitState(neuron).empty() || !getFinalState(neuron).empty())
    return "the layer is split in time";
  int64_t outputs = weight.getDimSize(0), features = weight.getDimSize(1);
  if (outputs > kMaxFusedLinearGradOutputs)
    return "the linear has " + std::to_string(outputs) +
           " outputs (at most " + std::to_string(kMaxFusedLinearGradOutputs) +
           ": each backward thread keeps its neurons' weight columns in "
           "registers)";
  if (features % kFusedLinearGradFeatureMultiple != 0)
    return "its " + std::to_string(features) +
           " input features are not a multiple of " +
           std::to_string(kFusedLinearGradFeatureMultiple);
  return "";
}

bool mlir::snn::fuseLinearGradIntoNeuronBackward(LinearBwdOp bwd) {
  // An event-driven gx sums gy's nonzeros only (and may be computed in the
  // layer's band, FuseBandMask.cpp): not this fusion's.
  if (!bwd.getNeedGx() || bwd.getEventDriven())
    return false;
  // Only a neuron backward that alone reads gx as its spikes' gradient is a
  // candidate: anything else needs gx in memory.
  Operation *neuron = getGradientReadingNeuron(bwd);
  if (!neuron)
    return false;
  std::string why = whyNotFused(bwd, neuron);
  if (!why.empty()) {
    bwd.emitRemark() << "input gradient not computed in the neuron backward "
                        "of "
                     << describeForRemark(neuron) << ": " << why;
    return false;
  }
  auto weight = cast<RankedTensorType>(bwd.getWeight().getType());
  auto gx = cast<RankedTensorType>(bwd.getGrads().front().getType());
  OpBuilder b(bwd);
  neuron->setAttr(kFusedLinearGradAttrName,
                  b.getI64IntegerAttr(weight.getDimSize(0)));
  bwd->setAttr(kGxInNeuronBwdAttrName, b.getUnitAttr());
  double mib = gx.getNumElements() * 4.0 / (1 << 20);
  bwd.emitRemark() << "input gradient computed in the neuron backward of "
                   << describeForRemark(neuron) << ": the "
                   << llvm::formatv("{0:F1}", mib)
                   << " MiB gradient is not written";
  return true;
}
