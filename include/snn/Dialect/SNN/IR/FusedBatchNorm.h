//===- FusedBatchNorm.h - the batch norm fused into a neuron layer -*- C++ -*-===//
//
// `--snn-fuse` marks a multi-step neuron layer whose input is the output of
// an snn.batch_norm that nothing else reads with
// `snn.fused_batch_norm = {spatial_rank, eps[, backward]}`. The IR keeps
// both ops; the kernel generator and the module emitter read the attribute:
// the neuron kernel normalizes x on load with the batch norm's per-channel
// affine (in training the scale and shift of its statistics launches, in
// inference the running statistics), and the batch norm's output is never
// written.
//
// In training, `backward = true` also fuses the statistics pass of the batch
// norm's backward into the layer's neuron backward: that kernel reads x and
// the saved statistics, and adds up, per channel, sum(gY) and sum(gY xhat)
// of the gradient gY it writes (the batch norm's input gradient then needs
// only its finish and apply kernels).
//
// In training, `recompute = C` (a lif or if layer) saves no H: the forward
// keeps the membrane every C steps and the backward recomputes H from x,
// normalized again (--snn-compile recompute=C, chosen per layer). Reading x
// instead of H costs the backward nothing (with `backward` it reads x
// anyway) and the forward writes a tensor less.
//
// The kernel generator sees copies of the neuron ops whose input is a block
// argument, so the attribute carries what the kernel needs of the batch
// norm: the layout of x ([..., C, spatial...] with `spatial_rank` spatial
// dims), eps, and whether the backward is fused.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_DIALECT_SNN_IR_FUSEDBATCHNORM_H
#define SNN_DIALECT_SNN_IR_FUSEDBATCHNORM_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include "llvm/Support/MathExtras.h"

#include <optional>

namespace mlir::snn {

constexpr llvm::StringLiteral kFusedBatchNormAttrName = "snn.fused_batch_norm";

/// The longest chunk of recomputed steps (--snn-compile recompute=C), and
/// the one --snn-fuse picks for a layer fused with its batch norm (or T
/// when shorter): 8 steps of H and x stay in a thread's registers.
constexpr int64_t kMaxRecomputeChunk = 64;
constexpr int64_t kFusedRecomputeChunk = 8;

/// The batch norm a neuron layer applies to its input on load.
struct FusedBatchNorm {
  int64_t spatialRank;
  double eps;
  /// The neuron backward computes the batch norm backward's sums.
  bool backward = false;
  /// Steps per recomputed chunk of H (0: H is saved).
  int64_t recompute = 0;
};

/// The fused batch norm of `op`, or std::nullopt when it has none or the
/// attribute is malformed (the module emitter reports that).
inline std::optional<FusedBatchNorm> getFusedBatchNorm(Operation *op) {
  auto dict = op->getAttrOfType<DictionaryAttr>(kFusedBatchNormAttrName);
  if (!dict)
    return std::nullopt;
  auto rank = dict.getAs<IntegerAttr>("spatial_rank");
  auto eps = dict.getAs<FloatAttr>("eps");
  Attribute backward = dict.get("backward");
  Attribute recompute = dict.get("recompute");
  if (!rank || !eps || rank.getInt() < 0 ||
      (backward && !isa<BoolAttr>(backward)) ||
      (recompute && (!isa<IntegerAttr>(recompute) ||
                     cast<IntegerAttr>(recompute).getInt() < 1 ||
                     cast<IntegerAttr>(recompute).getInt() >
                         kMaxRecomputeChunk)))
    return std::nullopt;
  return FusedBatchNorm{
      rank.getInt(), eps.getValueAsDouble(),
      backward && cast<BoolAttr>(backward).getValue(),
      recompute ? cast<IntegerAttr>(recompute).getInt() : 0};
}

/// The steps per recomputed chunk of H of neuron layer `op` under the
/// module-wide `global` (--snn-compile recompute=C, 0: none): `global`, or
/// else its fused batch norm's `recompute` (0: the layer saves H). The
/// kernel generator and the manifest both ask here.
inline int64_t getRecomputeChunk(Operation *op, int64_t global) {
  if (global > 0)
    return global;
  std::optional<FusedBatchNorm> bn = getFusedBatchNorm(op);
  return bn ? bn->recompute : 0;
}

/// The most threads of a neuron backward kernel whose batch norm sums make
/// one partial sum: a power of two that divides the GPU block size.
constexpr int64_t kBatchNormBackwardMaxSegment = 256;

/// Thread slots of a channel plane (its `spatial` neurons, `width` a
/// thread) in a neuron backward kernel that sums the batch norm's backward:
/// the plane's threads rounded up to a power of two below
/// kBatchNormBackwardMaxSegment, else to a multiple of it, so that a tree
/// in the GPU block adds a run of a plane's slots (the slots past the
/// plane's threads add zeros). 0 when a thread's neurons span two channels.
inline int64_t getBatchNormBackwardPlaneSlots(int64_t spatial, int64_t width) {
  if (width <= 0 || spatial % width != 0)
    return 0;
  int64_t threads = spatial / width;
  if (threads >= kBatchNormBackwardMaxSegment)
    return llvm::alignTo(threads, kBatchNormBackwardMaxSegment);
  return static_cast<int64_t>(llvm::PowerOf2Ceil(threads));
}

} // namespace mlir::snn

#endif // SNN_DIALECT_SNN_IR_FUSEDBATCHNORM_H
