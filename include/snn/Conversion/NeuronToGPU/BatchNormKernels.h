//===- BatchNormKernels.h - generated batch norm kernels --------*- C++ -*-===//
//
// Batch norm (training and eval) and its training gradient as op kernels
// (OpKernels.h), x viewed as [M, C, S]. Training forward and backward are
// three kernels each, launched in turn by one `kernel` op, sharing a
// scratch tensor (getBatchNormScratchElements):
//
//   stats   a block per (channel, part of the rows): f64 sums over the
//           part's elements, a tree in shared memory, the two sums written
//           to the scratch as f32 (high, low) pairs;
//   finish  a thread per channel: combines the parts in a fixed order (the
//           results are deterministic), writes the statistics (forward) or
//           ggamma and gbeta (backward) and the per-channel terms of the
//           elementwise pass to the scratch;
//   apply   a thread per `width` elements (16-byte accesses when S % 4 ==
//           0): y, resp. gx.
//
// Eval is the apply pass alone, its affine from the running statistics.
// The host functions run the same code over a range of work items (the
// blocks of stats, the threads of finish and apply, the channels of eval),
// one element at a time.
//
// Tensors in ABI order: stats x, scratch; finish x, gamma, beta,
// running_mean, running_var, saved_mean, saved_invstd, scratch; apply x,
// scratch, y; eval x, gamma, beta, running_mean, running_var, y; bwd_stats
// gy, x, saved_mean, saved_invstd, scratch; bwd_finish gamma, saved_invstd,
// scratch, ggamma, gbeta; bwd_apply gy, x, saved_mean, saved_invstd,
// scratch, gx.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_CONVERSION_NEURONTOGPU_BATCHNORMKERNELS_H
#define SNN_CONVERSION_NEURONTOGPU_BATCHNORMKERNELS_H

#include "snn/Conversion/NeuronToGPU/OpKernels.h"

namespace mlir::snn {

/// The kernels, in launch order, of a batch norm over x of shape `input`
/// whose last `spatialRank` dims are spatial and whose dim before them is
/// the channel: training forward (`training`: stats, finish, apply), eval
/// forward (eval), or the training gradient (`backward`: bwd_stats,
/// bwd_finish, bwd_apply).
SmallVector<OpKernelSpec, 3>
makeBatchNormKernelSpecs(ArrayRef<int64_t> input, int64_t spatialRank,
                         bool training, bool backward, double eps = 1e-5,
                         double momentum = 0.1, bool accumulate = false);

/// Elements (f32) of the scratch tensor of a training batch norm's kernels:
/// 4 per statistics block (two sums, each as an f32 high and low part),
/// then 3 per channel (the finish kernel's terms for the apply kernel).
int64_t getBatchNormScratchElements(const BatchNormGeometry &g);

/// Element of the scratch where the finish kernel writes the scale of
/// channel 0 (the scales of the C channels, then their shifts): what a
/// neuron kernel fused with the batch norm (--snn-fuse) reads.
int64_t getBatchNormTermOffset(const BatchNormGeometry &g);

/// Whether the kernel is one of batch norm's.
bool isBatchNorm(const OpKernelSpec &spec);

/// Tensors of a batch norm kernel and their sizes (the ABI order above).
unsigned getBatchNormTensorCount(const OpKernelSpec &spec);
int64_t getBatchNormTensorSize(const OpKernelSpec &spec, unsigned tensor);

/// Blocks of kOpKernelBlockSize threads.
int64_t getBatchNormGridSize(const OpKernelSpec &spec);

/// Shared memory of a statistics block (two f64 per thread), or null for
/// the other kernels.
MemRefType getBatchNormSharedType(const OpKernelSpec &spec, MLIRContext *ctx);

/// Emits, at the insertion point of a GPU kernel that block `block`, thread
/// `lane` (index values) run, the code of a batch norm kernel over `args`;
/// `shared` is the block's getBatchNormSharedType() memory (stats only).
void emitBatchNormGPUKernel(OpBuilder &b, Location loc,
                            const OpKernelSpec &spec, ValueRange args,
                            Value shared, Value block, Value lane);

/// Work items of the ranged host function (HostKernelRange.h): the
/// statistics blocks (channel, part), the finish kernels' channels, the
/// elements of apply, the channels of eval (its affine once per channel).
/// No two items write the same output, so any
/// split over CPU threads gives the same bits.
int64_t getBatchNormHostItems(const OpKernelSpec &spec);

/// Elements of x (or partial sums) one host work item reads: what sizes
/// its CPU thread grain.
int64_t getBatchNormHostItemWork(const OpKernelSpec &spec);

/// Emits, at the insertion point of a host function, work item `item`
/// (index, below getBatchNormHostItems) of the kernel, one element at a
/// time.
void emitBatchNormHostItem(OpBuilder &b, Location loc,
                           const OpKernelSpec &spec, ValueRange args,
                           Value item);

} // namespace mlir::snn

#endif // SNN_CONVERSION_NEURONTOGPU_BATCHNORMKERNELS_H
