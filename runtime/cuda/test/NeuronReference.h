//===- NeuronReference.h - host reference of the neuron ops -----*- C++ -*-===//
//
// DESIGN §2 written out independently of the kernels: the forward in float32
// in the order of the formulas (spikes and H must match bit for bit), the
// backward in float64.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_TEST_NEURONREFERENCE_H
#define SNNRT_CUDA_TEST_NEURONREFERENCE_H

#include <cmath>
#include <string>
#include <vector>

namespace snnrt::cuda::test {

struct NeuronConfig {
  std::string model = "lif"; // lif, if, plif, li, cuba_lif
  std::string reset = "hard";
  bool strict = false, detachReset = false, decayInput = true;
  std::string surrogate = "sigmoid";
  double alpha = 4.0;
  bool hasThetaGrad = false;
  double thetaGrad = 0.0;
  long long steps = 1, neurons = 1, features = 1;
  /// Per-neuron values (F entries) or one value, by name: k, c, v_leak,
  /// v_th, v_reset, v_init, k_syn, c_syn, i_init, plif_w.
  std::vector<float> k{0.5f}, c{0.5f}, vLeak{0.0f}, vTh{1.0f}, vReset{0.0f},
      vInit{0.0f}, kSyn{0.3f}, cSyn{1.0f}, iInit{0.0f}, plifW{0.0f};

  float at(const std::vector<float> &p, long long n) const {
    return p.size() == 1 ? p[0] : p[n % features];
  }
  float kOf(long long n) const {
    if (model == "if")
      return 0.0f;
    if (model == "plif")
      return 1.0f / (1.0f + std::exp(-at(plifW, n)));
    return at(k, n);
  }
  float cOf(long long n) const {
    if (model == "plif")
      return decayInput ? kOf(n) : 1.0f;
    return at(c, n);
  }
};

struct NeuronForward {
  std::vector<float> out, h, syn;
};

inline NeuronForward neuronForward(const NeuronConfig &cfg,
                                   const std::vector<float> &x) {
  long long T = cfg.steps, N = cfg.neurons;
  NeuronForward r;
  r.out.resize(T * N), r.h.resize(T * N), r.syn.resize(T * N);
  bool soft = cfg.reset == "soft";
  for (long long n = 0; n < N; ++n) {
    float k = cfg.kOf(n), c = cfg.cOf(n), vl = cfg.at(cfg.vLeak, n);
    float vth = cfg.at(cfg.vTh, n), vr = cfg.at(cfg.vReset, n);
    float v = cfg.at(cfg.vInit, n), i = cfg.at(cfg.iInit, n);
    for (long long t = 0; t < T; ++t) {
      float in = x[t * N + n];
      if (cfg.model == "cuba_lif") {
        i = (i - cfg.at(cfg.kSyn, n) * i) + cfg.at(cfg.cSyn, n) * in;
        in = i;
      }
      float h = (v + k * (vl - v)) + c * in;
      r.h[t * N + n] = h;
      r.syn[t * N + n] = i;
      if (cfg.model == "li") {
        r.out[t * N + n] = h;
        v = h;
        continue;
      }
      bool s = cfg.strict ? h > vth : h >= vth;
      r.out[t * N + n] = s ? 1.0f : 0.0f;
      // H (1 - S) + v_reset S, resp. H - v_th S.
      v = soft ? h - vth * (s ? 1.0f : 0.0f)
               : h * (s ? 0.0f : 1.0f) + vr * (s ? 1.0f : 0.0f);
    }
  }
  return r;
}

inline double surrogateGrad(const NeuronConfig &cfg, double h, double vth) {
  if (cfg.hasThetaGrad && h < cfg.thetaGrad)
    return 0.0;
  double u = h - vth, a = cfg.alpha;
  if (cfg.surrogate == "sigmoid") {
    double s = 1.0 / (1.0 + std::exp(-a * u));
    return a * s * (1.0 - s);
  }
  if (cfg.surrogate == "atan") {
    double w = M_PI / 2.0 * a * u;
    return a / (2.0 * (1.0 + w * w));
  }
  if (cfg.surrogate == "triangle")
    return (1.0 / a) * std::max(0.0, 1.0 - std::fabs(u) / a);
  double d = a * std::fabs(u) + 1.0;
  return 1.0 / (d * d);
}

struct NeuronBackward {
  std::vector<double> gx, gw;
};

/// BPTT from the saved H (DESIGN §2); gw is the plif weight gradient.
inline NeuronBackward neuronBackward(const NeuronConfig &cfg,
                                     const std::vector<float> &gs,
                                     const std::vector<float> &h) {
  long long T = cfg.steps, N = cfg.neurons;
  NeuronBackward r;
  r.gx.assign(T * N, 0.0);
  r.gw.assign(cfg.plifW.size(), 0.0);
  bool soft = cfg.reset == "soft", li = cfg.model == "li";
  for (long long n = 0; n < N; ++n) {
    double k = cfg.kOf(n), c = cfg.cOf(n), vth = cfg.at(cfg.vTh, n);
    double vr = cfg.at(cfg.vReset, n), vl = cfg.at(cfg.vLeak, n);
    double gv = 0.0, gi = 0.0, gk = 0.0;
    auto fires = [&](double hv) { return cfg.strict ? hv > vth : hv >= vth; };
    for (long long t = T - 1; t >= 0; --t) {
      double hv = h[t * N + n], gh;
      if (li) {
        gh = gs[t * N + n] + gv;
      } else {
        double sg = surrogateGrad(cfg, hv, vth), s = fires(hv) ? 1.0 : 0.0;
        double dvdh = soft ? (cfg.detachReset ? 1.0 : 1.0 - vth * sg)
                           : (1.0 - s) + (cfg.detachReset ? 0.0 : (vr - hv) * sg);
        gh = gs[t * N + n] * sg + gv * dvdh;
      }
      if (cfg.model == "plif") {
        double vPrev = cfg.at(cfg.vInit, n);
        if (t > 0) {
          double hp = h[(t - 1) * N + n], sp = fires(hp) ? 1.0 : 0.0;
          vPrev = soft ? hp - vth * sp : hp * (1.0 - sp) + vr * sp;
        }
        // H = V + k (v_leak - V) + c X with c = k: dH/dk = (H - V) / k.
        gk += gh * (cfg.decayInput ? (hv - vPrev) / k : vl - vPrev);
      }
      double gin = c * gh;
      gv = gh * (1.0 - k);
      if (cfg.model == "cuba_lif") {
        double g = gin + gi;
        gin = cfg.at(cfg.cSyn, n) * g;
        gi = g * (1.0 - cfg.at(cfg.kSyn, n));
      }
      r.gx[t * N + n] = gin;
    }
    if (cfg.model == "plif")
      r.gw[cfg.plifW.size() == 1 ? 0 : n % cfg.features] += gk * k * (1.0 - k);
  }
  return r;
}

} // namespace snnrt::cuda::test

#endif // SNNRT_CUDA_TEST_NEURONREFERENCE_H
