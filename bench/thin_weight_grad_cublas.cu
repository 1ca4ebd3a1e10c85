// The SHD readout's weight gradient gw = gy^T x (gy [12800, 20], x [12800,
// 1472] spikes at 1%, row-major) through cuBLAS in several forms: the one
// GEMM over all rows, its transposed result, a strided batch of per-chunk
// partials plus their sum (the `gw_chunks` the compiler picks), and every
// cublasGemmEx algorithm. GPU machine:
//   nvcc -O2 -o /tmp/thin bench/thin_weight_grad_cublas.cu -lcublas && /tmp/thin
// (bench/results/2026-12-04-H200-thin-weight-grad.md).
#include <cublas_v2.h>
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <cstdlib>
#define CK(x) do { auto e = (x); if (e) { printf("err %d line %d\n", (int)e, __LINE__); exit(1);} } while(0)
int main() {
  const int K = 12800, M = 20, N = 1472;
  float *gy, *x, *c, *c2, *part, *ones;
  CK(cudaMalloc(&gy, K * M * 4)); CK(cudaMalloc(&x, (size_t)K * N * 4));
  CK(cudaMalloc(&c, M * N * 4)); CK(cudaMalloc(&c2, M * N * 4));
  CK(cudaMalloc(&part, 100 * M * N * 4)); CK(cudaMalloc(&ones, 100 * 4));
  std::vector<float> h((size_t)K * N);
  for (auto &v : h) v = (rand() % 100 == 0) ? 1.f : 0.f;
  CK(cudaMemcpy(x, h.data(), (size_t)K * N * 4, cudaMemcpyHostToDevice));
  std::vector<float> g(K * M); for (auto &v : g) v = rand() / (float)RAND_MAX - 0.5f;
  CK(cudaMemcpy(gy, g.data(), K * M * 4, cudaMemcpyHostToDevice));
  std::vector<float> o(100, 1.f); CK(cudaMemcpy(ones, o.data(), 400, cudaMemcpyHostToDevice));
  cublasHandle_t hd; CK(cublasCreate(&hd));
  float one = 1, zero = 0;
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  auto timeit = [&](const char *name, auto fn) {
    for (int i = 0; i < 5; ++i) fn();
    cudaEventRecord(a);
    for (int i = 0; i < 50; ++i) fn();
    cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    printf("%-40s %8.2f us\n", name, ms * 1000 / 50);
  };
  // 1. C_cm[N, M] = X'(N x K) * G'^T (K x M)
  timeit("NT m=N n=M (current layout)", [&] {
    CK(cublasSgemm(hd, CUBLAS_OP_N, CUBLAS_OP_T, N, M, K, &one, x, N, gy, M, &zero, c, N)); });
  // 2. C2_cm[M, N] = G'(M x K) * X'^T
  timeit("NT m=M n=N (transposed result)", [&] {
    CK(cublasSgemm(hd, CUBLAS_OP_N, CUBLAS_OP_T, M, N, K, &one, gy, M, x, N, &zero, c2, M)); });
  // 3. split-K by hand: P chunks, strided batched, then reduce with a GEMV.
  for (int P : {16, 20, 25, 32, 40, 50, 64, 80, 100}) {
    int kc = K / P;
    char name[64]; snprintf(name, 64, "batched %d chunks + gemv", P);
    timeit(name, [&] {
      CK(cublasSgemmStridedBatched(hd, CUBLAS_OP_N, CUBLAS_OP_T, N, M, kc, &one, x, N, (long long)kc * N,
                                   gy, M, (long long)kc * M, &zero, part, N, (long long)N * M, P));
      // sum over P: part as [P, N*M] row-major = col-major [N*M, P]; c = part * ones
      CK(cublasSgemv(hd, CUBLAS_OP_N, N * M, P, &one, part, N * M, ones, 1, &zero, c2, 1));
    });
  }
  // 3b. the same with each chunk's result transposed (C_cm[M, N] per chunk),
  // summed, then transposed back with cublasSgeam.
  for (int P : {16, 20, 25, 32, 50, 64, 100}) {
    int kc = K / P;
    char name[64]; snprintf(name, 64, "batched transposed %d + gemv + geam", P);
    timeit(name, [&] {
      CK(cublasSgemmStridedBatched(hd, CUBLAS_OP_N, CUBLAS_OP_T, M, N, kc, &one, gy, M, (long long)kc * M,
                                   x, N, (long long)kc * N, &zero, part, M, (long long)N * M, P));
      CK(cublasSgemv(hd, CUBLAS_OP_N, N * M, P, &one, part, N * M, ones, 1, &zero, c2, 1));
      CK(cublasSgeam(hd, CUBLAS_OP_T, CUBLAS_OP_N, N, M, &one, c2, M, &zero, c, N, c, N));
    });
  }
  // 4. GemmEx with algos
  for (int algo = -1; algo <= 0; ++algo) {
    char name[64]; snprintf(name, 64, "GemmEx algo %d", algo);
    cublasStatus_t st = cublasGemmEx(hd, CUBLAS_OP_N, CUBLAS_OP_T, N, M, K, &one, x, CUDA_R_32F, N, gy, CUDA_R_32F, M, &zero, c, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, (cublasGemmAlgo_t)algo);
    if (st) continue;
    timeit(name, [&] { cublasGemmEx(hd, CUBLAS_OP_N, CUBLAS_OP_T, N, M, K, &one, x, CUDA_R_32F, N, gy, CUDA_R_32F, M, &zero, c, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, (cublasGemmAlgo_t)algo); });
  }
  CK(cudaDeviceSynchronize());
  return 0;
}
