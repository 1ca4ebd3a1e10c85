//===- BlockSum.h - deterministic sums over a GPU block ---------*- C++ -*-===//
//
// The block-wide sum that the reducing op kernels (batch norm, losses) end
// with: every thread stores its partial sums in shared memory, then a tree
// adds them in a fixed order (no atomics: the same bits on every run).
//
//===----------------------------------------------------------------------===//

#ifndef SNN_LIB_CONVERSION_NEURONTOGPU_BLOCKSUM_H
#define SNN_LIB_CONVERSION_NEURONTOGPU_BLOCKSUM_H

#include "mlir/IR/Builders.h"

namespace mlir::snn {

/// The sums over the `threads` threads of the block (a power of two) of
/// each of `partials` (this thread's, number `lane`), every thread getting
/// them; `scratch` holds partials.size() * threads elements.
SmallVector<Value> emitBlockSum(OpBuilder &b, Location loc, Value scratch,
                                Value lane, int64_t threads,
                                ValueRange partials);

/// The sums of each of `partials` over the runs of `segment` threads (a
/// power of two that divides `threads`) of the block, every thread getting
/// its run's; the tree is emitBlockSum's within each run.
SmallVector<Value> emitSegmentedBlockSum(OpBuilder &b, Location loc,
                                         Value scratch, Value lane,
                                         int64_t threads, int64_t segment,
                                         ValueRange partials);

} // namespace mlir::snn

#endif // SNN_LIB_CONVERSION_NEURONTOGPU_BLOCKSUM_H
