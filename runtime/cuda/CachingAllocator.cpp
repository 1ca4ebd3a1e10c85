//===- CachingAllocator.cpp - size-bucketed device memory cache -----------===//

#include "CachingAllocator.h"

#include "CudaDriver.h"
#include "CudaError.h"

using namespace snnrt::cuda;

CachingAllocator::~CachingAllocator() {
  // Destructors must not throw: errors while tearing down are ignored.
  for (auto &[size, ptrs] : freeLists)
    for (CUdeviceptr p : ptrs)
      driver().cuMemFree(p);
  for (auto &[p, size] : live)
    driver().cuMemFree(p);
}

std::size_t CachingAllocator::bucketSize(std::size_t bytes) {
  constexpr std::size_t small = 512, large = 2u << 20;
  if (bytes == 0)
    bytes = 1;
  if (bytes <= (1u << 20))
    return (bytes + small - 1) / small * small;
  return (bytes + large - 1) / large * large;
}

CUdeviceptr CachingAllocator::allocate(std::size_t bytes,
                                       const std::string &what) {
  std::size_t size = bucketSize(bytes);
  auto it = freeLists.find(size);
  CUdeviceptr ptr = 0;
  if (it != freeLists.end() && !it->second.empty()) {
    ptr = it->second.back();
    it->second.pop_back();
    cached -= size;
  } else {
    CUresult r = driver().cuMemAlloc(&ptr, size);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
      // The cache may hold enough memory in other buckets: give it back.
      releaseCached();
      r = driver().cuMemAlloc(&ptr, size);
    }
    if (r != CUDA_SUCCESS)
      throwError(device + ": cannot allocate " + std::to_string(bytes) +
                 " bytes for " + what + " (" + std::to_string(inUse) +
                 " bytes in use): cuMemAlloc failed: " + describe(r) +
                 (r == CUDA_ERROR_OUT_OF_MEMORY
                      ? "; use a smaller batch or another device"
                      : ""));
  }
  live.emplace(ptr, size);
  inUse += size;
  return ptr;
}

void CachingAllocator::free(CUdeviceptr ptr) {
  auto it = live.find(ptr);
  if (it == live.end())
    return;
  freeLists[it->second].push_back(ptr);
  inUse -= it->second;
  cached += it->second;
  live.erase(it);
}

void CachingAllocator::releaseCached() {
  for (auto &[size, ptrs] : freeLists)
    for (CUdeviceptr p : ptrs)
      driver().cuMemFree(p);
  freeLists.clear();
  cached = 0;
}
