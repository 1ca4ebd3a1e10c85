//===- CudaBackend.h - a compiled module's programs on a GPU ----*- C++ -*-===//
//
// The entry point of the CUDA backend for snn-run: the CPU Executor
// initializes every tensor on the host (seeded init, init.safetensors,
// checkpoints), CudaExecutor mirrors them on device `cuda:N` and runs the
// programs there. Tensors move only when asked: the input and labels of
// each batch up, the output, loss and metrics down.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_CUDABACKEND_H
#define SNNRT_CUDA_CUDABACKEND_H

#include "snnrt/Executor.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace snnrt {

namespace cuda {
class CudaDevice;
class CudaModule;
} // namespace cuda

/// The device ordinal of "cuda" (0) or "cuda:N"; -1 for anything else
/// ("cpu"). A malformed "cuda:..." is an error.
int parseCudaDevice(const std::string &device);

/// The GPUs the driver sees (0 without a driver).
int cudaDeviceCount();

class CudaExecutor {
public:
  /// Starts `device` ("cuda" or "cuda:N") and copies every tensor of `host`
  /// to it. Throws snnrt::Error when there is no driver or no such device
  /// ("cuda:0: cannot load libcuda.so.1 (no NVIDIA driver on this machine):
  /// use --device cpu").
  /// `profile`: time every op (as SNNRT_CUDA_PROFILE=1).
  CudaExecutor(Executor &host, const std::string &device, bool profile = false);
  ~CudaExecutor();
  CudaExecutor(const CudaExecutor &) = delete;
  CudaExecutor &operator=(const CudaExecutor &) = delete;

  /// "cuda:0 (NVIDIA H100 80GB HBM3, sm_90, 132 SMs)".
  std::string describe() const;
  /// "sm_90": the key of the device's entry in calibration.json.
  std::string arch() const;

  /// Copies tensor `id` from the host Executor to the device, resp. back.
  /// f32 and i32 tensors are copied as stored (an i32 slot holds the int's
  /// bits); u8 tensors are converted from/to the host's float values.
  void upload(int id);
  void download(int id);
  /// Elements [first, first + count) of an f32/i32 tensor (4-byte slots).
  void downloadWindow(int id, size_t first, size_t count);
  /// Uploads labels (module().labels) given as integers.
  void uploadLabels(const std::vector<int32_t> &labels);
  /// Copies every persisted tensor (params, buffers, optimizer state) back
  /// to the host, e.g. before writing a checkpoint.
  void downloadState();

  /// Enqueues program `name`; the learning rate, the 1-based optimizer step
  /// and the dropout seed are used by update and dropout ops.
  void run(const std::string &name, float learningRate = 0.0f,
           int64_t step = 1, uint64_t seed = 0);
  /// Waits for the device.
  void synchronize();
  /// Bytes the caching allocator holds (tensors, scratch, cached blocks).
  std::size_t deviceBytes() const;
  /// Which kernel each op of `name` ran ("" for ops without a choice).
  std::vector<std::string> kernelsUsed(const std::string &name) const;
  /// The module's cubin/PTX that was loaded, or "" (built-in kernels only).
  std::string compiledKernels() const;
  /// The device's memory plan (offsets by tensor id, arena size).
  const MemoryPlan &memoryPlan() const { return plan; }
  /// The device address of tensor `id` and the stream the programs run on
  /// (collectives on device buffers, NCCL).
  void *devicePointer(int id);
  void *stream();
  /// Enqueues `enqueue(op, stream)` on a second stream after op `op` of
  /// `program` for each op in `afterOps` (ascending), at every run, captured
  /// with the program; the second stream joins the program's at its end.
  void enqueueAfterOps(const std::string &program, std::vector<size_t> afterOps,
                       std::function<void(size_t, void *)> enqueue);

private:
  MemoryPlan plan;
  Executor &host;
  std::unique_ptr<cuda::CudaDevice> device;
  std::unique_ptr<cuda::CudaModule> module;
};

} // namespace snnrt

#endif // SNNRT_CUDA_CUDABACKEND_H
