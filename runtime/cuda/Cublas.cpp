//===- Cublas.cpp - cuBLAS, loaded with dlopen ----------------------------===//

#include "Cublas.h"

#include "CudaError.h"

#include <dlfcn.h>

#include <mutex>

using namespace snnrt::cuda;

namespace {
#define SNNRT_STRINGIFY_IMPL(x) #x
#define SNNRT_STRINGIFY(x) SNNRT_STRINGIFY_IMPL(x)

CublasApi gCublas;
std::once_flag gOnce;
std::string gLoadError;

void loadOnce() {
  const char *names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  void *lib = nullptr;
  for (const char *name : names)
    if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)))
      break;
  if (!lib) {
    gLoadError = "cannot load libcublas.so.13 (nor .12 nor libcublas.so): "
                 "install cuBLAS (the CUDA toolkit or the nvidia-cublas "
                 "package) and add its lib directory to LD_LIBRARY_PATH";
    return;
  }
#define SNNRT_RESOLVE(name)                                                    \
  gCublas.name = reinterpret_cast<decltype(gCublas.name)>(                     \
      dlsym(lib, SNNRT_STRINGIFY(name)));                                      \
  if (!gCublas.name) {                                                         \
    gLoadError = std::string("libcublas has no ") + SNNRT_STRINGIFY(name) +    \
                 ": install cuBLAS 12 or newer";                               \
    return;                                                                    \
  }
  SNNRT_CUBLAS_FUNCTIONS(SNNRT_RESOLVE)
  SNNRT_RESOLVE(cublasGemmEx)
  SNNRT_RESOLVE(cublasGemmStridedBatchedEx)
#undef SNNRT_RESOLVE
}
} // namespace

const CublasApi &snnrt::cuda::loadCublas(const std::string &device) {
  std::call_once(gOnce, loadOnce);
  if (!gLoadError.empty())
    throwError(device + ": " + gLoadError);
  return gCublas;
}

std::string snnrt::cuda::describe(cublasStatus_t status) {
  switch (status) {
#define SNNRT_CASE(s)                                                          \
  case s:                                                                      \
    return #s;
    SNNRT_CASE(CUBLAS_STATUS_SUCCESS)
    SNNRT_CASE(CUBLAS_STATUS_NOT_INITIALIZED)
    SNNRT_CASE(CUBLAS_STATUS_ALLOC_FAILED)
    SNNRT_CASE(CUBLAS_STATUS_INVALID_VALUE)
    SNNRT_CASE(CUBLAS_STATUS_ARCH_MISMATCH)
    SNNRT_CASE(CUBLAS_STATUS_MAPPING_ERROR)
    SNNRT_CASE(CUBLAS_STATUS_EXECUTION_FAILED)
    SNNRT_CASE(CUBLAS_STATUS_INTERNAL_ERROR)
    SNNRT_CASE(CUBLAS_STATUS_NOT_SUPPORTED)
    SNNRT_CASE(CUBLAS_STATUS_LICENSE_ERROR)
#undef SNNRT_CASE
  }
  return "cuBLAS status " + std::to_string(static_cast<int>(status));
}

void snnrt::cuda::check(cublasStatus_t status, const char *call,
                        const std::string &where) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throwError(where + ": " + call + " failed: " + describe(status));
}

void snnrt::cuda::gemm(const CublasApi &api, cublasHandle_t handle,
                       const RowMajorGemm &g, const std::string &where,
                       bool bf16) {
  // Row-major C = op(A) op(B) is column-major Cᵀ = op(B)ᵀ op(A)ᵀ: swap the
  // operands; the transposition flags carry over unchanged.
  cublasOperation_t opA = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (bf16) {
    // fp32 data and accumulation, bf16 tensor-core products.
    if (g.batch == 1) {
      SNNRT_CUBLAS(api.cublasGemmEx(handle, opB, opA, g.n, g.m, g.k, &g.alpha,
                                    g.b, CUDA_R_32F, static_cast<int>(g.ldb),
                                    g.a, CUDA_R_32F, static_cast<int>(g.lda),
                                    &g.beta, g.c, CUDA_R_32F,
                                    static_cast<int>(g.ldc),
                                    CUBLAS_COMPUTE_32F_FAST_16BF,
                                    CUBLAS_GEMM_DEFAULT),
                   where);
      return;
    }
    SNNRT_CUBLAS(api.cublasGemmStridedBatchedEx(
                     handle, opB, opA, g.n, g.m, g.k, &g.alpha, g.b,
                     CUDA_R_32F, static_cast<int>(g.ldb), g.strideB, g.a,
                     CUDA_R_32F, static_cast<int>(g.lda), g.strideA, &g.beta,
                     g.c, CUDA_R_32F, static_cast<int>(g.ldc), g.strideC,
                     g.batch, CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_GEMM_DEFAULT),
                 where);
    return;
  }
  if (g.batch == 1) {
    SNNRT_CUBLAS(api.cublasSgemm(handle, opB, opA, g.n, g.m, g.k, &g.alpha,
                                 g.b, static_cast<int>(g.ldb), g.a,
                                 static_cast<int>(g.lda), &g.beta, g.c,
                                 static_cast<int>(g.ldc)),
                 where);
    return;
  }
  SNNRT_CUBLAS(api.cublasSgemmStridedBatched(
                   handle, opB, opA, g.n, g.m, g.k, &g.alpha, g.b,
                   static_cast<int>(g.ldb), g.strideB, g.a,
                   static_cast<int>(g.lda), g.strideA, &g.beta, g.c,
                   static_cast<int>(g.ldc), g.strideC, g.batch),
               where);
}
