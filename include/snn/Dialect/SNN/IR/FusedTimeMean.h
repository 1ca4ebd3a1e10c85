//===- FusedTimeMean.h - a loss's time mean inside the neuron scan -*- C++ -*-===//
//
// A loss on a layer's time mean (ce_membrane, ce_rate, ...) reads
// `snn.time_sum` of the layer's output, and its gradient reaches the
// layer's backward through `snn.time_broadcast`. Each is a kernel of its
// own that re-reads or writes the whole [T, B, F] tensor at the layer's
// size: the SHD readout's (20 classes) took 5.8 and 3.2 us of a 1.08 ms
// step on an H100, bound by one load latency per step. The layer's scans
// already hold every step, so in training `--snn-fuse` marks the pairs:
//
// - `snn.fused_time_mean = scale : f64` on the layer and
//   `snn.in_neuron_forward` on its snn.time_sum: the forward kernel that
//   saves H also adds up the values it writes (f64, in step order, as the
//   time_sum kernel) and writes scale times the sum [B, F];
// - `snn.fused_time_broadcast = scale : f64` on the layer and
//   `snn.in_neuron_backward` on the snn.time_broadcast that alone forms the
//   gradient of its output: the backward kernel reads the [B, F] gradient
//   once and uses scale times it (f64 product, as time_broadcast) at every
//   step.
//
// The IR keeps the ops; `--snn-compile` writes neither as a kernel of its
// own (docs/artifact-format.md, `time_mean` and `grad_broadcast`).
//
//===----------------------------------------------------------------------===//

#ifndef SNN_DIALECT_SNN_IR_FUSEDTIMEMEAN_H
#define SNN_DIALECT_SNN_IR_FUSEDTIMEMEAN_H

#include "snn/Dialect/SNN/IR/SNNOps.h"

#include <optional>

namespace mlir::snn {

constexpr llvm::StringLiteral kFusedTimeMeanAttrName = "snn.fused_time_mean";
constexpr llvm::StringLiteral kTimeSumInNeuronAttrName =
    "snn.in_neuron_forward";
constexpr llvm::StringLiteral kFusedTimeBroadcastAttrName =
    "snn.fused_time_broadcast";
constexpr llvm::StringLiteral kTimeBroadcastInNeuronAttrName =
    "snn.in_neuron_backward";

/// The scale of a layer's fused time mean or broadcast (`attrName`), none
/// when the layer has no such attribute.
inline std::optional<double> getFusedTimeScale(Operation *neuron,
                                               StringRef attrName) {
  if (auto attr = neuron->getAttrOfType<FloatAttr>(attrName))
    return attr.getValueAsDouble();
  return std::nullopt;
}

/// The snn.time_sum of the layer's output that its forward computes
/// (marked snn.in_neuron_forward), or null.
inline TimeSumOp getFusedTimeSum(Operation *neuron) {
  for (Operation *user : neuron->getResult(0).getUsers())
    if (auto sum = dyn_cast<TimeSumOp>(user);
        sum && sum->hasAttr(kTimeSumInNeuronAttrName))
      return sum;
  return {};
}

/// The snn.time_broadcast whose output the neuron backward `bwd` reads as
/// its gradient and forms itself (marked snn.in_neuron_backward), or null.
inline TimeBroadcastOp getFusedTimeBroadcast(NeuronBwdOp bwd) {
  auto broadcast = bwd.getGradOutput().getDefiningOp<TimeBroadcastOp>();
  if (!broadcast || !broadcast->hasAttr(kTimeBroadcastInNeuronAttrName))
    return {};
  return broadcast;
}

} // namespace mlir::snn

#endif // SNN_DIALECT_SNN_IR_FUSEDTIMEMEAN_H
