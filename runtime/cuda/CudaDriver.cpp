//===- CudaDriver.cpp - the CUDA driver API, loaded with dlopen -----------===//

#include "CudaDriver.h"

#include "CudaError.h"

#include <dlfcn.h>

#include <mutex>

using namespace snnrt::cuda;

namespace {
#define SNNRT_STRINGIFY_IMPL(x) #x
#define SNNRT_STRINGIFY(x) SNNRT_STRINGIFY_IMPL(x)

DriverApi gDriver;
std::once_flag gOnce;
std::string gLoadError; // empty once the driver is usable

void loadOnce() {
  // RTLD_NODELETE: the driver stays mapped until exit; contexts live as long.
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!lib) {
    gLoadError = "cannot load libcuda.so.1 (no NVIDIA driver on this "
                 "machine): use --device cpu";
    return;
  }
  // SNNRT_STRINGIFY expands the versioning macros of cuda.h first, so that
  // e.g. cuMemAlloc resolves the symbol cuMemAlloc_v2.
#define SNNRT_RESOLVE(name)                                                    \
  gDriver.name = reinterpret_cast<decltype(gDriver.name)>(                     \
      dlsym(lib, SNNRT_STRINGIFY(name)));                                      \
  if (!gDriver.name) {                                                         \
    gLoadError = std::string("libcuda.so.1 has no ") + SNNRT_STRINGIFY(name) + \
                 ": the NVIDIA driver is too old for CUDA 13 (install driver " \
                 ">= 580) or use --device cpu";                                \
    return;                                                                    \
  }
  SNNRT_CUDA_DRIVER_FUNCTIONS(SNNRT_RESOLVE)
#undef SNNRT_RESOLVE
  CUresult r = gDriver.cuInit(0);
  if (r != CUDA_SUCCESS)
    gLoadError = "cuInit(0) failed: " + describe(r) +
                 " (is a GPU visible? check nvidia-smi and "
                 "CUDA_VISIBLE_DEVICES) or use --device cpu";
}
} // namespace

const DriverApi &snnrt::cuda::loadDriver(const std::string &device) {
  std::call_once(gOnce, loadOnce);
  if (!gLoadError.empty())
    throwError(device + ": " + gLoadError);
  return gDriver;
}

const DriverApi &snnrt::cuda::driver() { return gDriver; }

std::string snnrt::cuda::describe(CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (gDriver.cuGetErrorName)
    gDriver.cuGetErrorName(result, &name);
  if (gDriver.cuGetErrorString)
    gDriver.cuGetErrorString(result, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

void snnrt::cuda::check(CUresult result, const char *call,
                        const std::string &where) {
  if (result != CUDA_SUCCESS)
    throwError(where + ": " + call + " failed: " + describe(result));
}
