//===- TransposeKernels.h - the generated kernel of snn.transpose -*- C++ -*-===//
//
// A permutation of a tensor's dims as an op kernel (OpKernels.h): one thread
// per output element, which reads its input element. The spec keeps the
// permutation with size-1 dims dropped and the runs of dims that stay
// adjacent merged ([T, B, C, H, W] -> [T, B, H, W, C] is [T B, C, H W] ->
// [T B, H W, C]), so the index arithmetic has as few divisions as the copy
// allows and equal copies share a kernel.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_CONVERSION_NEURONTOGPU_TRANSPOSEKERNELS_H
#define SNN_CONVERSION_NEURONTOGPU_TRANSPOSEKERNELS_H

#include "snn/Conversion/NeuronToGPU/OpKernels.h"

namespace mlir::snn {

/// The kernel of y = transpose(x, permutation), x of shape `input`.
OpKernelSpec makeTransposeKernelSpec(ArrayRef<int64_t> input,
                                     ArrayRef<int64_t> permutation);

/// Emits, at the insertion point, the code of thread `i` (an output
/// element) of a transpose kernel over (x, y).
void emitTransposeElement(OpBuilder &b, Location loc, const OpKernelSpec &spec,
                          ValueRange args, Value i);

} // namespace mlir::snn

#endif // SNN_CONVERSION_NEURONTOGPU_TRANSPOSEKERNELS_H
