//===- Pool.cu - avg/sum/max pooling, forward and backward ----------------===//

#include "Common.cuh"
#include "KernelArgs.h"

// Index arithmetic is done in the type I: int when the tensor has fewer
// than 2^30 elements (64-bit division and modulo are many times slower on
// the GPU), long long otherwise. The host-visible kernels pick at run time.

enum { SNN_POOL_AVG, SNN_POOL_SUM, SNN_POOL_MAX };

namespace {
/// The window geometry in the index type I.
template <typename I> struct Geometry {
  I C, H, W, OH, OW, KH, KW, SH, SW, PH, PW;
  __device__ explicit Geometry(const SnnConvShape &s)
      : C((I)s.channels), H((I)s.height), W((I)s.width), OH((I)s.outHeight),
        OW((I)s.outWidth), KH((I)s.kernelH), KW((I)s.kernelW),
        SH((I)s.strideH), SW((I)s.strideW), PH((I)s.padH), PW((I)s.padW) {}
};

template <typename I>
__device__ void pool(const float *x, float *y, const SnnConvShape &shape,
                     int kind, long long total) {
  Geometry<I> s(shape);
  SNNRT_GRID_LOOP_T(I, i, total) {
    I ox = i % s.OW, oy = (i / s.OW) % s.OH;
    const float *plane = x + (long long)(i / (s.OW * s.OH)) * s.H * s.W;
    float acc = kind == SNN_POOL_MAX ? -INFINITY : 0.0f;
    for (I kh = 0; kh < s.KH; ++kh) {
      I iy = oy * s.SH - s.PH + kh;
      for (I kw = 0; kw < s.KW; ++kw) {
        I ix = ox * s.SW - s.PW + kw;
        if (iy < 0 || iy >= s.H || ix < 0 || ix >= s.W)
          continue; // padding: 0 for avg/sum, -inf for max
        float v = plane[iy * s.W + ix];
        if (kind == SNN_POOL_MAX)
          acc = (v > acc || isnan(v)) ? v : acc;
        else
          acc += v;
      }
    }
    // count_include_pad: the divisor is the whole window.
    y[i] = kind == SNN_POOL_AVG ? acc / (float)(s.KH * s.KW) : acc;
  }
}

template <typename I>
__device__ void poolSumBackward(const float *gy, float *gx,
                                const SnnConvShape &shape, float scale,
                                int accumulate, long long total) {
  Geometry<I> s(shape);
  SNNRT_GRID_LOOP_T(I, i, total) {
    I ix = i % s.W, iy = (i / s.W) % s.H;
    const float *plane = gy + (long long)(i / (s.W * s.H)) * s.OH * s.OW;
    float sum = 0.0f;
    for (I kh = 0; kh < s.KH; ++kh) {
      I ty = iy + s.PH - kh;
      if (ty < 0 || ty % s.SH || ty / s.SH >= s.OH)
        continue;
      for (I kw = 0; kw < s.KW; ++kw) {
        I tx = ix + s.PW - kw;
        if (tx < 0 || tx % s.SW || tx / s.SW >= s.OW)
          continue;
        sum += plane[(ty / s.SH) * s.OW + tx / s.SW];
      }
    }
    float v = sum * scale;
    gx[i] = accumulate ? gx[i] + v : v;
  }
}
/// Windows that tile the input (kernel = stride, no padding, sizes divide):
/// each input element gets the gradient of its one window. A thread per
/// output element: one read, KH x KW writes, and no division per window.
template <typename I>
__device__ void poolSumBackwardTiled(const float *gy, float *gx,
                                     const SnnConvShape &shape, float scale,
                                     int accumulate, long long total) {
  Geometry<I> s(shape);
  SNNRT_GRID_LOOP_T(I, i, total) {
    I ox = i % s.OW, rest = i / s.OW;
    I oy = rest % s.OH, plane = rest / s.OH;
    float v = gy[i] * scale;
    float *dst = gx + (long long)plane * s.H * s.W + (oy * s.KH) * s.W +
                 ox * s.KW;
    for (I kh = 0; kh < s.KH; ++kh)
      for (I kw = 0; kw < s.KW; ++kw) {
        float *p = dst + kh * s.W + kw;
        *p = accumulate ? *p + v : v;
      }
  }
}
} // namespace

extern "C" __global__ void snnrt_pool(const float *x, float *y, SnnConvShape s,
                                      int kind) {
  long long total = s.images * s.channels * s.outHeight * s.outWidth;
  long long inTotal = s.images * s.channels * s.height * s.width;
  if (total <= 0x3fffffffLL && inTotal <= 0x3fffffffLL)
    pool<int>(x, y, s, kind, total);
  else
    pool<long long>(x, y, s, kind, total);
}

/// avg/sum backward: one thread per input element gathers the outputs whose
/// windows contain it (deterministic).
extern "C" __global__ void snnrt_pool_sum_bwd(const float *gy, float *gx,
                                              SnnConvShape s, float scale,
                                              int accumulate) {
  long long total = s.images * s.channels * s.height * s.width;
  if (total <= 0x3fffffffLL)
    poolSumBackward<int>(gy, gx, s, scale, accumulate, total);
  else
    poolSumBackward<long long>(gy, gx, s, scale, accumulate, total);
}

extern "C" __global__ void snnrt_pool_sum_bwd_tiled(const float *gy,
                                                    float *gx, SnnConvShape s,
                                                    float scale,
                                                    int accumulate) {
  long long total = s.images * s.channels * s.outHeight * s.outWidth;
  long long inTotal = s.images * s.channels * s.height * s.width;
  if (inTotal <= 0x3fffffffLL)
    poolSumBackwardTiled<int>(gy, gx, s, scale, accumulate, total);
  else
    poolSumBackwardTiled<long long>(gy, gx, s, scale, accumulate, total);
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
