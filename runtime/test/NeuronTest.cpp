//===- NeuronTest.cpp - neuron scan and BPTT against float64 references --===//
//
// Every model (lif, if, plif, li, cuba_lif) x surrogate x reset x strict x
// detach_reset, with a per-neuron threshold tensor and a non-zero v_init:
// the forward against the DESIGN §2 recurrence in double, the backward
// against BPTT through the recorded forward in double (dH/dk of plif from the
// stored V[t-1] and X[t], not recomputed from H), and the leaky integrator
// (smooth) also against finite differences.
//
//===----------------------------------------------------------------------===//

#include "OpTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace snnrt;
using namespace snnrt::test;
using nlohmann::json;

namespace {

struct Config {
  std::string model, surrogate, reset;
  bool strict, detach, decayInput, scalarW;
  double alpha, theta; // theta < -1e9: none
};

struct Params {
  double k = 0.3, c = 0.7, vleak = 0.1, vreset = -0.1, vinit = 0.05,
         ksyn = 0.4, csyn = 0.9;
  std::vector<float> vth, w; // per feature (w: plif, 1 or F values)
};

double surrogateRef(const Config &cfg, double h, double vth) {
  if (cfg.theta > -1e9 && h < cfg.theta)
    return 0;
  double u = h - vth, a = cfg.alpha;
  if (cfg.surrogate == "sigmoid") {
    double s = 1 / (1 + std::exp(-a * u));
    return a * s * (1 - s);
  }
  if (cfg.surrogate == "atan")
    return a / (2 * (1 + std::pow(M_PI / 2 * a * u, 2)));
  if (cfg.surrogate == "triangle")
    return (1 / a) * std::max(0.0, 1 - std::abs(u) / a);
  return 1 / std::pow(a * std::abs(u) + 1, 2);
}

struct Trace {
  std::vector<double> s, h, v, in; // in: the LIF's input (after the synapse)
  double minMargin = 1e9;          // min |H - v_th|
};

/// Forward in double; also records V[t] and the LIF input of every step.
Trace forwardRef(const Config &cfg, const Params &p,
                 const std::vector<double> &x, int T, int N, int F) {
  Trace r;
  r.s.assign(T * N, 0), r.h = r.v = r.in = r.s;
  for (int n = 0; n < N; ++n) {
    int f = n % F;
    double k = cfg.model == "if" ? 0.0 : p.k, c = p.c;
    if (cfg.model == "plif") {
      k = 1 / (1 + std::exp(-double(p.w[p.w.size() == 1 ? 0 : f])));
      c = cfg.decayInput ? k : 1.0;
    }
    double v = p.vinit, i = 0, th = p.vth[f];
    for (int t = 0; t < T; ++t) {
      int at = t * N + n;
      double in = x[at];
      if (cfg.model == "cuba_lif") {
        i = i - p.ksyn * i + p.csyn * in;
        in = i;
      }
      double h = v + k * (p.vleak - v) + c * in;
      r.in[at] = in, r.h[at] = h;
      if (cfg.model == "li") {
        v = h;
        r.s[at] = h;
      } else {
        double s = (cfg.strict ? h > th : h >= th) ? 1 : 0;
        r.minMargin = std::min(r.minMargin, std::abs(h - th));
        v = cfg.reset == "soft" ? h - th * s : h * (1 - s) + p.vreset * s;
        r.s[at] = s;
      }
      r.v[at] = v;
    }
  }
  return r;
}

/// BPTT in double: gx and (plif) gw.
void backwardRef(const Config &cfg, const Params &p, const Trace &tr,
                 const std::vector<float> &gs, int T, int N, int F,
                 std::vector<double> &gx, std::vector<double> &gw) {
  gx.assign(T * N, 0);
  gw.assign(p.w.size(), 0);
  for (int n = 0; n < N; ++n) {
    int f = n % F;
    double k = cfg.model == "if" ? 0.0 : p.k, c = p.c;
    if (cfg.model == "plif") {
      k = 1 / (1 + std::exp(-double(p.w[p.w.size() == 1 ? 0 : f])));
      c = cfg.decayInput ? k : 1.0;
    }
    double th = p.vth[f], gV = 0, gI = 0, gk = 0;
    for (int t = T - 1; t >= 0; --t) {
      int at = t * N + n;
      double h = tr.h[at], gH;
      if (cfg.model == "li") {
        gH = gs[at] + gV;
      } else {
        double sg = surrogateRef(cfg, h, th), s = tr.s[at];
        double dVdH = cfg.reset == "soft"
                          ? 1 - (cfg.detach ? 0 : th * sg)
                          : (1 - s) + (cfg.detach ? 0 : (p.vreset - h) * sg);
        gH = gs[at] * sg + gV * dVdH;
      }
      double vPrev = t ? tr.v[at - N] : p.vinit;
      gk += gH * ((p.vleak - vPrev) + (cfg.decayInput ? tr.in[at] : 0.0));
      gV = gH * (1 - k);
      double gIn = gH * c;
      if (cfg.model == "cuba_lif") {
        gI = gIn + gI * (1 - p.ksyn);
        gx[at] = p.csyn * gI;
      } else {
        gx[at] = gIn;
      }
    }
    if (cfg.model == "plif")
      gw[p.w.size() == 1 ? 0 : f] += gk * k * (1 - k);
  }
}

json attrsFor(const Config &cfg, const Params &p, int F, int vthId, int wId) {
  json a = {{"model", cfg.model},
            {"features", F},
            {"k", p.k},
            {"c", p.c},
            {"v_leak", p.vleak},
            {"v_th", {{"tensor", vthId}}},
            {"v_reset", p.vreset},
            {"v_init", p.vinit},
            {"reset", cfg.reset},
            {"strict", cfg.strict},
            {"detach_reset", cfg.detach},
            {"save_h", true},
            {"decay_input", cfg.decayInput},
            {"surrogate", {{"kind", cfg.surrogate}, {"alpha", cfg.alpha}}}};
  if (cfg.theta > -1e9)
    a["surrogate"]["theta_grad"] = cfg.theta;
  if (cfg.model == "cuba_lif")
    a["k_syn"] = p.ksyn, a["c_syn"] = p.csyn;
  if (cfg.model == "plif")
    a["plif_w"] = {{"tensor", wId}};
  return a;
}

void checkNeuron(const Config &cfg, std::mt19937 &rng) {
  const int T = 6, B = 2, F = 3, N = B * F;
  std::string what = cfg.model + "/" + cfg.surrogate + "/" + cfg.reset +
                     (cfg.strict ? "/strict" : "") +
                     (cfg.detach ? "/detach" : "") +
                     (cfg.decayInput ? "" : "/no-decay-input") +
                     (cfg.theta > -1e9 ? "/theta" : "");
  bool cuba = cfg.model == "cuba_lif", plif = cfg.model == "plif";
  Params p;
  p.vth.resize(F);
  fillRandom(p.vth, rng, 0.4f, 0.9f);
  p.w.resize(cfg.scalarW ? 1 : F);
  fillRandom(p.w, rng, -1.5f, 1.5f);
  std::vector<float> x(T * N);
  Trace tr;
  // Fresh inputs until no H is within rounding of its threshold (float and
  // double would fire differently there).
  for (int tries = 0; tries < 100; ++tries) {
    fillRandom(x, rng, -0.5f, 1.5f);
    tr = forwardRef(cfg, p, toDouble(x), T, N, F);
    if (tr.minMargin > 1e-4)
      break;
  }
  ASSERT_GT(tr.minMargin, 1e-4) << what;

  std::vector<std::vector<int64_t>> outs = {{T, B, F}, {T, B, F}};
  if (cuba)
    outs.push_back({T, B, F});
  OneOp fwd("neuron", {{T, B, F}}, outs, {});
  int vthId = fwd.add({F}), wId = fwd.add({int64_t(p.w.size())});
  fwd.data[vthId] = p.vth;
  fwd.data[wId] = p.w;
  fwd.op.attrs = attrsFor(cfg, p, F, vthId, wId);
  fwd.in(0) = x;
  fwd.run();
  int spikes = 0;
  for (int i = 0; i < T * N; ++i) {
    EXPECT_NEAR(fwd.out(1)[i], tr.h[i], 1e-5) << what << " H[" << i << "]";
    if (cfg.model == "li")
      EXPECT_NEAR(fwd.out(0)[i], tr.s[i], 1e-5) << what;
    else
      EXPECT_EQ(fwd.out(0)[i], tr.s[i]) << what << " S[" << i << "]";
    spikes += tr.s[i] == 1.0;
  }
  if (cfg.model != "li") {
    EXPECT_GT(spikes, 0) << what;
    EXPECT_LT(spikes, T * N) << what;
  }

  std::vector<float> gs(T * N);
  fillRandom(gs, rng, -1, 1);
  std::vector<std::vector<int64_t>> bins = {{T, B, F}, {T, B, F}};
  if (cuba)
    bins.push_back({T, B, F});
  std::vector<std::vector<int64_t>> bouts = {{T, B, F}};
  if (plif)
    bouts.push_back({int64_t(p.w.size())});
  OneOp bwd("neuron_bwd", bins, bouts, {});
  int bVth = bwd.add({F}), bW = bwd.add({int64_t(p.w.size())});
  bwd.data[bVth] = p.vth;
  bwd.data[bW] = p.w;
  bwd.op.attrs = attrsFor(cfg, p, F, bVth, bW);
  bwd.in(0) = gs;
  bwd.in(1) = fwd.out(1);
  if (cuba)
    bwd.in(2) = fwd.out(2);
  bwd.run();
  std::vector<double> gx, gw;
  backwardRef(cfg, p, tr, gs, T, N, F, gx, gw);
  for (int i = 0; i < T * N; ++i)
    EXPECT_NEAR(bwd.out(0)[i], gx[i], 1e-4 * (1 + std::abs(gx[i])))
        << what << " gx[" << i << "]";
  if (plif) {
    for (size_t i = 0; i < gw.size(); ++i)
      EXPECT_NEAR(bwd.out(1)[i], gw[i], 1e-4 * (1 + std::abs(gw[i])))
          << what << " gw[" << i << "]";
  }
}

TEST(Neuron, EveryModelSurrogateResetAndFiringRule) {
  std::mt19937 rng(21);
  const std::pair<const char *, double> surrogates[] = {
      {"sigmoid", 4.0}, {"atan", 2.0}, {"triangle", 1.0}, {"fast_sigmoid", 10.0}};
  int cases = 0;
  for (const char *model : {"lif", "if", "plif", "li", "cuba_lif"})
    for (auto [sg, alpha] : surrogates)
      for (const char *reset : {"hard", "soft"})
        for (bool strict : {false, true})
          for (bool detach : {false, true}) {
            Config cfg{model, sg,    reset, strict, detach,
                       true,  false, alpha, -1e18};
            checkNeuron(cfg, rng);
            ++cases;
          }
  EXPECT_EQ(cases, 160);
}

TEST(Neuron, ThetaGradPlifVariantsAndScalarWeights) {
  std::mt19937 rng(22);
  for (bool decayInput : {true, false})
    for (bool scalarW : {true, false})
      checkNeuron({"plif", "atan", "hard", false, false, decayInput, scalarW,
                   2.0, -1e18},
                  rng);
  for (const char *model : {"lif", "cuba_lif"})
    checkNeuron({model, "sigmoid", "soft", false, false, true, false, 4.0, 0.3},
                rng);
}

TEST(Neuron, LeakyIntegratorGradientMatchesFiniteDifferences) {
  std::mt19937 rng(23);
  Config cfg{"li", "sigmoid", "hard", false, false, true, false, 4.0, -1e18};
  Params p;
  p.vth.assign(3, 1.0f);
  const int T = 5, N = 6, F = 3;
  std::vector<float> x(T * N), gs(T * N);
  fillRandom(x, rng, -1, 1);
  fillRandom(gs, rng, -1, 1);
  OneOp bwd("neuron_bwd", {{T, 2, F}, {T, 2, F}}, {{T, 2, F}}, {});
  int vth = bwd.add({F});
  bwd.data[vth] = p.vth;
  bwd.op.attrs = attrsFor(cfg, p, F, vth, -1);
  bwd.in(0) = gs;
  bwd.in(1) = std::vector<float>(T * N); // H is not read by li
  bwd.run();
  auto g = finiteDifferences(
      [&](const std::vector<double> &v) {
        return dot(gs, forwardRef(cfg, p, v, T, N, F).s);
      },
      toDouble(x));
  for (int i = 0; i < T * N; ++i)
    EXPECT_NEAR(bwd.out(0)[i], g[i], 1e-5);
}

/// Runs a layer as T neuron_step ops (and their neuron_step_bwd in reverse)
/// and as one scan (neuron, neuron_bwd): the steps must give the scan's
/// spikes, H and input gradient.
void checkStepsAgainstScan(const std::string &model, const std::string &reset,
                           const std::string &surrogate) {
  SCOPED_TRACE(model + " " + reset + " " + surrogate);
  std::mt19937 rng(29);
  const int T = 6, B = 2, F = 5, N = B * F;
  bool cuba = model == "cuba_lif", li = model == "li";
  json attrs = {{"model", model},     {"features", F},     {"k", 0.3},
                {"c", 0.8},           {"v_th", 0.6},       {"v_reset", 0.0},
                {"v_init", 0.0},      {"reset", reset},    {"k_syn", 0.4},
                {"c_syn", 0.9},       {"i_init", 0.0},
                {"surrogate", {{"kind", surrogate}, {"alpha", 3.0}}}};
  json withH = attrs;
  withH["save_h"] = true;
  OneOp scan("neuron", {{T, B, F}}, {{T, B, F}, {T, B, F}}, withH);
  fillRandom(scan.in(0), rng, -0.5, 1.5);
  scan.run();
  std::vector<float> gs(T * N);
  fillRandom(gs, rng, -1, 1);
  OneOp scanBwd("neuron_bwd", {{T, B, F}, {T, B, F}}, {{T, B, F}}, attrs);
  scanBwd.in(0) = gs;
  scanBwd.in(1) = scan.out(1);
  scanBwd.run();

  // Forward, step by step, from the zero state (= v_init, i_init).
  size_t states = cuba ? 2 : 1;
  std::vector<std::vector<float>> state(states, std::vector<float>(N, 0.0f));
  std::vector<std::vector<float>> hs(T);
  for (int t = 0; t < T; ++t) {
    std::vector<std::vector<int64_t>> ins(1 + states, {B, F});
    std::vector<std::vector<int64_t>> outs((li ? 1 : 1 + states) + 1, {B, F});
    OneOp step("neuron_step", ins, outs, withH);
    step.in(0).assign(scan.in(0).begin() + t * N, scan.in(0).begin() + (t + 1) * N);
    for (size_t j = 0; j < states; ++j)
      step.in(1 + j) = state[j];
    step.run();
    std::vector<float> sExpected(scan.out(0).begin() + t * N,
                                 scan.out(0).begin() + (t + 1) * N);
    EXPECT_EQ(step.out(0), sExpected) << "step " << t;
    hs[t] = step.out(outs.size() - 1);
    EXPECT_EQ(hs[t], std::vector<float>(scan.out(1).begin() + t * N,
                                        scan.out(1).begin() + (t + 1) * N))
        << "H at step " << t;
    for (size_t j = 0; j < states; ++j)
      state[j] = li ? step.out(0) : step.out(1 + j);
  }
  EXPECT_GT(std::count(scan.out(0).begin(), scan.out(0).end(), 1.0f),
            li ? -1 : 0);

  // Backward, step by step in reverse, carrying the state gradients.
  std::vector<std::vector<float>> gstate(states, std::vector<float>(N, 0.0f));
  for (int t = T - 1; t >= 0; --t) {
    std::vector<std::vector<int64_t>> ins(2 + states, {B, F});
    std::vector<std::vector<int64_t>> outs(1 + states, {B, F});
    OneOp step("neuron_step_bwd", ins, outs, attrs);
    step.in(0).assign(gs.begin() + t * N, gs.begin() + (t + 1) * N);
    for (size_t j = 0; j < states; ++j)
      step.in(1 + j) = gstate[j];
    step.in(1 + states) = hs[t];
    step.run();
    for (int i = 0; i < N; ++i)
      EXPECT_NEAR(step.out(0)[i], scanBwd.out(0)[t * N + i], 1e-6)
          << "gx at step " << t;
    for (size_t j = 0; j < states; ++j)
      gstate[j] = step.out(1 + j);
  }
}

/// plif as T neuron_step ops and their neuron_step_bwd (which read the
/// membrane before the step and the weight, and give the weight's gradient
/// of the step) against the scan: the step gradients of w sum to the scan's.
void checkPlifStepsAgainstScan(int wSize, bool decayInput) {
  SCOPED_TRACE("plif w[" + std::to_string(wSize) + "] decay_input " +
               std::to_string(decayInput));
  std::mt19937 rng(31);
  const int T = 6, B = 2, F = 5, N = B * F;
  json attrs = {{"model", "plif"},     {"features", F},
                {"v_th", 0.6},         {"v_reset", 0.0},
                {"v_init", 0.0},       {"v_leak", 0.1},
                {"reset", "hard"},     {"decay_input", decayInput},
                {"surrogate", {{"kind", "sigmoid"}, {"alpha", 3.0}}}};
  json scanAttrs = attrs;
  scanAttrs["plif_w"] = {{"tensor", 1}};
  scanAttrs["save_h"] = true;
  OneOp scan("neuron", {{T, B, F}, {wSize}}, {{T, B, F}, {T, B, F}},
             scanAttrs);
  fillRandom(scan.in(0), rng, -0.5, 2.0);
  fillRandom(scan.in(1), rng, -1.0, 1.0);
  scan.run();
  std::vector<float> gs(T * N), w = scan.in(1);
  fillRandom(gs, rng, -1, 1);
  json bwdAttrs = attrs;
  bwdAttrs["plif_w"] = {{"tensor", 2}};
  OneOp scanBwd("neuron_bwd", {{T, B, F}, {T, B, F}, {wSize}},
                {{T, B, F}, {wSize}}, bwdAttrs);
  scanBwd.in(0) = gs;
  scanBwd.in(1) = scan.out(1);
  scanBwd.in(2) = w;
  scanBwd.run();

  std::vector<float> v(N, 0.0f);
  std::vector<std::vector<float>> hs(T), vs(T);
  json stepAttrs = attrs;
  stepAttrs["plif_w"] = {{"tensor", 2}};
  stepAttrs["save_h"] = true;
  for (int t = 0; t < T; ++t) {
    OneOp step("neuron_step", {{B, F}, {B, F}, {wSize}},
               {{B, F}, {B, F}, {B, F}}, stepAttrs);
    step.in(0).assign(scan.in(0).begin() + t * N,
                      scan.in(0).begin() + (t + 1) * N);
    step.in(1) = vs[t] = v;
    step.in(2) = w;
    step.run();
    EXPECT_EQ(step.out(0), std::vector<float>(scan.out(0).begin() + t * N,
                                              scan.out(0).begin() + (t + 1) * N))
        << "spikes at step " << t;
    hs[t] = step.out(2);
    v = step.out(1);
  }
  EXPECT_GT(std::count(scan.out(0).begin(), scan.out(0).end(), 1.0f), 0);

  std::vector<float> gv(N, 0.0f);
  std::vector<double> gw(wSize, 0.0);
  json stepBwdAttrs = attrs;
  stepBwdAttrs["plif_w"] = {{"tensor", 4}};
  for (int t = T - 1; t >= 0; --t) {
    OneOp step("neuron_step_bwd", {{B, F}, {B, F}, {B, F}, {B, F}, {wSize}},
               {{B, F}, {B, F}, {wSize}}, stepBwdAttrs);
    step.in(0).assign(gs.begin() + t * N, gs.begin() + (t + 1) * N);
    step.in(1) = gv;
    step.in(2) = hs[t];
    step.in(3) = vs[t];
    step.in(4) = w;
    step.run();
    for (int i = 0; i < N; ++i)
      EXPECT_NEAR(step.out(0)[i], scanBwd.out(0)[t * N + i], 1e-6)
          << "gx at step " << t;
    gv = step.out(1);
    for (int i = 0; i < wSize; ++i)
      gw[i] += step.out(2)[i];
  }
  for (int i = 0; i < wSize; ++i) {
    EXPECT_NE(scanBwd.out(1)[i], 0.0f);
    EXPECT_NEAR(gw[i], scanBwd.out(1)[i], 1e-5) << "gw[" << i << "]";
  }
}

TEST(Neuron, PlifStepOpsAndTheirBackwardEqualTheScan) {
  checkPlifStepsAgainstScan(1, true);
  checkPlifStepsAgainstScan(5, true);
  checkPlifStepsAgainstScan(5, false);
}

TEST(Neuron, StepOpsAndTheirBackwardEqualTheScan) {
  checkStepsAgainstScan("lif", "hard", "sigmoid");
  checkStepsAgainstScan("lif", "soft", "atan");
  checkStepsAgainstScan("if", "hard", "triangle");
  checkStepsAgainstScan("li", "hard", "sigmoid");
  checkStepsAgainstScan("cuba_lif", "hard", "fast_sigmoid");
}

TEST(Neuron, BadAttributesAreClearErrors) {
  OneOp o("neuron", {{2, 3}}, {{2, 3}}, {{"model", "izhikevich"}});
  try {
    o.run();
    FAIL();
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("unknown neuron model 'izhikevich'"),
              std::string::npos);
  }
  o.op.attrs = {{"model", "lif"}, {"surrogate", {{"kind", "erf"}}}};
  try {
    o.run();
    FAIL();
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("unknown surrogate 'erf'"),
              std::string::npos);
  }
  o.op.attrs = {{"model", "lif"}, {"features", 2}};
  try {
    o.run();
    FAIL();
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("'features' = 2 does not divide the 3"),
              std::string::npos);
  }
}

} // namespace
