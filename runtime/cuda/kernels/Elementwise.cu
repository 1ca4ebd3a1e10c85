//===- Elementwise.cu - bias, reductions, layouts -------------------------===//

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
