//===- HostKernelRange.h - host kernels over a range of work items -*- C++ -*-===//
//
// A host (CPU) kernel runs the GPU kernel's independent work items (neuron
// threads, elements, channels, rows) one after the other. To let the runtime
// spread them over CPU threads, every host function takes a range: its
// arguments are the kernel's tensors followed by `begin` and `end` (index),
// and it runs the items [begin, min(end, items)). Items never share an
// output, so any split gives the same bits as one call over everything.
// The function carries its item count and the fewest items worth a CPU
// thread of their own as attributes; the library exports both
// (docs/artifact-format.md, "CPU kernels and threads").
//
//===----------------------------------------------------------------------===//

#ifndef SNN_CONVERSION_NEURONTOGPU_HOSTKERNELRANGE_H
#define SNN_CONVERSION_NEURONTOGPU_HOSTKERNELRANGE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::snn {

/// The attributes of a ranged host function: its number of work items and
/// the smallest number of items worth a thread.
inline constexpr llvm::StringLiteral kHostItemsAttr = "snn.host_items";
inline constexpr llvm::StringLiteral kHostGrainAttr = "snn.host_grain";

/// Creates the host function `name` taking `tensorTypes` then (begin, end),
/// with its entry block; records `items` and `grain` on it.
func::FuncOp createRangedHostFunc(OpBuilder &b, Location loc, StringRef name,
                                  TypeRange tensorTypes, int64_t items,
                                  int64_t grain);

/// The tensor arguments of a ranged host function (without begin and end).
ValueRange getHostTensorArgs(func::FuncOp fn);

/// The bounds (index) of the items [offset, offset + count) of the
/// function's range, as 0..count-1, clamped: first == last when the range
/// misses them.
std::pair<Value, Value> getHostRangeBounds(OpBuilder &b, Location loc,
                                           func::FuncOp fn, int64_t offset,
                                           int64_t count);

/// A loop over the items [offset, offset + count) of the function's range,
/// as indices 0..count-1 (an empty loop when the range misses them); the
/// insertion point of `b` is left before its terminator.
scf::ForOp createHostRangeLoop(OpBuilder &b, Location loc, func::FuncOp fn,
                               int64_t offset, int64_t count);

/// The items and grain of a ranged host function; {1, 1} for a function
/// without the attributes.
std::pair<int64_t, int64_t> getHostRange(func::FuncOp fn);

} // namespace mlir::snn

#endif // SNN_CONVERSION_NEURONTOGPU_HOSTKERNELRANGE_H
