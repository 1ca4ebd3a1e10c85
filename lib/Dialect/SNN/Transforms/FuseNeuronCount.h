//===- FuseNeuronCount.h - event layer input counts in neuron kernels -*- C++ -*-===//

#ifndef SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSENEURONCOUNT_H
#define SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSENEURONCOUNT_H

#include "mlir/IR/Operation.h"

namespace mlir::snn {

/// What fuseCountsIntoNeuron did to one layer, per direction.
struct CountFusion {
  unsigned fused = 0, unfused = 0;
};

/// Marks the multi-step neuron layer `op` with snn.fused_spike_count when
/// its spikes are the input of one event-driven snn.linear, and with
/// snn.fused_grad_count when its neuron backward's input gradient is the
/// output gradient of one event-driven snn.linear_bwd; a remark on each such
/// event layer says whether its count was fused and why not.
CountFusion fuseCountsIntoNeuron(Operation *op);

} // namespace mlir::snn

#endif // SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSENEURONCOUNT_H
