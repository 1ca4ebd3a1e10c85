//===- FusedBatchNorm.h - the batch norm fused into a neuron layer -*- C++ -*-===//
//
// `--snn-fuse` marks a multi-step neuron layer whose input is the output of
// an snn.batch_norm that nothing else reads with
// `snn.fused_batch_norm = {spatial_rank, eps}`. The IR keeps both ops; the
// kernel generator and the module emitter read the attribute: the neuron
// kernel normalizes x on load with the batch norm's per-channel affine (in
// training the scale and shift of its statistics launches, in inference the
// running statistics), and the batch norm's output is never written.
//
// The kernel generator sees copies of the neuron ops whose input is a block
// argument, so the attribute carries what the kernel needs of the batch
// norm: the layout of x ([..., C, spatial...] with `spatial_rank` spatial
// dims) and eps.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_DIALECT_SNN_IR_FUSEDBATCHNORM_H
#define SNN_DIALECT_SNN_IR_FUSEDBATCHNORM_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <optional>

namespace mlir::snn {

constexpr llvm::StringLiteral kFusedBatchNormAttrName = "snn.fused_batch_norm";

/// The batch norm a neuron layer applies to its input on load.
struct FusedBatchNorm {
  int64_t spatialRank;
  double eps;
};

/// The fused batch norm of `op`, or std::nullopt when it has none or the
/// attribute is malformed (the module emitter reports that).
inline std::optional<FusedBatchNorm> getFusedBatchNorm(Operation *op) {
  auto dict = op->getAttrOfType<DictionaryAttr>(kFusedBatchNormAttrName);
  if (!dict)
    return std::nullopt;
  auto rank = dict.getAs<IntegerAttr>("spatial_rank");
  auto eps = dict.getAs<FloatAttr>("eps");
  if (!rank || !eps || rank.getInt() < 0)
    return std::nullopt;
  return FusedBatchNorm{rank.getInt(), eps.getValueAsDouble()};
}

} // namespace mlir::snn

#endif // SNN_DIALECT_SNN_IR_FUSEDBATCHNORM_H
