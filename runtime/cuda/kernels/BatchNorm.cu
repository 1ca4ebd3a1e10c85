//===- BatchNorm.cu - batch norm over x[M, C, S] --------------------------===//
//
// Statistics: one block per channel, two passes (mean, then the squared
// deviations) in a fixed order, so results are deterministic.
//
//===----------------------------------------------------------------------===//

#include "Common.cuh"

namespace {
__device__ __forceinline__ float at(const float *x, long long i, long long c,
                                    long long C, long long S) {
  return x[((i / S) * C + c) * S + i % S];
}
} // namespace

/// Training statistics: saved_mean, saved_invstd, and the running update
/// r = (1 - momentum) r + momentum stat (unbiased variance).
extern "C" __global__ void snnrt_bn_stats(const float *x, long long M,
                                          long long C, long long S, float eps,
                                          float momentum, float *savedMean,
                                          float *savedInvstd, float *runMean,
                                          float *runVar) {
  __shared__ float scratch[32];
  long long c = blockIdx.x, n = M * S;
  float sum = 0.0f;
  for (long long i = threadIdx.x; i < n; i += blockDim.x)
    sum += at(x, i, c, C, S);
  float mean = blockSum(sum, scratch) / (float)n;
  float sq = 0.0f;
  for (long long i = threadIdx.x; i < n; i += blockDim.x) {
    float d = at(x, i, c, C, S) - mean;
    sq += d * d;
  }
  float var = blockSum(sq, scratch) / (float)n;
  if (threadIdx.x != 0)
    return;
  savedMean[c] = mean;
  savedInvstd[c] = 1.0f / sqrtf(var + eps);
  float unbiased = n > 1 ? var * ((float)n / (float)(n - 1)) : var;
  if (runMean)
    runMean[c] = (1.0f - momentum) * runMean[c] + momentum * mean;
  if (runVar)
    runVar[c] = (1.0f - momentum) * runVar[c] + momentum * unbiased;
}

/// y = (x - mean) * invstd * gamma + beta; with `fromVar`, `scale` holds the
/// running variance and invstd = 1 / sqrt(var + eps) (eval mode).
extern "C" __global__ void snnrt_bn_apply(const float *x, float *y,
                                          const float *mean, const float *scale,
                                          int fromVar, float eps,
                                          const float *gamma, const float *beta,
                                          long long total, long long C,
                                          long long S) {
  SNNRT_GRID_LOOP(i, total) {
    long long c = (i / S) % C;
    float invstd = fromVar ? 1.0f / sqrtf(scale[c] + eps) : scale[c];
    y[i] = (x[i] - mean[c]) * invstd * gamma[c] + beta[c];
  }
}

/// sums[c] = sum gy, sums[C + c] = sum gy * xhat; ggamma/gbeta (+)= them.
extern "C" __global__ void snnrt_bn_bwd_reduce(
    const float *gy, const float *x, const float *mean, const float *invstd,
    long long M, long long C, long long S, float *sums, float *ggamma,
    float *gbeta, int accumulate) {
  __shared__ float scratch[32];
  long long c = blockIdx.x, n = M * S;
  float sg = 0.0f, sgx = 0.0f;
  for (long long i = threadIdx.x; i < n; i += blockDim.x) {
    float g = at(gy, i, c, C, S);
    sg += g;
    sgx += g * (at(x, i, c, C, S) - mean[c]) * invstd[c];
  }
  sg = blockSum(sg, scratch);
  sgx = blockSum(sgx, scratch);
  if (threadIdx.x != 0)
    return;
  sums[c] = sg;
  sums[C + c] = sgx;
  gbeta[c] = accumulate ? gbeta[c] + sg : sg;
  ggamma[c] = accumulate ? ggamma[c] + sgx : sgx;
}

/// gx = gamma invstd (gy - sum(gy)/n - xhat sum(gy xhat)/n).
extern "C" __global__ void snnrt_bn_bwd_apply(
    const float *gy, const float *x, const float *mean, const float *invstd,
    const float *gamma, const float *sums, float *gx, long long total,
    long long C, long long S, int accumulate) {
  float n = (float)(total / C);
  SNNRT_GRID_LOOP(i, total) {
    long long c = (i / S) % C;
    float xhat = (x[i] - mean[c]) * invstd[c];
    float v = gamma[c] * invstd[c] *
              (gy[i] - sums[c] / n - xhat * (sums[C + c] / n));
    gx[i] = accumulate ? gx[i] + v : v;
  }
}
