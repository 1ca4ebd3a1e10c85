//===- GradOpsTest.cpp - backward and training-mode ops ------------------===//
//
// Each backward op against central finite differences of an independent
// float64 forward written here (naive loops), on small shapes with fresh
// random inputs and a random upstream gradient gy: d/dθ sum(gy * f(θ)).
//
//===----------------------------------------------------------------------===//

#include "OpTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace snnrt;
using namespace snnrt::test;
using nlohmann::json;

namespace {

void expectGrad(const std::vector<float> &got, const std::vector<double> &want,
                const std::string &what, double tol = 2e-4) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i])))
        << what << "[" << i << "]";
}

std::vector<double> linearRef(const std::vector<double> &x,
                              const std::vector<double> &w,
                              const std::vector<double> &b, int M, int N,
                              int K) {
  std::vector<double> y(M * N);
  for (int r = 0; r < M; ++r)
    for (int j = 0; j < N; ++j) {
      double s = b[j];
      for (int k = 0; k < K; ++k)
        s += x[r * K + k] * w[j * K + k];
      y[r * N + j] = s;
    }
  return y;
}

TEST(GradOps, LinearBackwardMatchesFiniteDifferences) {
  std::mt19937 rng(11);
  const int M = 6, N = 4, K = 5;
  OneOp f("linear", {{3, 2, K}, {N, K}, {N}}, {{3, 2, N}}, {});
  for (int i = 0; i < 3; ++i)
    fillRandom(f.in(i), rng, -1, 1);
  std::vector<float> gy(M * N);
  fillRandom(gy, rng, -1, 1);
  OneOp o("linear_bwd", {{3, 2, N}, {3, 2, K}, {N, K}},
          {{3, 2, K}, {N, K}, {N}}, {{"has_bias", true}, {"need_gx", true}});
  o.in(0) = gy, o.in(1) = f.in(0), o.in(2) = f.in(1);
  o.run();
  auto X = toDouble(f.in(0)), W = toDouble(f.in(1)), B = toDouble(f.in(2));
  expectGrad(o.out(0), finiteDifferences([&](const std::vector<double> &v) {
               return dot(gy, linearRef(v, W, B, M, N, K));
             }, X), "gx");
  expectGrad(o.out(1), finiteDifferences([&](const std::vector<double> &v) {
               return dot(gy, linearRef(X, v, B, M, N, K));
             }, W), "gw");
  expectGrad(o.out(2), finiteDifferences([&](const std::vector<double> &v) {
               return dot(gy, linearRef(X, W, v, M, N, K));
             }, B), "gb");

  // accumulate: the gradients are added to what the outputs hold.
  OneOp a = o;
  a.op.attrs["accumulate"] = true;
  std::vector<std::vector<float>> before;
  for (size_t i = 0; i < 3; ++i) {
    fillRandom(a.out(i), rng, -1, 1);
    before.push_back(a.out(i));
  }
  a.run();
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = 0; j < before[i].size(); ++j)
      EXPECT_NEAR(a.out(i)[j], before[i][j] + o.out(i)[j], 1e-5);
}

struct ConvShape {
  int N, C, H, W, O, Cg, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, groups;
};

std::vector<double> convRef(const ConvShape &s, const std::vector<double> &x,
                            const std::vector<double> &w,
                            const std::vector<double> &b) {
  std::vector<double> y(s.N * s.O * s.OH * s.OW);
  int Og = s.O / s.groups;
  for (int n = 0; n < s.N; ++n)
    for (int o = 0; o < s.O; ++o)
      for (int oh = 0; oh < s.OH; ++oh)
        for (int ow = 0; ow < s.OW; ++ow) {
          double acc = b[o];
          int g = o / Og;
          for (int c = 0; c < s.Cg; ++c)
            for (int kh = 0; kh < s.KH; ++kh)
              for (int kw = 0; kw < s.KW; ++kw) {
                int ih = oh * s.sh - s.ph + kh * s.dh,
                    iw = ow * s.sw - s.pw + kw * s.dw;
                if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W)
                  continue;
                acc += x[((n * s.C + g * s.Cg + c) * s.H + ih) * s.W + iw] *
                       w[((o * s.Cg + c) * s.KH + kh) * s.KW + kw];
              }
          y[((n * s.O + o) * s.OH + oh) * s.OW + ow] = acc;
        }
  return y;
}

TEST(GradOps, GroupedDilatedConvBackwardMatchesFiniteDifferences) {
  std::mt19937 rng(12);
  ConvShape s{2, 4, 7, 6, 6, 2, 3, 3, 4, 6, 2, 1, 1, 2, 1, 2, 2};
  json attrs = {{"has_bias", true},  {"stride", {2, 1}}, {"padding", {1, 2}},
                {"dilation", {1, 2}}, {"groups", 2},     {"need_gx", true}};
  std::vector<int64_t> xs{s.N, s.C, s.H, s.W}, ws{s.O, s.Cg, s.KH, s.KW},
      ys{s.N, s.O, s.OH, s.OW};
  OneOp fwd("conv2d", {xs, ws, {s.O}}, {ys}, attrs);
  for (int i = 0; i < 3; ++i)
    fillRandom(fwd.in(i), rng, -1, 1);
  fwd.run();
  auto X = toDouble(fwd.in(0)), W = toDouble(fwd.in(1)), B = toDouble(fwd.in(2));
  expectGrad(fwd.out(0), convRef(s, X, W, B), "forward y", 1e-5);
  std::vector<float> gy(fwd.out(0).size());
  fillRandom(gy, rng, -1, 1);
  OneOp o("conv2d_bwd", {ys, xs, ws}, {xs, ws, {s.O}}, attrs);
  o.in(0) = gy, o.in(1) = fwd.in(0), o.in(2) = fwd.in(1);
  o.run();
  expectGrad(o.out(0), finiteDifferences([&](const std::vector<double> &v) {
               return dot(gy, convRef(s, v, W, B));
             }, X), "gx");
  expectGrad(o.out(1), finiteDifferences([&](const std::vector<double> &v) {
               return dot(gy, convRef(s, X, v, B));
             }, W), "gw");
  expectGrad(o.out(2), finiteDifferences([&](const std::vector<double> &v) {
               return dot(gy, convRef(s, X, W, v));
             }, B), "gb");
}

TEST(GradOps, WrongArityIsAClearError) {
  OneOp o("linear_bwd", {{2, 2}, {2, 2}}, {{2, 2}}, {});
  try {
    o.run();
    FAIL() << "expected an error";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("op #0 (linear_bwd): takes 3 inputs"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
