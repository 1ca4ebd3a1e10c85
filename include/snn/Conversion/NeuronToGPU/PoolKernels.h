//===- PoolKernels.h - generated pooling kernels ----------------*- C++ -*-===//
//
// Average, sum and max pooling and their gradients as op kernels
// (OpKernels.h): one thread per output window in the forward and in the
// backward of windows that tile the input, one thread per input element
// (a gather, deterministic) otherwise. The window is unrolled: its geometry
// is a compile-time constant of the kernel.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_CONVERSION_NEURONTOGPU_POOLKERNELS_H
#define SNN_CONVERSION_NEURONTOGPU_POOLKERNELS_H

#include "snn/Conversion/NeuronToGPU/OpKernels.h"

namespace mlir::snn {

/// The spec of a pooling kernel (backward: its gradient) whose forward maps
/// `input` [..., C, H, W] to `output` [..., C, OH, OW] (channels last:
/// [..., H, W, C] to [..., OH, OW, C]).
OpKernelSpec makePoolKernelSpec(PoolMode mode, bool backward,
                                ArrayRef<int64_t> input,
                                ArrayRef<int64_t> output,
                                ArrayRef<int64_t> kernel,
                                ArrayRef<int64_t> stride,
                                ArrayRef<int64_t> padding,
                                bool accumulate = false,
                                bool channelsLast = false);

/// Threads of a pooling kernel: one per output element, or, in a backward
/// whose windows do not tile the input, one per input element.
int64_t getPoolKernelThreads(const OpKernelSpec &spec);

/// Emits, at the insertion point, the code of thread `i` (an index below
/// getPoolKernelThreads) of a pooling kernel over `args` (ABI order of
/// OpKernelSpec::getTensorsPerSegment).
void emitPoolElement(OpBuilder &b, Location loc, const OpKernelSpec &spec,
                     ValueRange args, Value i);

} // namespace mlir::snn

#endif // SNN_CONVERSION_NEURONTOGPU_POOLKERNELS_H
