//===- TimeSplitOps.h - the ops of a module split in time -------*- C++ -*-===//
//
// A module compiled after --snn-split-time runs one program set per rank
// (docs/artifact-format.md, "Split in time"): its ops `time_range`,
// `gather_time`, `send`, `recv` and `all_reduce_sum` move the rank's steps,
// the neuron state and the sums between the ranks through the Communicator,
// on host buffers (`time_sum`/`time_broadcast` are generated kernels).
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_TIMESPLITOPS_H
#define SNNRT_TIMESPLITOPS_H

#include "snnrt/Communicator.h"
#include "snnrt/CpuOps.h"

#include <string>

namespace snnrt {

/// Whether `kind` is one of the ops above.
bool isTimeSplitOp(const std::string &kind);

/// Runs one of them on host buffers. `comm` joins the module's ranks (its
/// size is module.split.parts); the ops that talk to other ranks fail
/// without it. Transfers block, in program order: every rank runs the same
/// sequence, which is the wavefront of the split.
void runTimeSplitOp(const Module &module, const Op &op, size_t index,
                    const TensorLookup &tensor, Communicator *comm);

} // namespace snnrt

#endif // SNNRT_TIMESPLITOPS_H
