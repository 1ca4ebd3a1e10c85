//===- Executor.h - tensors of a module and its programs on the CPU -*- C++ -*-===//

#ifndef SNNRT_EXECUTOR_H
#define SNNRT_EXECUTOR_H

#include "snnrt/Formats.h"
#include "snnrt/Manifest.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace snnrt {

class Executor {
public:
  /// Allocates every tensor (aliases share storage), initializes parameters
  /// from `init` (seeded, PyTorch's defaults) and from init.safetensors.
  Executor(Module module, uint64_t seed);

  const Module &module() const { return module_; }
  float *data(int id);
  /// Overwrites parameters from a safetensors file; a missing tensor or a
  /// shape mismatch is an error naming the tensor.
  void loadWeights(const std::string &path);
  void run(const std::string &program);

private:
  void initialize(uint64_t seed);
  Module module_;
  std::vector<std::vector<float>> storage_;
  std::vector<int> owner_;
};

} // namespace snnrt

#endif // SNNRT_EXECUTOR_H
