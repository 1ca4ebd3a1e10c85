//===- FusedLinearGrad.h - a thin linear's gx inside the neuron bwd -*- C++ -*-===//
//
// When the gradient of a banded spiking layer's spikes is the input
// gradient gx = gy W of a dense snn.linear_bwd with few outputs C (a
// readout), and nothing else reads gx, `--snn-fuse` marks the pair: the
// forward layer gets `snn.fused_linear_grad = C : i64` and the linear
// backward `snn.gx_in_neuron_bwd`. The IR keeps both ops; `--snn-compile`
// writes the linear backward without gx (its weight gradient only) and the
// layer's neuron_bwd reading gy [T, B, C] and W [C, F]: the backward uses
// gS only where |H - v_th| <= grad_band and forms gS = gy[t, b, :] W
// there, so the [T, B, F] gx is never written nor read back.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_DIALECT_SNN_IR_FUSEDLINEARGRAD_H
#define SNN_DIALECT_SNN_IR_FUSEDLINEARGRAD_H

#include "snn/Dialect/SNN/IR/SNNOps.h"

namespace mlir::snn {

constexpr llvm::StringLiteral kFusedLinearGradAttrName =
    "snn.fused_linear_grad";
constexpr llvm::StringLiteral kGxInNeuronBwdAttrName = "snn.gx_in_neuron_bwd";

/// The most linear outputs a fused backward takes: 2 C loads and flops per
/// in-band entry (the SHD readout: 20 classes).
constexpr int64_t kMaxFusedLinearGradOutputs = 32;

/// The layer's features must be a multiple of this: a thread's lanes (4 on
/// the GPU, 8 on the CPU) then lie in one sample and share gy's row.
constexpr int64_t kFusedLinearGradFeatureMultiple = 8;

/// C of a layer marked with snn.fused_linear_grad, 0 when it is not (or the
/// attribute is not a positive integer at most kMaxFusedLinearGradOutputs).
inline int64_t getFusedLinearGradOutputs(Operation *neuron) {
  auto attr = neuron->getAttrOfType<IntegerAttr>(kFusedLinearGradAttrName);
  if (!attr || attr.getInt() <= 0 ||
      attr.getInt() > kMaxFusedLinearGradOutputs)
    return 0;
  return attr.getInt();
}

/// The linear backward whose gx the neuron backward `op` computes itself
/// (its grad_output is that gx and the linear backward is marked), or null.
inline LinearBwdOp getFusedLinearGradSource(Operation *op) {
  auto bwd = dyn_cast<NeuronBwdOp>(op);
  if (!bwd)
    return nullptr;
  auto linear = bwd.getGradOutput().getDefiningOp<LinearBwdOp>();
  if (!linear || !linear->hasAttr(kGxInNeuronBwdAttrName))
    return nullptr;
  return linear;
}

} // namespace mlir::snn

#endif // SNN_DIALECT_SNN_IR_FUSEDLINEARGRAD_H
