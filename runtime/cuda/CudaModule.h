//===- CudaModule.h - a compiled module resident on a GPU -------*- C++ -*-===//
//
// The device side of a loaded module: storage for every tensor of the
// manifest (aliases share it), the module's compiled kernels, and its
// programs. The backend interface of libsnnrt maps onto this class.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_CUDAMODULE_H
#define SNNRT_CUDA_CUDAMODULE_H

#include "CudaProgram.h"
#include "snnrt/MemoryPlan.h"

#include <map>
#include <set>
#include <memory>
#include <string>

namespace snnrt::cuda {

class CudaModule {
public:
  /// Allocates every tensor of `manifest` on `device` (those that `plan`
  /// places at their offsets in one arena, which starts as NaN when
  /// `poison`) and loads the module's cubin/PTX from `moduleDir` when the
  /// manifest names one.
  CudaModule(CudaDevice &device, const nlohmann::json &manifest,
             std::string moduleDir, const MemoryPlan &plan = {},
             bool poison = false);
  ~CudaModule();
  CudaModule(const CudaModule &) = delete;
  CudaModule &operator=(const CudaModule &) = delete;

  CudaDevice &getDevice() { return device; }
  /// The tensor `id`; throws naming the id when the manifest has none.
  const DeviceTensor &tensor(int64_t id) const;
  /// Bytes of tensor `id` (its dtype's size times its elements).
  std::size_t bytes(int64_t id) const;

  /// Host <-> device copies of a whole tensor (`bytes` must match).
  void upload(int64_t id, const void *data, std::size_t bytes);
  void download(int64_t id, void *data, std::size_t bytes);
  /// `bytes` from byte `offset` of tensor `id`.
  void downloadBytes(int64_t id, std::size_t offset, void *data,
                     std::size_t bytes);
  void fillZero(int64_t id);

  /// Enqueues program `name` ("infer", "train_forward", ...).
  void run(const std::string &name, const StepValues &values);
  /// Side work of program `name` (CudaProgram::setSideWork).
  void setSideWork(const std::string &name, SideWork work);
  bool hasProgram(const std::string &name) const;
  /// The kernel each op of `name` ran (for snn-run --verbose).
  std::vector<std::string> kernelsUsed(const std::string &name) const;
  /// The compiled-kernel file that was loaded, or "".
  const std::string &compiledKernels() const { return kernelFile; }
  void synchronize();

private:
  struct Storage {
    DeviceTensor tensor;
    std::size_t bytes = 0;
    bool owner = false;
  };
  CudaDevice &device;
  std::string moduleDir;
  std::string kernelFile;
  std::map<int64_t, Storage> tensors;
  CUdeviceptr arenaPtr = 0;
  /// Tensors whose storage another tensor shares (alias owners and aliases):
  /// a time loop must not redirect them to views.
  std::set<int64_t> sharedStorage;
  nlohmann::json programSources;
  std::map<std::string, std::unique_ptr<CudaProgram>> programs;
  std::map<std::string, SideWork> sideWork; ///< for programs not made yet
};

} // namespace snnrt::cuda

#endif // SNNRT_CUDA_CUDAMODULE_H
