//===- Conv.cu - im2col / col2im for convolutions through cuBLAS ----------===//
//
// The column buffer of one group is col[k, m * P + p] with k = (c, kh, kw)
// of the group's input channels and p = (oy, ox): all images side by side,
// so that one GEMM reduces the weight gradient over every row.
//
//===----------------------------------------------------------------------===//

#include "Common.cuh"
#include "KernelArgs.h"


extern "C" __global__ void snnrt_im2col(const float *x, float *col,
                                        SnnConvShape s, long long group) {
  long long P = s.outHeight * s.outWidth;
  long long kk = s.kernelH * s.kernelW;
  long long total = s.groupChannels * kk * s.images * P;
  SNNRT_GRID_LOOP(i, total) {
    long long k = i / (s.images * P), r = i % (s.images * P);
    long long m = r / P, p = r % P;
    long long c = group * s.groupChannels + k / kk;
    long long kh = (k % kk) / s.kernelW, kw = k % s.kernelW;
    long long iy = (p / s.outWidth) * s.strideH - s.padH + kh * s.dilH;
    long long ix = (p % s.outWidth) * s.strideW - s.padW + kw * s.dilW;
    bool inside = iy >= 0 && iy < s.height && ix >= 0 && ix < s.width;
    col[i] = inside
                 ? x[((m * s.channels + c) * s.height + iy) * s.width + ix]
                 : 0.0f;
  }
}

/// gx[m, c, iy, ix] (+)= sum of the column gradients that read it; one
/// thread per input element of the group (no atomics, deterministic).
extern "C" __global__ void snnrt_col2im(const float *col, float *gx,
                                        SnnConvShape s, long long group,
                                        int accumulate) {
  long long P = s.outHeight * s.outWidth;
  long long total = s.images * s.groupChannels * s.height * s.width;
  SNNRT_GRID_LOOP(i, total) {
    long long ix = i % s.width, iy = (i / s.width) % s.height;
    long long cg = (i / (s.width * s.height)) % s.groupChannels;
    long long m = i / (s.width * s.height * s.groupChannels);
    float sum = 0.0f;
    for (long long kh = 0; kh < s.kernelH; ++kh) {
      long long ty = iy + s.padH - kh * s.dilH;
      if (ty < 0 || ty % s.strideH)
        continue;
      long long oy = ty / s.strideH;
      if (oy >= s.outHeight)
        continue;
      for (long long kw = 0; kw < s.kernelW; ++kw) {
        long long tx = ix + s.padW - kw * s.dilW;
        if (tx < 0 || tx % s.strideW)
          continue;
        long long ox = tx / s.strideW;
        if (ox >= s.outWidth)
          continue;
        long long k = (cg * s.kernelH + kh) * s.kernelW + kw;
        sum += col[k * s.images * P + m * P + oy * s.outWidth + ox];
      }
    }
    long long c = group * s.groupChannels + cg;
    float *dst = gx + ((m * s.channels + c) * s.height + iy) * s.width + ix;
    *dst = accumulate ? *dst + sum : sum;
  }
}
