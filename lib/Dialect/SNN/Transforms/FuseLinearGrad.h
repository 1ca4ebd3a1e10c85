//===- FuseLinearGrad.h - a thin linear's gx in the neuron backward -*- C++ -*-===//

#ifndef SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSELINEARGRAD_H
#define SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSELINEARGRAD_H

#include "snn/Dialect/SNN/IR/SNNOps.h"

namespace mlir::snn {

/// Marks the dense `bwd` and the layer whose neuron backward alone reads
/// its input gradient (snn.gx_in_neuron_bwd, snn.fused_linear_grad) when
/// that backward can form gx = gy W itself (FusedLinearGrad.h); a remark
/// says so or why not. Returns whether it marked them.
bool fuseLinearGradIntoNeuronBackward(LinearBwdOp bwd);

} // namespace mlir::snn

#endif // SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSELINEARGRAD_H
