//===- CachingAllocator.h - size-bucketed device memory cache ---*- C++ -*-===//
//
// cuMemAlloc/cuMemFree synchronize the device and cost tens of microseconds,
// so freed blocks go to a free list of their size bucket and are handed out
// again. All work runs on one stream: a block freed after its last use was
// enqueued can be reused by later work on the same stream without a sync.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_CACHINGALLOCATOR_H
#define SNNRT_CUDA_CACHINGALLOCATOR_H

#include <cuda.h>

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace snnrt::cuda {

class CachingAllocator {
public:
  explicit CachingAllocator(std::string device) : device(std::move(device)) {}
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator &) = delete;
  CachingAllocator &operator=(const CachingAllocator &) = delete;

  /// A block of at least `bytes` (256-byte aligned); `what` names the tensor
  /// in the out-of-memory error.
  CUdeviceptr allocate(std::size_t bytes, const std::string &what);
  /// Returns `ptr` to its bucket's free list (no cuMemFree).
  void free(CUdeviceptr ptr);
  /// cuMemFree of every cached block not in use.
  void releaseCached();

  std::size_t bytesInUse() const { return inUse; }
  std::size_t bytesCached() const { return cached; }

  /// The bucket of a request: 512-byte steps up to 1 MiB, then 2 MiB steps.
  static std::size_t bucketSize(std::size_t bytes);

private:
  std::string device;
  std::map<std::size_t, std::vector<CUdeviceptr>> freeLists;
  std::unordered_map<CUdeviceptr, std::size_t> live;
  std::size_t inUse = 0, cached = 0;
};

} // namespace snnrt::cuda

#endif // SNNRT_CUDA_CACHINGALLOCATOR_H
