//===- HostKernels.h - neuron kernels compiled for the CPU -----*- C++ -*-===//
//
// Internal to libsnnrt. A module compiled with target=cpu|all carries its
// kernels as a shared library for the compiling machine's CPU
// (docs/artifact-format.md): each kernel is `void NAME(void **args, int64_t
// begin, int64_t end)`, args being the tensors of the GPU kernel ABI in its
// order, running its work items [begin, end) of `int64_t NAME_range[2]` =
// {items, grain}.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_LIB_HOSTKERNELS_H
#define SNNRT_LIB_HOSTKERNELS_H

#include "snnrt/Manifest.h"

#include <cstdint>
#include <string>

namespace snnrt {
namespace cpu {

/// A kernel of the library and its work items.
struct HostKernel {
  using Fn = void (*)(void **args, int64_t begin, int64_t end);
  Fn fn = nullptr;
  /// Work items, and the fewest worth a thread of their own.
  int64_t items = 1, grain = 1;

  explicit operator bool() const { return fn != nullptr; }
  /// Runs every item on getCpuThreads() threads (CpuThreads.h).
  void operator()(void **args) const;
};

/// The generated kernel `name` (of a `kernel` op or a neuron op) of the
/// module's CPU kernel library. Throws snnrt::Error when the library cannot
/// run here or lacks `name`: there is no other implementation.
HostKernel findOpKernel(const Module &m, const std::string &name);

/// Why the module's CPU kernel library cannot run on this machine (none
/// compiled, another architecture or CPU level); empty when it can. Throws
/// snnrt::Error when it is there for this machine but does not load.
std::string cpuKernelsUnavailable(const Module &m);

} // namespace cpu
} // namespace snnrt

#endif // SNNRT_LIB_HOSTKERNELS_H
