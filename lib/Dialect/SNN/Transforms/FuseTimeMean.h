//===- FuseTimeMean.h - a loss's time mean in the neuron scans --*- C++ -*-===//

#ifndef SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSETIMEMEAN_H
#define SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSETIMEMEAN_H

#include "snn/Dialect/SNN/IR/SNNOps.h"

namespace mlir::snn {

/// What fuseTimeMeanIntoNeuron marked.
struct TimeMeanFusion {
  bool mean = false, broadcast = false;
};

/// In training (the layer has a snn.neuron_bwd), marks the multi-step layer
/// `neuron` and the snn.time_sum of its output (snn.fused_time_mean,
/// snn.in_neuron_forward), and the snn.time_broadcast that alone forms the
/// gradient its backward reads (snn.fused_time_broadcast,
/// snn.in_neuron_backward), when the layer's kernels can compute them
/// (FusedTimeMean.h); a remark says so or why not.
TimeMeanFusion fuseTimeMeanIntoNeuron(Operation *neuron);

} // namespace mlir::snn

#endif // SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSETIMEMEAN_H
