//===- MemoryPlan.h - storage sharing between short-lived tensors -*- C++
//-*-===//
//
// A compiled module names every intermediate tensor of its programs. Most of
// them live for a few ops: an activation that backward does not need dies
// after its last forward reader, an activation gradient after the op that
// consumes it. The plan places such tensors in one arena at offsets where no
// two tensors that are live at the same time overlap (greedy by size over
// live ranges), so the module's memory is the peak of what is live, not the
// sum of every tensor.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_MEMORYPLAN_H
#define SNNRT_MEMORYPLAN_H

#include "snnrt/Manifest.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace snnrt {

struct MemoryPlan {
  /// Byte offset in the arena of each storage owner (indexed by tensor id);
  /// -1: the tensor has storage of its own (persistent state, tensors the
  /// host reads or writes between programs, aliases).
  std::vector<int64_t> offset;
  size_t arenaBytes = 0;
  /// What the planned tensors would take without sharing.
  size_t plannedBytes = 0;
  bool planned(int id) const {
    return id >= 0 && size_t(id) < offset.size() && offset[id] >= 0;
  }
};

/// Live ranges over the programs in the order the runtime runs them: infer,
/// then one training step (train_forward, backward, update), then any other
/// program. A tensor that appears in several programs lives from its first
/// to its last use over that order. Only activations, saved tensors and
/// activation gradients without an initializer share; every op's inputs and
/// outputs (a time loop's whole body) are live together, so no op writes over
/// its own inputs. `bytes` gives a tensor's size on the backend; offsets are
/// multiples of `alignment`.
MemoryPlan planMemory(const Module &module,
                      const std::function<size_t(const TensorInfo &)> &bytes,
                      size_t alignment);

/// SNNRT_MEMORY_PLAN: "0" gives every tensor its own storage (for debugging a
/// suspected overlap); "poison" fills the arena with NaN (the CPU executor
/// again for each tensor a program first writes) so that a read
/// before a write shows; anything else (or unset) plans.
enum class MemoryPlanMode { Off, On, Poison };
MemoryPlanMode memoryPlanMode();

} // namespace snnrt

#endif // SNNRT_MEMORYPLAN_H
