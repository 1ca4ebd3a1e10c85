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

// gb is a generated kernel (test/Runtime/layer-kernels.test), as are the
// column kernels of conv2d_bwd.
TEST(GradOps, LinearBackwardMatchesFiniteDifferences) {
  std::mt19937 rng(11);
  const int M = 6, N = 4, K = 5;
  OneOp f("linear", {{3, 2, K}, {N, K}}, {{3, 2, N}}, {});
  for (int i = 0; i < 2; ++i)
    fillRandom(f.in(i), rng, -1, 1);
  std::vector<float> gy(M * N);
  fillRandom(gy, rng, -1, 1);
  OneOp o("linear_bwd", {{3, 2, N}, {3, 2, K}, {N, K}}, {{3, 2, K}, {N, K}},
          {{"has_bias", false}, {"need_gx", true}});
  o.in(0) = gy, o.in(1) = f.in(0), o.in(2) = f.in(1);
  o.run();
  auto X = toDouble(f.in(0)), W = toDouble(f.in(1));
  std::vector<double> B(N, 0.0);
  expectGrad(o.out(0), finiteDifferences([&](const std::vector<double> &v) {
               return dot(gy, linearRef(v, W, B, M, N, K));
             }, X), "gx");
  expectGrad(o.out(1), finiteDifferences([&](const std::vector<double> &v) {
               return dot(gy, linearRef(X, v, B, M, N, K));
             }, W), "gw");

  // accumulate: the gradients are added to what the outputs hold.
  OneOp a = o;
  a.op.attrs["accumulate"] = true;
  std::vector<std::vector<float>> before;
  for (size_t i = 0; i < 2; ++i) {
    fillRandom(a.out(i), rng, -1, 1);
    before.push_back(a.out(i));
  }
  a.run();
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < before[i].size(); ++j)
      EXPECT_NEAR(a.out(i)[j], before[i][j] + o.out(i)[j], 1e-5);
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
