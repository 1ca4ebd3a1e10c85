//===- FuseBandMask.cpp - input gradients masked by a surrogate band ------===//
//
// The event-driven input gradient of a linear backward, gx = gy w, sums
// every output of each row over the row's nonzero gy entries. When gx is
// the gradient of a banded layer's spikes and nothing else reads it, the
// layer's backward multiplies each entry by σ'(H - v_th), 0 outside the
// band: only the entries in the band (0.2-0.4% of the SHD net's hidden
// layer at 1-5% activity) need computing. This selects those linear
// backwards: a spiking LIF/IF/PLIF layer with a finite grad_band and a
// scalar v_th (the kernel tests |H - v_th| <= band on the saved H), f32,
// whole in time, not fused with its pooling, rows narrow enough for the
// kernel's shared lists.
//
//===----------------------------------------------------------------------===//

#include "FuseBandMask.h"
#include "FusionRemarks.h"

#include "snn/Dialect/SNN/IR/BandMaskedGrad.h"
#include "snn/Dialect/SNN/IR/FusedPool.h"

using namespace mlir;
using namespace mlir::snn;

/// The kernel keeps a row's listed gy columns and banded gx columns in
/// shared memory, about 4 (N + K) bytes: at most 8192 features keeps a
/// block within 48 KB.
static constexpr int64_t kMaxBandRowFeatures = 8192;

/// Why gx of `bwd`, the gradient of the spikes of `neuron`, cannot be
/// computed in the layer's band only (empty when it can).
static std::string whyNotMasked(LinearBwdOp bwd, Operation *neuron) {
  if (!isa<LIFOp, IFOp, PLIFOp>(neuron))
    return "the layer is " + describeForRemark(neuron) +
           " (only snn.lif, snn.if and snn.plif test their band on the "
           "saved membrane alone)";
  if (!hasFiniteGradBand(neuron))
    return "the layer's surrogate has no finite grad_band (set "
           "grad-threshold in --snn-autodiff)";
  if (!getSurrogateBand(neuron))
    return "the layer's v_th is per neuron";
  if (!cast<RankedTensorType>(neuron->getResult(0).getType())
           .getElementType()
           .isF32())
    return "the tensor is not f32";
  if (neuron->hasAttr(kFusedPoolAttrName))
    return "the layer is fused with its pooling";
  if (!getInitState(neuron).empty() || !getFinalState(neuron).empty())
    return "the layer is split in time";
  auto weight = cast<RankedTensorType>(bwd.getWeight().getType());
  int64_t features = weight.getDimSize(0) + weight.getDimSize(1);
  if (features > kMaxBandRowFeatures)
    return "its rows are too wide for the kernel's shared lists (" +
           std::to_string(features) + " input and output features, at most " +
           std::to_string(kMaxBandRowFeatures) + ")";
  return "";
}

bool mlir::snn::fuseBandMaskIntoGradient(LinearBwdOp bwd) {
  if (!bwd.getEventDriven() || !bwd.getNeedGx())
    return false;
  Operation *neuron = getGradientReadingNeuron(bwd);
  std::string why;
  if (!neuron) {
    Value gx = bwd.getGrads().front();
    why =
        gx.use_empty() ? "nothing reads its input gradient"
        : gx.hasOneUse()
            ? "its input gradient is read by " +
                  describeForRemark(*gx.getUsers().begin()) +
                  " (not a neuron backward's spike gradient)"
            : "its input gradient has " +
                  std::to_string(std::distance(gx.use_begin(), gx.use_end())) +
                  " readers";
  } else {
    why = whyNotMasked(bwd, neuron);
  }
  if (!why.empty()) {
    bwd.emitRemark() << "input gradient not masked by a surrogate band: "
                     << why;
    return false;
  }
  bwd.emitRemark() << "input gradient computed in the surrogate band of "
                   << describeForRemark(neuron) << " only";
  bwd->setAttr(kBandMaskedGxAttrName, UnitAttr::get(bwd.getContext()));
  return true;
}
