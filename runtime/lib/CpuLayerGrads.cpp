//===- CpuLayerGrads.cpp - backward of the stateless layers on the CPU ----===//
//
// linear_bwd, conv2d_bwd: GEMMs (CBLAS) and the op's generated kernels
// (the bias gradient; im2col, col2im and the layout copy of the columns).
// Every gradient output is overwritten, or added to when the op says
// `accumulate: true`.
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
  /// `scratch`: the op's scratch tensors, after the gradients.
  WeightGradOutputs(const Ctx &c, size_t xn, size_t wn, size_t bn,
                    size_t scratch = 0) {
    bool needGx = c.attr("need_gx", true), hasBias = c.attr("has_bias", false);
    size_t count = 1 + needGx + hasBias;
    // An event-driven backward's dense path also reads the decision.
    size_t inputs = c.attr("unless_event_path", false) ? 4 : 3;
    c.arity(inputs, inputs, count + scratch, count + scratch);
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

void linearBackward(const Ctx &c) {
  // The dense path of an event-driven backward reads the decision (a 4th
  // input, two i32 words): when the event-driven kernels wrote gx and gw,
  // only gb is left to compute.
  bool eventPathRan = false;
  bool unlessEventPath = c.attr("unless_event_path", false);
  // The scratch of a split thin gw (`gw_chunks`) is the GPU's: the CPU
  // runs one GEMM, which OpenBLAS spreads over the threads.
  size_t scratch = scratchCount(c);
  c.arity(unlessEventPath ? 4 : 3, unlessEventPath ? 4 : 3, 1, 3 + scratch);
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
  WeightGradOutputs g(c, x.numel(), w.numel(), static_cast<size_t>(n),
                      scratch);
  const float *gy = c.inPtr(0);
  float beta = c.accumulate() ? 1.0f : 0.0f;
  if (g.gx && !eventPathRan) // gx[M,K] = gy[M,N] w[N,K]
    gemm(false, false, rows, k, n, gy, c.inPtr(2), beta, g.gx);
  if (!eventPathRan) // gw[N,K] = gy^T[N,M] x[M,K]
    gemm(true, false, n, k, rows, gy, c.inPtr(1), beta, g.gw);
  runOpLaunches(c); // gb
}

/// Per chunk of images: gy as [O, images * P], the columns of x, then per
/// group gw (+)= gy_g colᵀ_g (one GEMM over the chunk) and, for gx, the
/// column gradient w_gᵀ gy_g in place of col_g, scattered back by col2im.
/// NHWC: gw (+)= gyᵀ col and the column gradient gy w, on gy in place.
void convBackward(const Ctx &c) {
  size_t scratch = scratchCount(c);
  // The dense path of an event-driven weight gradient reads the decision
  // (a 4th input): when event_conv2d_weight_grad wrote gw, only gx and gb
  // are left to compute.
  bool unlessEventPath = c.attr("unless_event_path", false);
  c.arity(unlessEventPath ? 4 : 3, unlessEventPath ? 4 : 3, 1 + scratch,
          3 + scratch);
  bool eventPathRan = false;
  if (unlessEventPath) {
    c.expectElements(c.in(3), 2, "the decision of an event-driven gradient");
    int32_t decision[2];
    std::memcpy(decision, c.inPtr(3), sizeof(decision));
    eventPathRan = decision[1] != 0;
  }
  const TensorInfo &x = c.in(1), &w = c.in(2), &gyInfo = c.in(0);
  ConvGeometry geo(c, x, w, gyInfo);
  WeightGradOutputs g(c, x.numel(), w.numel(), static_cast<size_t>(geo.O),
                      scratch);
  ConvColumns plan(c, geo);
  int64_t cols = plan.images * geo.cols(), kdim = geo.kdim();
  const float *gy = c.inPtr(0), *xp = c.inPtr(1), *wp = c.inPtr(2);
  for (int64_t s = 0; s < geo.samples; s += plan.images) {
    float beta = (c.accumulate() || s > 0) ? 1.0f : 0.0f;
    if (geo.channelsLast) {
      // NHWC: gy is [images * P, O] as it is; the column rows are pixels.
      const float *gyChunk = gy + s * geo.O * geo.cols();
      if (!eventPathRan) {
        plan.run(c, "im2col", xp + s * geo.C * geo.H * geo.W, plan.col);
        gemm(true, false, geo.O, kdim, cols, gyChunk, plan.col, beta, g.gw);
      }
      if (g.gx) {
        gemm(false, false, cols, kdim, geo.O, gyChunk, wp, 0.0f, plan.col);
        plan.run(c, "col2im", plan.col, g.gx + s * geo.C * geo.H * geo.W);
      }
      continue;
    }
    plan.run(c, "channels_first", gy + s * geo.O * geo.cols(), plan.rows);
    if (!eventPathRan)
      plan.run(c, "im2col", xp + s * geo.C * geo.H * geo.W, plan.col);
    for (int64_t grp = 0; grp < geo.groups; ++grp) {
      const float *gyG = plan.rows + grp * geo.Og * cols;
      float *colG = plan.col + grp * kdim * cols;
      if (!eventPathRan)
        gemm(false, true, geo.Og, kdim, cols, gyG, colG, beta,
             g.gw + grp * geo.Og * kdim);
      if (g.gx)
        gemm(true, false, kdim, cols, geo.Og, wp + grp * geo.Og * kdim, gyG,
             0.0f, colG);
    }
    if (g.gx)
      plan.run(c, "col2im", plan.col, g.gx + s * geo.C * geo.H * geo.W);
  }
  runOpLaunches(c); // gb
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
