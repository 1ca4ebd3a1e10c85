//===- BandMaskedGrad.h - input gradients only in a band ---*- C++ -*-===//
//
// In the sparse backward a hidden layer's neuron backward uses the gradient
// of its spikes only as gS σ'(H - v_th), and σ' is 0 where |H - v_th| >
// grad_band. When that gradient is the input gradient of one event-driven
// snn.linear_bwd (the next layer's), `--snn-fuse` marks the linear_bwd with
// `snn.band_masked_gx`: its event-driven gx is computed only where the
// layer's saved H is in the band, 0 elsewhere (the manifest op
// `event_linear_band`, docs/artifact-format.md).
//
//===----------------------------------------------------------------------===//

#ifndef SNN_DIALECT_SNN_IR_BANDMASKEDGRAD_H
#define SNN_DIALECT_SNN_IR_BANDMASKEDGRAD_H

#include "snn/Dialect/SNN/IR/SNNOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace mlir::snn {

constexpr llvm::StringLiteral kBandMaskedGxAttrName = "snn.band_masked_gx";

/// The multi-step neuron layer whose neuron backward alone reads the input
/// gradient of `bwd` as the gradient of its spikes (null when there is no
/// such layer: no gx, other readers, not a neuron backward).
inline Operation *getGradientReadingNeuron(LinearBwdOp bwd) {
  if (!bwd.getNeedGx() || bwd.getGrads().empty())
    return nullptr;
  Value gx = bwd.getGrads().front();
  if (!gx.hasOneUse())
    return nullptr;
  OpOperand &use = *gx.use_begin();
  auto neuronBwd = dyn_cast<NeuronBwdOp>(use.getOwner());
  if (!neuronBwd || &use != &neuronBwd.getGradOutputMutable())
    return nullptr;
  return neuronBwd.getForward().getDefiningOp();
}

/// The test a band-masked gradient makes on the layer's saved H:
/// |H - vTh| <= band.
struct SurrogateBand {
  double vTh, band;
};

/// Whether `neuron`'s surrogate has a finite grad_band.
inline bool hasFiniteGradBand(Operation *neuron) {
  auto surrogate = neuron->getAttrOfType<SurrogateAttr>("surrogate");
  FloatAttr band = surrogate ? surrogate.getGradBand() : FloatAttr();
  return band && std::isfinite(band.getValueAsDouble());
}

/// The band of a spiking snn.lif, snn.if or snn.plif layer whose surrogate
/// has a finite grad_band and whose v_th is one f64 for every neuron.
inline std::optional<SurrogateBand> getSurrogateBand(Operation *neuron) {
  Attribute vTh =
      llvm::TypeSwitch<Operation *, Attribute>(neuron)
          .Case<LIFOp, IFOp, PLIFOp>([](auto op) { return op.getVTh(); })
          .Default([](Operation *) { return Attribute(); });
  auto scalar = dyn_cast_if_present<FloatAttr>(vTh);
  if (!scalar || !hasFiniteGradBand(neuron))
    return std::nullopt;
  double band = neuron->getAttrOfType<SurrogateAttr>("surrogate")
                    .getGradBand()
                    .getValueAsDouble();
  return SurrogateBand{scalar.getValueAsDouble(), band};
}

} // namespace mlir::snn

#endif // SNN_DIALECT_SNN_IR_BANDMASKEDGRAD_H
