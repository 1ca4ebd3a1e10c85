//===- FuseBandMask.h - input gradients masked by a surrogate band -*- C++
//-*-===//

#ifndef SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSEBANDMASK_H
#define SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSEBANDMASK_H

#include "snn/Dialect/SNN/IR/SNNOps.h"

namespace mlir::snn {

/// Marks the event-driven `bwd` (with an input gradient) with
/// snn.band_masked_gx when that gradient feeds only the neuron backward of
/// a banded layer whose band the kernel can test; a remark says which layer
/// or why not. Returns whether it marked `bwd`.
bool fuseBandMaskIntoGradient(LinearBwdOp bwd);

} // namespace mlir::snn

#endif // SNN_LIB_DIALECT_SNN_TRANSFORMS_FUSEBANDMASK_H
