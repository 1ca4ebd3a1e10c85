//===- CpuOpsTest.cpp - CPU ops against naive float64 references ----------===//

#include "OpTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace snnrt;
using namespace snnrt::test;
using nlohmann::json;

namespace {

// The bias of linear layers and convolutions as GEMMs over column buffers
// are generated kernels (test/Runtime/layer-kernels.test checks them, with
// the runtime's GEMMs, against the float64 reference).
TEST(CpuOps, LinearMatchesNaiveProduct) {
  std::mt19937 rng(1);
  OneOp o("linear", {{3, 2, 5}, {4, 5}}, {{3, 2, 4}}, {});
  for (int i = 0; i < 2; ++i)
    fillRandom(o.in(i), rng, -1, 1);
  o.run();
  for (int r = 0; r < 6; ++r)
    for (int j = 0; j < 4; ++j) {
      double ref = 0.0;
      for (int k = 0; k < 5; ++k)
        ref += double(o.in(0)[r * 5 + k]) * o.in(1)[j * 5 + k];
      EXPECT_NEAR(o.out(0)[r * 4 + j], ref, 1e-5);
    }
}

TEST(CpuOps, LayerWithoutItsKernelsIsAClearError) {
  OneOp linear("linear", {{2, 3}, {4, 3}, {4}}, {{2, 4}}, {{"has_bias", true}});
  try {
    linear.run();
    FAIL() << "expected an error";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("needs its \"launches\""),
              std::string::npos) << e.what();
  }
  OneOp conv("conv2d", {{1, 1, 3, 3}, {1, 1, 2, 2}}, {{1, 1, 2, 2}}, {});
  try {
    conv.run();
    FAIL() << "expected an error";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("needs its \"columns\""),
              std::string::npos) << e.what();
  }
}

/// The LIF recurrence of DESIGN §2 in float64.
void lifReference(const std::vector<float> &x, int T, int N, int F, double k,
                  double c, double vleak, const std::vector<float> &vth,
                  double vreset, bool soft, std::vector<double> &s,
                  std::vector<double> &h) {
  std::vector<double> v(N, soft ? 0.0 : vreset);
  s.assign(T * N, 0);
  h.assign(T * N, 0);
  for (int t = 0; t < T; ++t)
    for (int n = 0; n < N; ++n) {
      double th = vth[n % F];
      double hh = v[n] + k * (vleak - v[n]) + c * x[t * N + n];
      double sp = hh >= th ? 1.0 : 0.0;
      v[n] = soft ? hh - th * sp : hh * (1 - sp) + vreset * sp;
      s[t * N + n] = sp;
      h[t * N + n] = hh;
    }
}

TEST(CpuOps, LifHardAndSoftWithPerNeuronThreshold) {
  std::mt19937 rng(4);
  for (bool soft : {false, true}) {
    // x [T=6, B=3, F=5]; v_th per neuron (a constant tensor).
    OneOp o("neuron", {{6, 3, 5}, {5}}, {{6, 3, 5}, {6, 3, 5}}, json::object());
    fillRandom(o.in(0), rng, -0.5f, 2.5f);
    fillRandom(o.in(1), rng, 0.6f, 1.4f);
    o.op.attrs = {{"model", "lif"}, {"features", 5}, {"k", 0.3}, {"c", 0.8},
                  {"v_leak", 0.1}, {"v_th", {{"tensor", o.op.in[1]}}},
                  {"v_reset", -0.2}, {"v_init", soft ? 0.0 : -0.2},
                  {"reset", soft ? "soft" : "hard"}, {"save_h", true}};
    o.run();
    std::vector<double> s, h;
    lifReference(o.in(0), 6, 15, 5, 0.3, 0.8, 0.1, o.in(1), -0.2, soft, s, h);
    int spikes = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      EXPECT_NEAR(o.out(1)[i], h[i], 1e-5) << i;
      if (std::abs(h[i] - o.in(1)[i % 5]) > 1e-5) { // not within rounding of v_th
        EXPECT_EQ(o.out(0)[i], s[i]) << i;
      }
      spikes += s[i] > 0;
    }
    EXPECT_GT(spikes, 10);
    EXPECT_LT(spikes, 80);
  }
}

TEST(CpuOps, LeakyIntegratorOutputsTheMembrane) {
  OneOp o("neuron", {{3, 1, 1}}, {{3, 1, 1}},
          {{"model", "li"}, {"features", 1}, {"k", 0.5}, {"c", 1.0},
           {"v_leak", 0.0}, {"v_init", 0.0}});
  o.in(0) = {1.0f, 1.0f, 0.0f};
  o.run();
  EXPECT_FLOAT_EQ(o.out(0)[0], 1.0f);  // 0 + 0.5 (0 - 0) + 1
  EXPECT_FLOAT_EQ(o.out(0)[1], 1.5f);  // 1 - 0.5 + 1
  EXPECT_FLOAT_EQ(o.out(0)[2], 0.75f); // 1.5 - 0.75
}

TEST(CpuOps, UnsupportedOpIsAClearError) {
  OneOp o("linear_fwd", {{2, 2}}, {{2, 2}}, json::object());
  try {
    o.run();
    FAIL() << "expected an error";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("op #0 (linear_fwd)"), std::string::npos);
  }
}

/// A body op over tensor ids.
Op bodyOp(const std::string &kind, std::vector<int> in, std::vector<int> out,
          json attrs = json::object()) {
  Op op;
  op.kind = kind;
  op.in = std::move(in);
  op.out = std::move(out);
  op.attrs = std::move(attrs);
  return op;
}

TEST(CpuOps, TimeLoopCarriesStateAndStacksOutputs) {
  // y[t] = x[t] + a[t-1] (a running sum, a[-1] = init: an li step with k = 0
  // and c = 1, whose membrane is both output and state) as a time loop, with
  // a second state pair that swaps every step (p <- q, q <- p, copies by
  // an li step that forgets its state: H = q + 1 (0 - q) + q = q exactly).
  const int T = 5, N = 3;
  std::mt19937 rng(7);
  OneOp o("time_loop", {{T, N}, {N}, {1, N}, {1, N}},
          {{T, N}, {N}, {1, N}, {1, N}}, {{"steps", T}, {"num_inputs", 1}});
  int xt = o.add({N}), a = o.add({N}), p = o.add({1, N}), q = o.add({1, N});
  int y = o.add({N}), pNext = o.add({1, N}), qNext = o.add({1, N});
  o.op.args = {xt, a, p, q};
  o.op.yields = {y, y, pNext, qNext};
  json copy = {{"model", "li"}, {"k", 1.0}, {"c", 1.0}, {"features", N}};
  o.op.body = {bodyOp("neuron_step", {xt, a}, {y},
                      {{"model", "li"}, {"k", 0.0}, {"c", 1.0},
                       {"features", N}}),
               bodyOp("neuron_step", {q, q}, {pNext}, copy),
               bodyOp("neuron_step", {p, p}, {qNext}, copy)};
  for (int i = 0; i < 4; ++i)
    fillRandom(o.in(i), rng, -1, 1);
  o.run();
  std::vector<double> acc(o.in(1).begin(), o.in(1).end());
  for (int t = 0; t < T; ++t)
    for (int n = 0; n < N; ++n) {
      acc[n] += o.in(0)[t * N + n];
      EXPECT_NEAR(o.out(0)[t * N + n], acc[n], 1e-5) << "t=" << t;
    }
  for (int n = 0; n < N; ++n) {
    EXPECT_NEAR(o.out(1)[n], acc[n], 1e-5);
    // Five swaps: the states end exchanged.
    EXPECT_EQ(o.out(2)[n], o.in(3)[n]);
    EXPECT_EQ(o.out(3)[n], o.in(2)[n]);
  }
}

TEST(CpuOps, TimeLoopNeuronStepMatchesTheScan) {
  // A LIF layer run as a loop of neuron_step ops equals the neuron scan.
  const int T = 6, N = 4;
  std::mt19937 rng(8);
  json lif = {{"model", "lif"}, {"k", 0.3}, {"c", 0.9}, {"v_th", 0.8},
              {"reset", "soft"}, {"features", N}};
  OneOp scan("neuron", {{T, N}}, {{T, N}}, lif);
  fillRandom(scan.in(0), rng, -0.5, 1.5);
  scan.run();
  json loopAttrs = {{"steps", T}, {"num_inputs", 1}};
  OneOp o("time_loop", {{T, N}, {N}}, {{T, N}, {N}}, loopAttrs);
  o.in(0) = scan.in(0);
  int xt = o.add({N}), v = o.add({N}), s = o.add({N}), vNext = o.add({N});
  o.op.args = {xt, v};
  o.op.yields = {s, vNext};
  o.op.body = {bodyOp("neuron_step", {xt, v}, {s, vNext}, lif)};
  o.run();
  EXPECT_EQ(o.out(0), scan.out(0));
  EXPECT_GT(std::count(o.out(0).begin(), o.out(0).end(), 1.0f), 0);
}

TEST(CpuOps, TimeLoopWithoutBlockArgumentsIsAClearError) {
  OneOp o("time_loop", {{4, 2}, {2}}, {{4, 2}, {2}},
          {{"steps", 4}, {"num_inputs", 1}});
  o.op.args = {o.add({2})};
  o.op.yields = {o.op.args[0], o.op.args[0]};
  try {
    o.run();
    FAIL() << "a loop without one block argument per operand ran";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("needs one block argument per input "
                                         "and init (2), got 1"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
