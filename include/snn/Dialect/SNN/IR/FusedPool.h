//===- FusedPool.h - the pooling fused into a neuron layer ------*- C++ -*-===//
//
// `--snn-fuse` marks a multi-step spiking layer whose spikes go only into a
// tiling average or sum pooling with `snn.fused_pool = {kind, kernel}` (and
// `channels_last` for a pooling of [.., H, W, C] maps). The IR keeps both
// ops; the kernel generator and the module emitter read the attribute to
// compute and write the pooled spikes in the neuron kernel.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_DIALECT_SNN_IR_FUSEDPOOL_H
#define SNN_DIALECT_SNN_IR_FUSEDPOOL_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

#include <optional>

namespace mlir::snn {

constexpr llvm::StringLiteral kFusedPoolAttrName = "snn.fused_pool";

/// The pooling a neuron layer computes: non-overlapping KH x KW windows.
struct FusedPool {
  bool average; ///< avg (the window's spike count / (KH KW)) or sum
  int64_t kh, kw;
  /// The maps are [.., H, W, C]: a window's neurons are C apart.
  bool channelsLast = false;
};

/// The fused pooling of `op`, or std::nullopt when it has none or the
/// attribute is malformed (the module emitter reports that).
inline std::optional<FusedPool> getFusedPool(Operation *op) {
  auto dict = op->getAttrOfType<DictionaryAttr>(kFusedPoolAttrName);
  if (!dict)
    return std::nullopt;
  auto kind = dict.getAs<StringAttr>("kind");
  auto kernel = dict.getAs<DenseI64ArrayAttr>("kernel");
  if (!kind || !kernel || kernel.size() != 2 || kernel[0] <= 0 ||
      kernel[1] <= 0 || (kind.getValue() != "avg" && kind.getValue() != "sum"))
    return std::nullopt;
  return FusedPool{kind.getValue() == "avg", kernel[0], kernel[1],
                   dict.contains("channels_last")};
}

} // namespace mlir::snn

#endif // SNN_DIALECT_SNN_IR_FUSEDPOOL_H
