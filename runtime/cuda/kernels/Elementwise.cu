//===- Elementwise.cu - bias, reductions, dropout, layouts ----------------===//

#include "Common.cuh"

#include <stdint.h>

/// y[m, n] += b[n] for rows x cols.
extern "C" __global__ void snnrt_add_bias(float *y, const float *b,
                                          long long rows, long long cols) {
  SNNRT_GRID_LOOP(i, rows * cols) y[i] += b[i % cols];
}

/// y[m, o, p] += b[o]: a bias over channels with `inner` elements each.
extern "C" __global__ void snnrt_add_channel_bias(float *y, const float *b,
                                                  long long total,
                                                  long long channels,
                                                  long long inner) {
  SNNRT_GRID_LOOP(i, total) y[i] += b[(i / inner) % channels];
}

/// gb[c] (+)= sum over the rows m and the inner p of g[m, c, p]: one block
/// per channel, a fixed order, so the result is deterministic.
extern "C" __global__ void snnrt_channel_sum(const float *g, float *gb,
                                             long long rows, long long channels,
                                             long long inner, int accumulate) {
  __shared__ float scratch[32];
  long long c = blockIdx.x;
  float sum = 0.0f;
  for (long long i = threadIdx.x; i < rows * inner; i += blockDim.x) {
    long long m = i / inner, p = i % inner;
    sum += g[(m * channels + c) * inner + p];
  }
  sum = blockSum(sum, scratch);
  if (threadIdx.x == 0)
    gb[c] = accumulate ? gb[c] + sum : sum;
}

/// out[o, m * inner + p] = in[m, o, p]: gathers one channel's values of all
/// rows into a contiguous row (for weight gradients in one GEMM).
extern "C" __global__ void snnrt_channels_first(const float *in, float *out,
                                                long long rows,
                                                long long channels,
                                                long long inner) {
  long long total = rows * channels * inner;
  SNNRT_GRID_LOOP(i, total) {
    long long o = i / (rows * inner), r = i % (rows * inner);
    long long m = r / inner, p = r % inner;
    out[i] = in[(m * channels + o) * inner + p];
  }
}

namespace {
/// A counter-based generator: a uniform float in [0, 1) from (seed, index).
__device__ __forceinline__ float uniform(unsigned long long seed,
                                         unsigned long long index) {
  uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (z >> 40) * (1.0f / 16777216.0f);
}
} // namespace

/// Training dropout: mask ~ Bernoulli(1 - p), y = x mask / (1 - p).
extern "C" __global__ void snnrt_dropout(const float *x, float *y,
                                         unsigned char *mask, float p,
                                         unsigned long long seed, long long n) {
  float keep = 1.0f - p;
  SNNRT_GRID_LOOP(i, n) {
    unsigned char m = uniform(seed, i) < keep ? 1 : 0;
    mask[i] = m;
    y[i] = m ? x[i] / keep : 0.0f;
  }
}

extern "C" __global__ void snnrt_dropout_bwd(const float *gy,
                                             const unsigned char *mask,
                                             float *gx, float p, long long n,
                                             int accumulate) {
  float keep = 1.0f - p;
  SNNRT_GRID_LOOP(i, n) {
    float v = mask[i] ? gy[i] / keep : 0.0f;
    gx[i] = accumulate ? gx[i] + v : v;
  }
}
