//===- FuseBatchNormNeuron.h - batch norm applied by the neuron kernel ----===//
//
// The batch norm part of --snn-fuse (FuseBatchNormNeuron.cpp), called by
// the pass for each multi-step neuron layer.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSEBATCHNORMNEURON_H
#define SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSEBATCHNORMNEURON_H

#include "mlir/IR/Operation.h"

namespace mlir::snn {

enum class BatchNormFusion {
  NoBatchNorm, ///< the layer's input is not an snn.batch_norm
  Fused,
  Unfused, ///< with a remark that says why
};

/// Marks the multi-step neuron layer `neuron` with snn.fused_batch_norm when
/// its input is an snn.batch_norm that it can apply on load; emits a remark
/// on the layer either way.
BatchNormFusion fuseBatchNormIntoNeuron(Operation *neuron);

/// In training, sets `backward` in the snn.fused_batch_norm of `neuron` (a
/// layer fuseBatchNormIntoNeuron fused, after the pooling fusion, which
/// sets the backward's threads) when its neuron backward can compute the
/// batch norm backward's sums; emits a remark either way. NoBatchNorm when
/// the layer has no neuron backward (inference).
BatchNormFusion fuseBatchNormBackwardIntoNeuron(Operation *neuron);

/// In training, sets `recompute` in the snn.fused_batch_norm of `neuron` (a
/// layer fuseBatchNormIntoNeuron fused) when it is a lif or if layer: its
/// backward recomputes H from the batch norm's input instead of reading a
/// saved H; emits a remark either way. NoBatchNorm when the layer has no
/// neuron backward (inference).
BatchNormFusion fuseRecomputeIntoNeuron(Operation *neuron);

} // namespace mlir::snn

#endif // SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSEBATCHNORMNEURON_H
