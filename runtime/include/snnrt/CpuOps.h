//===- CpuOps.h - the CPU implementation of the manifest ops ----*- C++ -*-===//

#ifndef SNNRT_CPUOPS_H
#define SNNRT_CPUOPS_H

#include "snnrt/Manifest.h"

#include <cstdint>
#include <functional>
#include <string>

namespace snnrt {

/// Host storage of a tensor id (i32 tensors hold the int's bits in their
/// 4-byte slot, u8 tensors hold 0/1 as floats).
using TensorLookup = std::function<float *(int id)>;

/// Per-step values of a program run that are not part of the module.
struct RunContext {
  float learningRate = 0.0f; ///< update ops
  int64_t step = 1;          ///< 1-based optimizer step (Adam bias correction)
  uint64_t seed = 0;         ///< this step's dropout seed
};

/// Runs one op of any program (forward, backward, loss, update) on host
/// buffers. Throws snnrt::Error naming the op for anything it cannot run.
void runCpuOp(const Module &module, const Op &op, size_t index,
              const TensorLookup &tensor, const RunContext &run = {});

/// Which generated kernel library runs the module on the CPU, or why this
/// CPU cannot run it.
std::string describeCpuNeuronKernels(const Module &module);

} // namespace snnrt

#endif // SNNRT_CPUOPS_H
