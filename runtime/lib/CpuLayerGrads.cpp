//===- CpuLayerGrads.cpp - backward of the stateless layers on the CPU ----===//
//
// linear_bwd, conv2d_bwd (im2col + GEMM, col2im for gx). Every gradient
// output is overwritten, or added to when the op says `accumulate: true`.
//
//===----------------------------------------------------------------------===//

#include "CpuOpContext.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace snnrt {
namespace cpu {
namespace {

/// The outputs gx?, gw, gb? of linear_bwd / conv2d_bwd.
struct WeightGradOutputs {
  float *gx = nullptr, *gw = nullptr, *gb = nullptr;
  WeightGradOutputs(const Ctx &c, size_t xn, size_t wn, size_t bn) {
    bool needGx = c.attr("need_gx", true), hasBias = c.attr("has_bias", false);
    size_t count = 1 + needGx + hasBias;
    // An event-driven backward's dense path also reads the decision.
    size_t inputs = c.attr("unless_event_path", false) ? 4 : 3;
    c.arity(inputs, inputs, count, count);
    size_t o = 0;
    if (needGx) {
      c.expectElements(c.out(o), xn, "gx, like x");
      gx = c.outPtr(o++);
    }
    c.expectElements(c.out(o), wn, "gw, like the weight");
    gw = c.outPtr(o++);
    if (hasBias) {
      c.expectElements(c.out(o), bn, "gb, one per output channel");
      gb = c.outPtr(o++);
    }
  }
};

/// gb[j] (+)= sum over rows r and positions i of gy[(r*n + j)*inner + i].
void biasGrad(const float *gy, int64_t rows, int64_t n, int64_t inner,
              bool accumulate, float *gb) {
  std::vector<double> sum(static_cast<size_t>(n), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      const float *src = gy + (r * n + j) * inner;
      double s = 0.0;
      for (int64_t i = 0; i < inner; ++i)
        s += src[i];
      sum[j] += s;
    }
  for (int64_t j = 0; j < n; ++j)
    gb[j] = static_cast<float>(sum[j]) + (accumulate ? gb[j] : 0.0f);
}

void linearBackward(const Ctx &c) {
  // The dense path of an event-driven backward reads the decision (a 4th
  // input, two i32 words): when the event-driven kernels wrote gx and gw,
  // only gb is left to compute.
  bool eventPathRan = false;
  bool unlessEventPath = c.attr("unless_event_path", false);
  c.arity(unlessEventPath ? 4 : 3, unlessEventPath ? 4 : 3, 1, 3);
  if (unlessEventPath) {
    c.expectElements(c.in(3), 2, "the decision of an event-driven backward");
    int32_t decision[2];
    std::memcpy(decision, c.inPtr(3), sizeof(decision));
    eventPathRan = decision[1] != 0;
  }
  const TensorInfo &w = c.in(2), &x = c.in(1);
  if (w.shape.size() != 2)
    c.fail("weight '" + w.name + "' must be [N, K], got " + w.shapeString());
  int64_t n = w.shape[0], k = w.shape[1];
  int64_t rows = static_cast<int64_t>(x.numel()) / k;
  c.expectElements(c.in(0), static_cast<size_t>(rows * n), "gy, rows of N");
  WeightGradOutputs g(c, x.numel(), w.numel(), static_cast<size_t>(n));
  const float *gy = c.inPtr(0);
  float beta = c.accumulate() ? 1.0f : 0.0f;
  if (g.gx && !eventPathRan) // gx[M,K] = gy[M,N] w[N,K]
    gemm(false, false, rows, k, n, gy, c.inPtr(2), beta, g.gx);
  if (!eventPathRan) // gw[N,K] = gy^T[N,M] x[M,K]
    gemm(true, false, n, k, rows, gy, c.inPtr(1), beta, g.gw);
  if (g.gb)
    biasGrad(gy, rows, n, 1, c.accumulate(), g.gb);
}

void convBackward(const Ctx &c) {
  c.arity(3, 3, 1, 3);
  const TensorInfo &x = c.in(1), &w = c.in(2), &gyInfo = c.in(0);
  ConvGeometry geo(c, x, w, gyInfo);
  WeightGradOutputs g(c, x.numel(), w.numel(), static_cast<size_t>(geo.O));
  int64_t cols = geo.cols(), kdim = geo.kdim();
  bool acc = c.accumulate();
  if (!acc) {
    std::fill(g.gw, g.gw + w.numel(), 0.0f);
    if (g.gx)
      std::fill(g.gx, g.gx + x.numel(), 0.0f);
  }
  const float *gy = c.inPtr(0), *xp = c.inPtr(1), *wp = c.inPtr(2);
  std::vector<float> col(static_cast<size_t>(kdim * cols));
  for (int64_t s = 0; s < geo.samples; ++s)
    for (int64_t grp = 0; grp < geo.groups; ++grp) {
      const float *gys = gy + (s * geo.O + grp * geo.Og) * cols;
      im2col(geo, xp + s * geo.C * geo.H * geo.W, grp, col.data());
      // gw_g[Og, kdim] += gy_g[Og, cols] col^T[cols, kdim]
      gemm(false, true, geo.Og, kdim, cols, gys, col.data(), 1.0f,
           g.gw + grp * geo.Og * kdim);
      if (g.gx) {
        // gcol[kdim, cols] = w_g^T[kdim, Og] gy_g[Og, cols], then col2im.
        gemm(true, false, kdim, cols, geo.Og, wp + grp * geo.Og * kdim, gys,
             0.0f, col.data());
        col2im(geo, col.data(), grp, g.gx + s * geo.C * geo.H * geo.W);
      }
    }
  if (g.gb)
    biasGrad(gy, geo.samples, geo.O, cols, acc, g.gb);
}

} // namespace

void runLayerBackward(const Ctx &c) {
  const std::string &k = c.op.kind;
  if (k == "linear_bwd")
    return linearBackward(c);
  return convBackward(c);
}

} // namespace cpu
} // namespace snnrt
