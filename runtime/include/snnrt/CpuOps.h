//===- CpuOps.h - the CPU implementation of the manifest ops ----*- C++ -*-===//

#ifndef SNNRT_CPUOPS_H
#define SNNRT_CPUOPS_H

#include "snnrt/Manifest.h"

#include <functional>

namespace snnrt {

/// Host storage of a tensor id.
using TensorLookup = std::function<float *(int id)>;

/// Runs one forward op on host buffers. Throws snnrt::Error naming the op
/// for anything it does not support.
void runCpuOp(const Module &module, const Op &op, size_t index,
              const TensorLookup &tensor);

} // namespace snnrt

#endif // SNNRT_CPUOPS_H
