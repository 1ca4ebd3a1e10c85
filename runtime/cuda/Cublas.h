//===- Cublas.h - cuBLAS, loaded with dlopen --------------------*- C++ -*-===//
//
// GEMMs go through cuBLAS, resolved at run time like the driver (no link
// dependency), from libcublas.so.13, else .12, else libcublas.so.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_CUBLAS_H
#define SNNRT_CUDA_CUBLAS_H

#include <cublas_v2.h>

#include <string>

namespace snnrt::cuda {

#define SNNRT_CUBLAS_FUNCTIONS(X)                                              \
  X(cublasCreate)                                                              \
  X(cublasDestroy)                                                             \
  X(cublasSetStream)                                                           \
  X(cublasSetMathMode)                                                         \
  X(cublasSetWorkspace)                                                        \
  X(cublasSgemm)                                                               \
  X(cublasSgemmStridedBatched)

/// cublasGemmEx and its strided batch, with the compute type of cuBLAS 11+
/// (C++ also sees a legacy overload, so decltype cannot name them).
using CublasGemmExFn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
    const void *, const void *, cudaDataType, int, const void *, cudaDataType,
    int, const void *, void *, cudaDataType, int, cublasComputeType_t,
    cublasGemmAlgo_t);
using CublasGemmStridedBatchedExFn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
    const void *, const void *, cudaDataType, int, long long, const void *,
    cudaDataType, int, long long, const void *, void *, cudaDataType, int,
    long long, int, cublasComputeType_t, cublasGemmAlgo_t);

struct CublasApi {
#define SNNRT_DECLARE_MEMBER(name) decltype(&::name) name = nullptr;
  SNNRT_CUBLAS_FUNCTIONS(SNNRT_DECLARE_MEMBER)
#undef SNNRT_DECLARE_MEMBER
  CublasGemmExFn cublasGemmEx = nullptr;
  CublasGemmStridedBatchedExFn cublasGemmStridedBatchedEx = nullptr;
};

/// Loads cuBLAS once per process; throws snnrt::Error naming `device` when
/// no usable libcublas is installed.
const CublasApi &loadCublas(const std::string &device);

/// "CUBLAS_STATUS_EXECUTION_FAILED" for `status`.
std::string describe(cublasStatus_t status);

/// Throws snnrt::Error("<where>: <call> failed: <status>") on failure.
void check(cublasStatus_t status, const char *call, const std::string &where);

/// A row-major GEMM on column-major cuBLAS:
/// C[m,n] = alpha * op(A)[m,k] op(B)[k,n] + beta * C, with leading dimensions
/// in elements of the row-major storage. `batch` > 1 runs a strided batch.
struct RowMajorGemm {
  bool transA = false, transB = false;
  int m = 0, n = 0, k = 0;
  const float *a = nullptr, *b = nullptr;
  float *c = nullptr;
  long long lda = 0, ldb = 0, ldc = 0;
  float alpha = 1.0f, beta = 0.0f;
  int batch = 1;
  long long strideA = 0, strideB = 0, strideC = 0;
};
void gemm(const CublasApi &api, cublasHandle_t handle, const RowMajorGemm &g,
          const std::string &where, bool bf16 = false);

} // namespace snnrt::cuda

#define SNNRT_CUBLAS(call, where) ::snnrt::cuda::check((call), #call, (where))

#endif // SNNRT_CUDA_CUBLAS_H
