//===- HostKernels.h - neuron kernels compiled for the CPU -----*- C++ -*-===//
//
// Internal to libsnnrt. A module compiled with target=cpu|all carries its
// neuron kernels as a shared library for the compiling machine's CPU
// (docs/artifact-format.md): each kernel is `void NAME(void **args)`, args
// being the tensors of the GPU kernel ABI in its order.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_LIB_HOSTKERNELS_H
#define SNNRT_LIB_HOSTKERNELS_H

#include "snnrt/Manifest.h"

#include <string>

namespace snnrt {
namespace cpu {

using HostKernelFn = void (*)(void **args);

/// The generated kernel `name` of the module's CPU kernel library, or null
/// when the module has no library this machine can run (none compiled,
/// another architecture or CPU level, or SNNRT_CPU_KERNELS=builtin): the
/// caller then runs its built-in loops. Throws snnrt::Error when the library
/// is there for this machine but does not load or lacks `name`.
HostKernelFn findHostKernel(const Module &m, const std::string &name);

/// The generated op kernel `name` (a `kernel` op) of the module's CPU kernel
/// library. Throws snnrt::Error when the library cannot run here or lacks
/// `name`: there is no other implementation.
HostKernelFn findOpKernel(const Module &m, const std::string &name);

} // namespace cpu
} // namespace snnrt

#endif // SNNRT_LIB_HOSTKERNELS_H
