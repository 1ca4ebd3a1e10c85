//===- CudaDevice.h - one GPU: context, stream, memory, kernels -*- C++ -*-===//
//
// Everything the CUDA ops need from a device: its primary context, the one
// stream all work runs on, cuBLAS bound to that stream, the caching
// allocator, the kernels, persistent scratch buffers, and CUDA-graph capture.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_CUDADEVICE_H
#define SNNRT_CUDA_CUDADEVICE_H

#include "CachingAllocator.h"
#include "Cublas.h"
#include "CudaDriver.h"
#include "CudnnConv.h"
#include "KernelModules.h"

#include <cstddef>
#include <cstdint>
#include "snnrt/Profile.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace snnrt {
class Communicator;
} // namespace snnrt

namespace snnrt::cuda {

/// This device's rank of a module split in time (--snn-split-time): the
/// ranks its split ops talk to, and its steps [begin, begin + length) of
/// `steps`.
struct TimeSplitRank {
  Communicator *comm = nullptr;
  int rank = 0, parts = 1;
  int64_t steps = 0, begin = 0, length = 0;
};

/// Options read from the environment when the device starts.
struct DeviceOptions {
  /// SNNRT_CUDA_TF32=1: GEMMs may use TF32 tensor cores (faster, ~1e-3
  /// relative error instead of fp32 rounding).
  bool tf32 = false;
  /// SNNRT_CUDA_BF16=1: GEMMs take their fp32 operands through bf16 tensor
  /// cores (cuBLAS CUBLAS_COMPUTE_32F_FAST_16BF: fp32 data and accumulation,
  /// ~1e-2 relative error); convolutions then use TF32.
  bool bf16 = false;
  /// SNNRT_CUDA_GRAPHS=0 disables CUDA-graph capture of programs.
  bool graphs = true;
  /// SNNRT_CUDA_CUDNN=0: convolutions use im2col + cuBLAS even when
  /// libcudnn.so.9 is installed.
  bool cudnn = true;
  /// SNNRT_CUDA_PROFILE=1: programs run op by op (no graphs) with CUDA
  /// events around each op; the device prints the time per op kind to
  /// stderr when it ends.
  bool profile = false;
  /// SNNRT_CUDA_CONDITIONAL=0: a captured program runs the dense GEMM of an
  /// event-driven layer always, instead of in a conditional graph node.
  bool conditional = true;
  static DeviceOptions fromEnvironment();
};

class CudaDevice {
public:
  /// Starts device `ordinal` ("cuda:N"); throws snnrt::Error when there is
  /// no driver, no such device, or the built-in kernels do not load.
  explicit CudaDevice(int ordinal, DeviceOptions options =
                                       DeviceOptions::fromEnvironment());
  ~CudaDevice();
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  const std::string &name() const { return deviceName; }
  const std::string &description() const { return deviceDescription; }
  const DeviceOptions &options() const { return opts; }
  int computeMajor() const { return ccMajor; }
  int computeMinor() const { return ccMinor; }
  CUstream stream() const { return cuStream; }
  CachingAllocator &allocator() { return alloc; }
  KernelModules &kernels() { return modules; }
  /// cuDNN convolutions, or null (no libcudnn.so.9, or SNNRT_CUDA_CUDNN=0).
  CudnnConv *cudnn() { return cudnnConv.get(); }

  /// Makes the device's context current on the calling thread.
  void makeCurrent() const;

  /// Launches `fn` with the given arguments (passed by value to the kernel).
  template <typename... Args>
  void launch(CUfunction fn, unsigned grid, unsigned block,
              unsigned sharedBytes, const std::string &where, Args... args) {
    void *params[] = {static_cast<void *>(&args)..., nullptr};
    launchRaw(fn, grid, block, sharedBytes, params, where);
  }
  /// Launches the runtime's own `kernel` (TimeSplit.cu: transfers of split
  /// modules) with enough blocks of 256 threads for a grid-stride loop over
  /// `n` elements.
  template <typename... Args>
  void launchElementwise(const char *kernel, long long n,
                         const std::string &where, Args... args) {
    launch(modules.builtin(kernel, where), elementwiseGrid(n), 256, 0, where,
           args...);
  }
  unsigned elementwiseGrid(long long n) const;
  void launchRaw(CUfunction fn, unsigned grid, unsigned block,
                 unsigned sharedBytes, void **params, const std::string &where);
  /// Lets `fn` launch with `bytes` of dynamic shared memory (above 48 KiB
  /// a kernel must opt in); throws when the GPU offers less per block.
  void allowSharedMemory(CUfunction fn, unsigned bytes,
                         const std::string &where);

  /// Row-major SGEMM on the device's stream (see RowMajorGemm).
  void gemm(const RowMajorGemm &g, const std::string &where);

  void copyToDevice(CUdeviceptr dst, const void *src, std::size_t bytes,
                    const std::string &where);
  void copyToHost(void *dst, CUdeviceptr src, std::size_t bytes,
                  const std::string &where);
  void copyOnDevice(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes,
                    const std::string &where);
  void zero(CUdeviceptr dst, std::size_t bytes, const std::string &where);
  /// Sets `count` 32-bit words at `dst` to `word`, in stream order.
  void fillWords(CUdeviceptr dst, uint32_t word, std::size_t count,
                 const std::string &where);
  /// Every byte of [dst, dst + bytes) set to `value` (0xFF: f32/bf16 NaN).
  void fillBytes(CUdeviceptr dst, unsigned char value, std::size_t bytes,
                 const std::string &where);
  void synchronize(const std::string &where);

  /// A device buffer of at least `bytes` that stays reserved for `key`
  /// (grown when needed): scratch memory whose address is stable, so that a
  /// captured CUDA graph can be replayed. A buffer that grows keeps its old
  /// block until the device ends, as graphs captured before may use it.
  CUdeviceptr scratch(const std::string &key, std::size_t bytes,
                      const std::string &where);

  /// The run values that generated kernels with `run_values` read
  /// (docs/artifact-format.md): 4 words of device memory at a stable
  /// address, word 0 the learning rate (f32 bits), word 1 the 1-based step,
  /// words 2 and 3 the step's random seed. setRunValues writes them in
  /// stream order (only the words that change), so a captured graph that
  /// reads them sees this step's values.
  CUdeviceptr runValues(const std::string &where) {
    return scratch("run_values", 16, where);
  }
  void setRunValues(float learningRate, int64_t step, uint64_t seed,
                    const std::string &where);

  /// CUDA-graph capture of the work enqueued between begin and end.
  void beginCapture(const std::string &where);
  CUgraphExec endCapture(const std::string &where);
  /// Ends a capture that failed half-way and drops what it recorded.
  void abortCapture();
  void replay(CUgraphExec graph, const std::string &where);
  void destroyGraph(CUgraphExec graph);
  bool capturing() const { return isCapturing; }

  /// Enqueues `dense` (work on the device's stream) so that it runs only
  /// when the decision of an event-driven layer (device memory; word 1 is
  /// 1 when the event-driven kernels ran) is 0, without a host
  /// synchronisation: while a program is captured, `dense` becomes the body
  /// of a conditional graph node whose condition a one-thread kernel sets
  /// from the decision. Not capturing (eager runs, profiling), or without
  /// conditional nodes (SNNRT_CUDA_CONDITIONAL=0, an old driver), `dense`
  /// runs always: it computes the same function, so the result is the same.
  void runUnlessEventPath(CUdeviceptr decision,
                          const std::function<void()> &dense,
                          const std::string &where);
  /// Whether runUnlessEventPath still builds conditional nodes; a capture
  /// that failed with them turns them off for the device (with a warning
  /// naming `why`), so that programs are captured again without them.
  bool conditionalNodes() const { return opts.conditional; }
  void disableConditionalNodes(const std::string &why);

  /// The rank of a time split this device runs (null: not split).
  void setTimeSplit(const TimeSplitRank &rank) {
    split = std::make_unique<TimeSplitRank>(rank);
  }
  const TimeSplitRank *timeSplit() const { return split.get(); }

  /// SNNRT_CUDA_PROFILE: adds `ms` to the op kind `key` of `program`.
  void addProfile(const std::string &program, const std::string &key,
                  double ms);

private:
  /// Points cuBLAS at the device's current stream and its fixed workspace.
  void bindBlasStream(const std::string &where);
  ProfileTable profileTable;
  struct Scratch {
    CUdeviceptr ptr = 0;
    std::size_t bytes = 0;
  };
  std::string deviceName, deviceDescription;
  DeviceOptions opts;
  const CublasApi *blas = nullptr;
  CUdevice dev = 0;
  CUcontext context = nullptr;
  CUstream cuStream = nullptr;
  /// Captures the bodies of conditional nodes (runUnlessEventPath).
  CUstream bodyStream = nullptr;
  cublasHandle_t handle = nullptr;
  int ccMajor = 0, ccMinor = 0, smCount = 1;
  /// Dynamic shared memory a block may opt into.
  int sharedOptIn = 48 * 1024;
  /// Kernels already allowed their dynamic shared memory (allowSharedMemory).
  std::map<CUfunction, unsigned> sharedAllowed;
  bool isCapturing = false;
  CachingAllocator alloc;
  KernelModules modules;
  std::map<std::string, Scratch> scratchBuffers;
  std::vector<CUdeviceptr> retiredScratch;
  /// The run values last written (valid when runValuesWritten).
  uint32_t runValueWords[4] = {0, 0, 0, 0};
  bool runValuesWritten = false;
  std::unique_ptr<CudnnConv> cudnnConv;
  std::unique_ptr<TimeSplitRank> split;
};

} // namespace snnrt::cuda

#endif // SNNRT_CUDA_CUDADEVICE_H
