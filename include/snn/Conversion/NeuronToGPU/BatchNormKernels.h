//===- BatchNormKernels.h - generated batch norm kernels --------*- C++ -*-===//
//
// Batch norm (training and eval) and its training gradient as op kernels
// (OpKernels.h), x viewed as [M, C, S]. Training forward and backward run a
// GPU block per channel: each thread sums a strided share of the channel's
// M*S elements in f64 (unrolled: several loads in flight), the block
// reduces the sums in shared memory, then
// every thread writes its share of the output. The host function runs the
// same per-element code in a loop per channel. Eval is elementwise on the
// GPU, a loop per channel on the host.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_CONVERSION_NEURONTOGPU_BATCHNORMKERNELS_H
#define SNN_CONVERSION_NEURONTOGPU_BATCHNORMKERNELS_H

#include "snn/Conversion/NeuronToGPU/OpKernels.h"

namespace mlir::snn {

/// The spec of a batch norm kernel over x of shape `input` whose last
/// `spatialRank` dims are spatial and whose dim before them is the channel:
/// training forward (`training`), eval forward, or the training gradient
/// (`backward`).
OpKernelSpec makeBatchNormKernelSpec(ArrayRef<int64_t> input,
                                     int64_t spatialRank, bool training,
                                     bool backward, double eps = 1e-5,
                                     double momentum = 0.1,
                                     bool accumulate = false);

/// Whether the kernel reduces per channel (a block per channel on the GPU).
bool isBatchNormReduction(const OpKernelSpec &spec);

/// Shared memory of a reducing kernel's block (kBatchNormBlockSize
/// threads): two f64 per thread.
MemRefType getBatchNormScratchType(MLIRContext *ctx);

/// Emits, at the insertion point of a GPU kernel whose block `channel` and
/// thread `lane` it runs as, the code of a reducing batch norm kernel over
/// `args` (ABI order of OpKernelSpec::getTensorsPerSegment); `scratch` is
/// the block's getBatchNormScratchType() memory.
void emitBatchNormGPUChannel(OpBuilder &b, Location loc,
                             const OpKernelSpec &spec, ValueRange args,
                             Value scratch, Value channel, Value lane);

/// Whether the kernel is one of batch norm's (the host function runs it a
/// channel at a time).
bool isBatchNorm(const OpKernelSpec &spec);

/// Emits, at the insertion point of a host function, the code of channel
/// `channel` of a batch norm kernel: one GPU block's work by one thread
/// (eval: the channel's affine computed once).
void emitBatchNormHostChannel(OpBuilder &b, Location loc,
                              const OpKernelSpec &spec, ValueRange args,
                              Value channel);

/// Emits the code of element `i` of the eval forward.
void emitBatchNormEvalElement(OpBuilder &b, Location loc,
                              const OpKernelSpec &spec, ValueRange args,
                              Value i);

} // namespace mlir::snn

#endif // SNN_CONVERSION_NEURONTOGPU_BATCHNORMKERNELS_H
