//===- BatchNorm.cu - batch norm over x[M, C, S] --------------------------===//
//
// Statistics and the backward's sums: many blocks per channel write partial
// sums, one thread per channel combines them in a fixed order (so results
// are deterministic), in double.
//
//===----------------------------------------------------------------------===//

#include "Common.cuh"
#include "VectorAccess.cuh"

namespace {
/// (i / S) % C, in 32 bits when the tensor allows (64-bit division is slow;
/// below 2^30 the grid-stride index cannot overflow either).
__device__ __forceinline__ long long channelOf(long long i, long long total,
                                               long long C, long long S) {
  if (total <= 0x3fffffffLL)
    return ((unsigned)i / (unsigned)S) % (unsigned)C;
  return (i / S) % C;
}
} // namespace

/// Block b = c * P + p of a statistics pass covers rows
/// [p * rowsPer, (p + 1) * rowsPer) of channel c; 32-bit indices inside a
/// partition (the host keeps rowsPer * S below 2^31).
struct Part {
  long long c, m0;
  int n; // elements of this partition
};
__device__ __forceinline__ Part partition(long long M, long long S, int P,
                                          long long rowsPer) {
  Part r;
  r.c = blockIdx.x / P;
  r.m0 = (blockIdx.x % P) * rowsPer;
  long long m1 = min(M, r.m0 + rowsPer);
  r.n = r.m0 < m1 ? (int)((m1 - r.m0) * S) : 0;
  return r;
}
__device__ __forceinline__ long long offset(const Part &q, int j, int S,
                                            long long C) {
  return ((q.m0 + j / S) * C + q.c) * S + j % S;
}

/// Training statistics, pass 1: per partition the sums of (x - K) and
/// (x - K)^2, K = the channel's first element (a shift against
/// cancellation). Many blocks per channel; the partials are combined in a
/// fixed order by snnrt_bn_stats_finish, so results are deterministic.
// V = 4 (16-byte accesses) when the host finds S % 4 == 0 and the tensors
// 16-byte aligned, else 1. Element order within a pack is kept, so sums are
// the same in either width.
template <int V>
__device__ void statsPartial(const float *x, long long C, long long S,
                             const Part &q, float &sum, float &sq) {
  float k = x[q.c * S];
  for (int j = threadIdx.x; j < q.n / V; j += blockDim.x) {
    Vec<V> r = load<V>(x, offset(q, j * V, (int)S, C));
    for (int e = 0; e < V; ++e) {
      float d = r.v[e] - k;
      sum += d;
      sq += d * d;
    }
  }
}

extern "C" __global__ void snnrt_bn_stats_partial(const float *x, long long M,
                                                  long long C, long long S,
                                                  int P, long long rowsPer,
                                                  float *partial, int vec) {
  __shared__ float scratch[32];
  Part q = partition(M, S, P, rowsPer);
  float sum = 0.0f, sq = 0.0f;
  if (vec == 4)
    statsPartial<4>(x, C, S, q, sum, sq);
  else
    statsPartial<1>(x, C, S, q, sum, sq);
  sum = blockSum(sum, scratch);
  sq = blockSum(sq, scratch);
  if (threadIdx.x == 0) {
    partial[2 * blockIdx.x] = sum;
    partial[2 * blockIdx.x + 1] = sq;
  }
}

/// Pass 2, one thread per channel: saved_mean, saved_invstd and the running
/// update r = (1 - momentum) r + momentum stat (unbiased variance).
extern "C" __global__ void snnrt_bn_stats_finish(
    const float *x, const float *partial, long long M, long long C,
    long long S, int P, float eps, float momentum, float *savedMean,
    float *savedInvstd, float *runMean, float *runVar) {
  SNNRT_GRID_LOOP(c, C) {
    double sum = 0.0, sq = 0.0, n = (double)(M * S);
    for (int p = 0; p < P; ++p) {
      sum += partial[2 * (c * P + p)];
      sq += partial[2 * (c * P + p) + 1];
    }
    double shifted = sum / n;
    double var = sq / n - shifted * shifted;
    var = var > 0.0 ? var : 0.0;
    float mean = (float)(x[c * S] + shifted);
    savedMean[c] = mean;
    savedInvstd[c] = (float)(1.0 / sqrt(var + (double)eps));
    float unbiased = n > 1 ? (float)(var * n / (n - 1)) : (float)var;
    if (runMean)
      runMean[c] = (1.0f - momentum) * runMean[c] + momentum * mean;
    if (runVar)
      runVar[c] = (1.0f - momentum) * runVar[c] + momentum * unbiased;
  }
}

/// y = (x - mean) * invstd * gamma + beta; with `fromVar`, `scale` holds the
/// running variance and invstd = 1 / sqrt(var + eps) (eval mode).
template <int V>
__device__ void bnApply(const float *x, float *y, const float *mean,
                        const float *scale, int fromVar, float eps,
                        const float *gamma, const float *beta, long long total,
                        long long C, long long S) {
  long long packs = total / V;
  SNNRT_GRID_LOOP(i, packs) {
    long long c = channelOf(i, packs, C, S / V);
    float invstd = fromVar ? 1.0f / sqrtf(scale[c] + eps) : scale[c];
    Vec<V> r = load<V>(x, i * V);
    for (int e = 0; e < V; ++e)
      r.v[e] = (r.v[e] - mean[c]) * invstd * gamma[c] + beta[c];
    store<V>(y, i * V, r);
  }
}

extern "C" __global__ void snnrt_bn_apply(const float *x, float *y,
                                          const float *mean, const float *scale,
                                          int fromVar, float eps,
                                          const float *gamma, const float *beta,
                                          long long total, long long C,
                                          long long S, int vec) {
  if (vec == 4)
    bnApply<4>(x, y, mean, scale, fromVar, eps, gamma, beta, total, C, S);
  else
    bnApply<1>(x, y, mean, scale, fromVar, eps, gamma, beta, total, C, S);
}

/// Backward, pass 1: per partition, sum gy and sum gy * xhat.
template <int V>
__device__ void bwdPartial(const float *gy, const float *x, float mu,
                           float inv, long long C, long long S, const Part &q,
                           float &sg, float &sgx) {
  for (int j = threadIdx.x; j < q.n / V; j += blockDim.x) {
    long long at = offset(q, j * V, (int)S, C);
    Vec<V> g = load<V>(gy, at), xv = load<V>(x, at);
    for (int e = 0; e < V; ++e) {
      sg += g.v[e];
      sgx += g.v[e] * (xv.v[e] - mu) * inv;
    }
  }
}

extern "C" __global__ void snnrt_bn_bwd_partial(
    const float *gy, const float *x, const float *mean, const float *invstd,
    long long M, long long C, long long S, int P, long long rowsPer,
    float *partial, int vec) {
  __shared__ float scratch[32];
  Part q = partition(M, S, P, rowsPer);
  float mu = mean[q.c], inv = invstd[q.c];
  float sg = 0.0f, sgx = 0.0f;
  if (vec == 4)
    bwdPartial<4>(gy, x, mu, inv, C, S, q, sg, sgx);
  else
    bwdPartial<1>(gy, x, mu, inv, C, S, q, sg, sgx);
  sg = blockSum(sg, scratch);
  sgx = blockSum(sgx, scratch);
  if (threadIdx.x == 0) {
    partial[2 * blockIdx.x] = sg;
    partial[2 * blockIdx.x + 1] = sgx;
  }
}

/// Pass 2, one thread per channel: sums[c] = sum gy, sums[C + c] = sum gy
/// xhat; ggamma/gbeta (+)= them.
extern "C" __global__ void snnrt_bn_bwd_finish(const float *partial,
                                               long long C, int P, float *sums,
                                               float *ggamma, float *gbeta,
                                               int accumulate) {
  SNNRT_GRID_LOOP(c, C) {
    double sg = 0.0, sgx = 0.0;
    for (int p = 0; p < P; ++p) {
      sg += partial[2 * (c * P + p)];
      sgx += partial[2 * (c * P + p) + 1];
    }
    sums[c] = (float)sg;
    sums[C + c] = (float)sgx;
    gbeta[c] = accumulate ? gbeta[c] + (float)sg : (float)sg;
    ggamma[c] = accumulate ? ggamma[c] + (float)sgx : (float)sgx;
  }
}

/// gx = gamma invstd (gy - sum(gy)/n - xhat sum(gy xhat)/n).
template <int V>
__device__ void bwdApply(const float *gy, const float *x, const float *mean,
                         const float *invstd, const float *gamma,
                         const float *sums, float *gx, long long total,
                         long long C, long long S, int accumulate) {
  float n = (float)(total / C);
  long long packs = total / V;
  SNNRT_GRID_LOOP(i, packs) {
    long long c = channelOf(i, packs, C, S / V);
    Vec<V> g = load<V>(gy, i * V), xv = load<V>(x, i * V), out;
    Vec<V> prev = accumulate ? load<V>(gx, i * V) : Vec<V>{};
    for (int e = 0; e < V; ++e) {
      float xhat = (xv.v[e] - mean[c]) * invstd[c];
      float v = gamma[c] * invstd[c] *
                (g.v[e] - sums[c] / n - xhat * (sums[C + c] / n));
      out.v[e] = accumulate ? prev.v[e] + v : v;
    }
    store<V>(gx, i * V, out);
  }
}

extern "C" __global__ void snnrt_bn_bwd_apply(
    const float *gy, const float *x, const float *mean, const float *invstd,
    const float *gamma, const float *sums, float *gx, long long total,
    long long C, long long S, int accumulate, int vec) {
  if (vec == 4)
    bwdApply<4>(gy, x, mean, invstd, gamma, sums, gx, total, C, S, accumulate);
  else
    bwdApply<1>(gy, x, mean, invstd, gamma, sums, gx, total, C, S, accumulate);
}
