//===- CudaDriver.h - the CUDA driver API, loaded with dlopen ---*- C++ -*-===//
//
// libsnnrt must start on machines without an NVIDIA driver, so nothing links
// against libcuda: the driver API is resolved from libcuda.so.1 at run time.
// cuda.h is only used for types and prototypes; its versioning macros
// (cuMemAlloc -> cuMemAlloc_v2, ...) also pick the symbol that is resolved.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_CUDADRIVER_H
#define SNNRT_CUDA_CUDADRIVER_H

#include <cuda.h>

#include <string>

namespace snnrt::cuda {

#define SNNRT_CUDA_DRIVER_FUNCTIONS(X)                                         \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceTotalMem)                                                          \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuMemGetInfo)                                                              \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemAllocHost)                                                            \
  X(cuMemFreeHost)                                                             \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuMemcpyDtoDAsync)                                                         \
  X(cuMemsetD8Async)                                                           \
  X(cuMemsetD32Async)                                                          \
  X(cuModuleLoadData)                                                          \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuLaunchKernel)                                                            \
  X(cuFuncSetAttribute)                                                        \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamEndCapture)                                                        \
  X(cuGraphInstantiateWithFlags)                                               \
  X(cuGraphLaunch)                                                             \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphDestroy)                                                            \
  X(cuGraphConditionalHandleCreate)                                            \
  X(cuGraphAddNode)                                                            \
  X(cuStreamGetCaptureInfo)                                                    \
  X(cuStreamUpdateCaptureDependencies)                                         \
  X(cuStreamBeginCaptureToGraph)                                               \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuStreamWaitEvent)                                                         \
  X(cuStreamIsCapturing)                                                       \
  X(cuEventQuery)                                                              \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)

/// The resolved driver entry points. Members carry the API's names, so a
/// call reads like the plain driver API: `driver().cuMemAlloc(&p, n)`.
struct DriverApi {
#define SNNRT_DECLARE_MEMBER(name) decltype(&::name) name = nullptr;
  SNNRT_CUDA_DRIVER_FUNCTIONS(SNNRT_DECLARE_MEMBER)
#undef SNNRT_DECLARE_MEMBER
};

/// Loads libcuda.so.1 and calls cuInit once per process. Throws
/// snnrt::Error naming `device` (e.g. "cuda:0") when there is no driver or
/// it is too old.
const DriverApi &loadDriver(const std::string &device);

/// The loaded driver; loadDriver must have succeeded before.
const DriverApi &driver();

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for `result`.
std::string describe(CUresult result);

/// Throws snnrt::Error("<where>: <call> failed: <describe(result)>") unless
/// `result` is CUDA_SUCCESS.
void check(CUresult result, const char *call, const std::string &where);

} // namespace snnrt::cuda

/// Checks a driver call; `where` says which device/op/tensors were involved.
#define SNNRT_CU(call, where) ::snnrt::cuda::check((call), #call, (where))

#endif // SNNRT_CUDA_CUDADRIVER_H
