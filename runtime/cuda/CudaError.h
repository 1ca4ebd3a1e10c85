//===- CudaError.h - how the CUDA backend reports errors --------*- C++ -*-===//

#ifndef SNNRT_CUDA_CUDAERROR_H
#define SNNRT_CUDA_CUDAERROR_H

#include <string>

namespace snnrt::cuda {
/// Throws snnrt::Error(message): the one error type of libsnnrt.
[[noreturn]] void throwError(const std::string &message);
} // namespace snnrt::cuda

#endif // SNNRT_CUDA_CUDAERROR_H
