//===- CpuLoss.cpp - rate and membrane losses on the CPU ------------------===//
//
// The losses read the time mean m[b, c] = mean_t y[t, b, c]: cross-entropy
// of softmax(m) (spike rates or readout membrane) or MSE against the one-hot
// label. Computed in double; the gradient spreads evenly over the T steps.
// loss_ce_membrane_max reads m[b, c] = max_t y[t, b, c] instead; its
// gradient goes to the first step that reaches the maximum.
//
//===----------------------------------------------------------------------===//

#include "CpuOpContext.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace snnrt {
namespace cpu {

LossValue rateLoss(const std::string &kind, const float *y, int64_t T,
                   int64_t B, int64_t C, const int32_t *labels, int64_t valid,
                   float *gy,
                   const std::function<void(const std::string &)> &fail) {
  bool mse = kind == "loss_mse_rate";
  bool maxOverTime = kind == "loss_ce_membrane_max";
  if (!mse && !maxOverTime && kind != "loss_ce_rate" &&
      kind != "loss_ce_membrane")
    fail("unknown loss '" + kind +
         "' (expected loss_ce_rate, loss_mse_rate, loss_ce_membrane or "
         "loss_ce_membrane_max)");
  LossValue result;
  std::vector<double> m(static_cast<size_t>(C)), g(static_cast<size_t>(C));
  std::vector<int64_t> argT(static_cast<size_t>(C));
  double divisor = mse ? double(valid) * double(C) : double(valid);
  for (int64_t b = 0; b < B; ++b) {
    if (b >= valid) {
      if (gy)
        for (int64_t t = 0; t < T; ++t)
          std::memset(gy + (t * B + b) * C, 0, sizeof(float) * C);
      continue;
    }
    int32_t label = labels[b];
    if (label < 0 || label >= C)
      fail("label " + std::to_string(label) + " of sample " +
           std::to_string(b) + " is outside [0, " + std::to_string(C) +
           "): the labels do not match the model's " + std::to_string(C) +
           " outputs");
    if (maxOverTime) {
      for (int64_t c = 0; c < C; ++c) {
        argT[c] = 0;
        m[c] = y[b * C + c];
      }
      for (int64_t t = 1; t < T; ++t)
        for (int64_t c = 0; c < C; ++c)
          if (y[(t * B + b) * C + c] > m[c]) {
            m[c] = y[(t * B + b) * C + c];
            argT[c] = t;
          }
    } else {
      std::fill(m.begin(), m.end(), 0.0);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < C; ++c)
          m[c] += y[(t * B + b) * C + c];
      for (int64_t c = 0; c < C; ++c)
        m[c] /= double(T);
    }
    int64_t best = 0;
    for (int64_t c = 0; c < C; ++c)
      if (m[c] > m[best])
        best = c;
    result.correct += best == label;
    if (mse) {
      for (int64_t c = 0; c < C; ++c) {
        double d = m[c] - (c == label ? 1.0 : 0.0);
        result.loss += d * d;
        g[c] = 2.0 * d;
      }
    } else {
      double mx = m[best], sum = 0.0;
      for (int64_t c = 0; c < C; ++c)
        sum += std::exp(m[c] - mx);
      result.loss += std::log(sum) + mx - m[label];
      for (int64_t c = 0; c < C; ++c)
        g[c] = std::exp(m[c] - mx) / sum - (c == label ? 1.0 : 0.0);
    }
    if (gy && maxOverTime)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < C; ++c)
          gy[(t * B + b) * C + c] =
              t == argT[c] ? static_cast<float>(g[c] / divisor) : 0.0f;
    else if (gy)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t c = 0; c < C; ++c)
          gy[(t * B + b) * C + c] =
              static_cast<float>(g[c] / (divisor * double(T)));
  }
  result.loss /= divisor;
  return result;
}

void runLoss(const Ctx &c) {
  c.arity(2, 2, 2, 3);
  const TensorInfo &y = c.in(0), &labels = c.in(1);
  if (y.shape.size() < 3)
    c.fail("y must be [T, B, C...], got " + y.shapeString());
  int64_t T = y.shape[0], B = y.shape[1];
  int64_t C = static_cast<int64_t>(y.numel()) / (T * B);
  c.expectElements(labels, static_cast<size_t>(B), "one label per sample");
  if (labels.dtype != DType::I32)
    c.fail("labels '" + labels.name + "' must have dtype i32");
  c.expectElements(c.out(0), 1, "the scalar loss");
  c.expectElements(c.out(1), y.numel(), "gy, like y");
  std::vector<int32_t> lab(static_cast<size_t>(B));
  std::memcpy(lab.data(), c.inPtr(1), sizeof(int32_t) * B); // i32 bits
  GradOut gy(c, c.outPtr(1), y.numel());
  LossValue v = rateLoss(c.op.kind, c.inPtr(0), T, B, C, lab.data(), B,
                         gy.data(), [&](const std::string &m) { c.fail(m); });
  gy.commit();
  *c.outPtr(0) = static_cast<float>(v.loss);
  if (c.op.out.size() > 2) {
    c.expectElements(c.out(2), 1, "the scalar count of correct samples");
    *c.outPtr(2) = static_cast<float>(v.correct);
  }
}

} // namespace cpu
} // namespace snnrt
