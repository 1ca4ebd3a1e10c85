//===- LossKernels.h - generated loss kernels -------------------*- C++ -*-===//
//
// The losses of docs/artifact-format.md (`loss_ce_rate`, `loss_ce_membrane`,
// `loss_mse_rate`, `loss_ce_membrane_max`) as op kernels (OpKernels.h): one
// GPU block of kOpKernelBlockSize threads for the whole batch. Thread t
// computes samples t, t + 256, ... (loss, gradient, hit) in f64 (where the
// batch's m[s, c] fits in shared memory, with m, the exps and the gradient
// a thread per (s, c): the same values), then the
// block adds the threads' partial sums in a fixed tree in shared memory:
// one launch, no atomics, the same loss bits on every run. The host
// function runs the same per-sample code in a loop over the batch. exp and
// log are f64 polynomials of the kernel's own (the GPU kernel needs no
// libdevice; host and GPU compute the same arithmetic).
//
//===----------------------------------------------------------------------===//

#ifndef SNN_CONVERSION_NEURONTOGPU_LOSSKERNELS_H
#define SNN_CONVERSION_NEURONTOGPU_LOSSKERNELS_H

#include "snn/Conversion/NeuronToGPU/OpKernels.h"

namespace mlir::snn {

/// The spec of the kernel of loss op `kind` (e.g. "loss_ce_rate") over y of
/// shape [T, B, C...]; nullopt for an unknown kind. With `gradient` the
/// kernel writes gy (args y, labels, loss, gy, correct; the training
/// step's loss); without, it only evaluates (args y, labels, loss, correct;
/// labels of -1 mark padding samples, which it skips, and the loss is the
/// mean over the other samples).
std::optional<OpKernelSpec> makeLossKernelSpec(StringRef kind,
                                               ArrayRef<int64_t> output,
                                               bool gradient);

inline bool isLossKernel(const OpKernelSpec &spec) {
  return spec.kind == OpKernelKind::Loss;
}

/// Shared memory of a loss kernel's block: three f64 per thread for the
/// block sum, and where they fit, the staged form's m[s, c] and per-sample
/// values (LossKernels.cpp).
MemRefType getLossScratchType(const OpKernelSpec &spec, MLIRContext *ctx);

/// Emits, at the insertion point of a GPU kernel that thread `lane` of the
/// single block runs, the code of a loss kernel over `args` (ABI order of
/// OpKernelSpec::getTensorsPerSegment); `scratch` is getLossScratchType().
void emitLossGPUBlock(OpBuilder &b, Location loc, const OpKernelSpec &spec,
                      ValueRange args, Value scratch, Value lane);

/// Emits, at the insertion point of a host function, the loss kernel's loop
/// over the batch.
void emitLossHost(OpBuilder &b, Location loc, const OpKernelSpec &spec,
                  ValueRange args);

} // namespace mlir::snn

#endif // SNN_CONVERSION_NEURONTOGPU_LOSSKERNELS_H
