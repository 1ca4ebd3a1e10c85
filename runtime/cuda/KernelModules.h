//===- KernelModules.h - the built-in and the compiled kernels --*- C++ -*-===//
//
// The built-in kernels are fatbins embedded in the library (sm_80, sm_90
// and compute_90 PTX), loaded with cuModuleLoadData when a device starts. A
// compiled module brings its own cubin/PTX (MLIR-generated neuron kernels),
// loaded on demand from the module directory.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_KERNELMODULES_H
#define SNNRT_CUDA_KERNELMODULES_H

#include <cuda.h>

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace snnrt::cuda {

class KernelModules {
public:
  KernelModules() = default;
  ~KernelModules();
  KernelModules(const KernelModules &) = delete;
  KernelModules &operator=(const KernelModules &) = delete;

  /// Loads every embedded fatbin; `where` names the device in errors.
  void loadBuiltin(const std::string &where);
  /// A built-in kernel by name.
  CUfunction builtin(const std::string &name, const std::string &where);
  /// A built-in kernel of an optional module, or null when it did not load.
  CUfunction findBuiltin(const std::string &name);

  /// Loads the compiled module's kernels for a device of compute capability
  /// `major`.`minor`: `kernels.sm_XY.cubin` of the manifest's "kernels"
  /// (`files`: "sm_80" -> file name) when one fits, else its PTX. Returns
  /// the file loaded, or "" when the module has none.
  std::string loadCompiled(const std::string &moduleDir,
                           const std::map<std::string, std::string> &files,
                           int major, int minor, const std::string &where);
  bool hasCompiled() const { return compiled != nullptr; }
  /// A kernel of the compiled module by name.
  CUfunction compiledKernel(const std::string &name, const std::string &where);

private:
  std::vector<CUmodule> builtinModules;
  std::unordered_map<std::string, CUfunction> builtinCache;
  CUmodule compiled = nullptr;
  std::string compiledFile;
  std::unordered_map<std::string, CUfunction> compiledCache;
};

} // namespace snnrt::cuda

#endif // SNNRT_CUDA_KERNELMODULES_H
