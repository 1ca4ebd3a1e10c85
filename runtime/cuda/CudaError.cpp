//===- CudaError.cpp - how the CUDA backend reports errors ----------------===//

#include "CudaError.h"

#if __has_include("snnrt/Error.h")
#include "snnrt/Error.h"
#define SNNRT_CUDA_ERROR_TYPE snnrt::Error
#else
// Built before (or without) the runtime core: a standard exception.
#include <stdexcept>
#define SNNRT_CUDA_ERROR_TYPE std::runtime_error
#endif

void snnrt::cuda::throwError(const std::string &message) {
  throw SNNRT_CUDA_ERROR_TYPE(message);
}
