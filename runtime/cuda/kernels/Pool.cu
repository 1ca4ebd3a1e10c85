//===- Pool.cu - avg/sum/max pooling, forward and backward ----------------===//

#include "Common.cuh"
#include "KernelArgs.h"

enum { SNN_POOL_AVG, SNN_POOL_SUM, SNN_POOL_MAX };

extern "C" __global__ void snnrt_pool(const float *x, float *y, SnnConvShape s,
                                      int kind) {
  long long total = s.images * s.channels * s.outHeight * s.outWidth;
  SNNRT_GRID_LOOP(i, total) {
    long long ox = i % s.outWidth, oy = (i / s.outWidth) % s.outHeight;
    const float *plane = x + (i / (s.outWidth * s.outHeight)) * s.height * s.width;
    float acc = kind == SNN_POOL_MAX ? -INFINITY : 0.0f;
    for (long long kh = 0; kh < s.kernelH; ++kh) {
      long long iy = oy * s.strideH - s.padH + kh;
      for (long long kw = 0; kw < s.kernelW; ++kw) {
        long long ix = ox * s.strideW - s.padW + kw;
        if (iy < 0 || iy >= s.height || ix < 0 || ix >= s.width)
          continue; // padding: 0 for avg/sum, -inf for max
        float v = plane[iy * s.width + ix];
        if (kind == SNN_POOL_MAX)
          acc = (v > acc || isnan(v)) ? v : acc;
        else
          acc += v;
      }
    }
    // count_include_pad: the divisor is the whole window.
    y[i] = kind == SNN_POOL_AVG ? acc / (float)(s.kernelH * s.kernelW) : acc;
  }
}

/// avg/sum backward: one thread per input element gathers the outputs whose
/// windows contain it (deterministic).
extern "C" __global__ void snnrt_pool_sum_bwd(const float *gy, float *gx,
                                              SnnConvShape s, float scale,
                                              int accumulate) {
  long long total = s.images * s.channels * s.height * s.width;
  SNNRT_GRID_LOOP(i, total) {
    long long ix = i % s.width, iy = (i / s.width) % s.height;
    const float *plane =
        gy + (i / (s.width * s.height)) * s.outHeight * s.outWidth;
    float sum = 0.0f;
    for (long long kh = 0; kh < s.kernelH; ++kh) {
      long long ty = iy + s.padH - kh;
      if (ty < 0 || ty % s.strideH || ty / s.strideH >= s.outHeight)
        continue;
      for (long long kw = 0; kw < s.kernelW; ++kw) {
        long long tx = ix + s.padW - kw;
        if (tx < 0 || tx % s.strideW || tx / s.strideW >= s.outWidth)
          continue;
        sum += plane[(ty / s.strideH) * s.outWidth + tx / s.strideW];
      }
    }
    float v = sum * scale;
    gx[i] = accumulate ? gx[i] + v : v;
  }
}

/// max backward: each output routes its gradient to the first maximum of
/// its window. gx must be zero (or hold the gradient to accumulate into).
extern "C" __global__ void snnrt_max_pool_bwd(const float *gy, const float *x,
                                              float *gx, SnnConvShape s) {
  long long total = s.images * s.channels * s.outHeight * s.outWidth;
  SNNRT_GRID_LOOP(i, total) {
    long long ox = i % s.outWidth, oy = (i / s.outWidth) % s.outHeight;
    long long planeOffset = (i / (s.outWidth * s.outHeight)) * s.height * s.width;
    const float *plane = x + planeOffset;
    float best = -INFINITY;
    long long at = -1;
    for (long long kh = 0; kh < s.kernelH; ++kh) {
      long long iy = oy * s.strideH - s.padH + kh;
      for (long long kw = 0; kw < s.kernelW; ++kw) {
        long long ix = ox * s.strideW - s.padW + kw;
        if (iy < 0 || iy >= s.height || ix < 0 || ix >= s.width)
          continue;
        float v = plane[iy * s.width + ix];
        if (at < 0 || v > best || (isnan(v) && !isnan(best))) {
          best = v;
          at = iy * s.width + ix;
        }
      }
    }
    if (at >= 0)
      atomicAdd(gx + planeOffset + at, gy[i]);
  }
}
