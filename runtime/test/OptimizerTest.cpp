//===- OptimizerTest.cpp - SGD and Adam/AdamW against PyTorch's formulas --===//
//
// Several steps with fresh random gradients; the expected values follow the
// update rules documented for torch.optim.SGD / Adam / AdamW, in double.
//
//===----------------------------------------------------------------------===//

#include "OpTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace snnrt;
using namespace snnrt::test;
using nlohmann::json;

namespace {

TEST(Optimizer, SgdMomentumDampeningNesterovWeightDecay) {
  struct Case {
    double momentum, dampening, wd;
    bool nesterov;
  };
  std::mt19937 rng(31);
  for (Case cs : {Case{0, 0, 0, false}, Case{0.9, 0.1, 1e-2, false},
                  Case{0.8, 0, 5e-3, true}}) {
    const int n = 17;
    bool buf = cs.momentum != 0;
    json attrs = {{"momentum", cs.momentum}, {"dampening", cs.dampening},
                  {"weight_decay", cs.wd}, {"nesterov", cs.nesterov}};
    std::vector<std::vector<int64_t>> ins = {{n}, {n}};
    if (buf)
      ins.push_back({n});
    OneOp o("sgd", ins, {}, attrs);
    o.op.out = {o.op.in[0]};
    if (buf)
      o.op.out.push_back(o.op.in[2]);
    fillRandom(o.in(0), rng, -1, 1);
    std::vector<double> p = toDouble(o.in(0)), b(n, 0.0);
    for (int step = 1; step <= 3; ++step) {
      fillRandom(o.in(1), rng, -1, 1);
      o.ctx.learningRate = 0.05f * step;
      o.ctx.step = step;
      o.run();
      for (int i = 0; i < n; ++i) {
        double g = o.in(1)[i] + cs.wd * p[i];
        if (buf) {
          b[i] = step == 1 ? g : cs.momentum * b[i] + (1 - cs.dampening) * g;
          g = cs.nesterov ? g + cs.momentum * b[i] : b[i];
        }
        p[i] -= 0.05 * step * g;
        EXPECT_NEAR(o.in(0)[i], p[i], 1e-6) << "step " << step;
        if (buf) {
          EXPECT_NEAR(o.in(2)[i], b[i], 1e-6);
        }
      }
    }
  }
}

TEST(Optimizer, AdamAndAdamWWithBiasCorrection) {
  std::mt19937 rng(32);
  for (bool decoupled : {false, true}) {
    const int n = 19;
    double b1 = 0.8, b2 = 0.95, eps = 1e-6, wd = 0.1, lr = 0.01;
    json attrs = {{"beta1", b1}, {"beta2", b2}, {"eps", eps},
                  {"weight_decay", wd}, {"decoupled", decoupled}};
    OneOp o("adam", {{n}, {n}, {n}, {n}}, {}, attrs);
    o.op.out = {o.op.in[0], o.op.in[2], o.op.in[3]};
    fillRandom(o.in(0), rng, -1, 1);
    std::vector<double> p = toDouble(o.in(0)), m(n, 0.0), v(n, 0.0);
    for (int step = 1; step <= 4; ++step) {
      fillRandom(o.in(1), rng, -1, 1);
      o.ctx.learningRate = static_cast<float>(lr);
      o.ctx.step = step;
      o.run();
      for (int i = 0; i < n; ++i) {
        double g = o.in(1)[i];
        if (decoupled)
          p[i] *= 1 - lr * wd; // AdamW
        else
          g += wd * p[i]; // Adam's L2 penalty
        m[i] = b1 * m[i] + (1 - b1) * g;
        v[i] = b2 * v[i] + (1 - b2) * g * g;
        double mhat = m[i] / (1 - std::pow(b1, step)),
               vhat = v[i] / (1 - std::pow(b2, step));
        p[i] -= lr * mhat / (std::sqrt(vhat) + eps);
        EXPECT_NEAR(o.in(0)[i], p[i], 2e-6) << "step " << step;
        EXPECT_NEAR(o.in(2)[i], m[i], 1e-6);
        EXPECT_NEAR(o.in(3)[i], v[i], 1e-6);
      }
    }
  }
}

TEST(Optimizer, StepZeroIsAnError) {
  OneOp o("adam", {{2}, {2}, {2}, {2}}, {}, json::object());
  o.op.out = {o.op.in[0], o.op.in[2], o.op.in[3]};
  o.ctx.step = 0;
  EXPECT_THROW(o.run(), std::exception);
}

} // namespace
