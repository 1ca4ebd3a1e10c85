//===- OpTestUtil.h - one-op modules and finite differences for tests -*- C++ -*-===//

#ifndef SNNRT_TEST_OPTESTUTIL_H
#define SNNRT_TEST_OPTESTUTIL_H

#include "snnrt/CpuOps.h"

#include <functional>
#include <random>
#include <string>
#include <vector>

namespace snnrt {
namespace test {

/// A module holding one op over fresh tensors with the given shapes.
struct OneOp {
  Module m;
  std::vector<std::vector<float>> data;
  Op op;
  RunContext ctx;

  OneOp(const std::string &kind, std::vector<std::vector<int64_t>> ins,
        std::vector<std::vector<int64_t>> outs, nlohmann::json attrs) {
    m.dir = "test";
    for (auto &s : ins)
      op.in.push_back(add(s));
    for (auto &s : outs)
      op.out.push_back(add(s));
    op.kind = kind;
    op.attrs = std::move(attrs);
  }
  /// A tensor that is no operand (e.g. a neuron parameter tensor).
  int add(const std::vector<int64_t> &shape) {
    TensorInfo t;
    t.id = static_cast<int>(m.tensors.size());
    t.name = "t" + std::to_string(t.id);
    t.shape = shape;
    m.tensors.push_back(t);
    data.emplace_back(t.numel());
    return t.id;
  }
  std::vector<float> &in(size_t i) { return data[op.in[i]]; }
  std::vector<float> &out(size_t i) { return data[op.out[i]]; }
  void run() {
    runCpuOp(m, op, 0, [this](int id) { return data[id].data(); }, ctx);
  }
};

inline void fillRandom(std::vector<float> &v, std::mt19937 &rng, float lo,
                       float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  for (float &x : v)
    x = d(rng);
}

inline std::vector<double> toDouble(const std::vector<float> &v) {
  return std::vector<double>(v.begin(), v.end());
}

/// Central differences of f at x, in double.
inline std::vector<double>
finiteDifferences(const std::function<double(const std::vector<double> &)> &f,
                  std::vector<double> x, double eps = 1e-6) {
  std::vector<double> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double keep = x[i];
    x[i] = keep + eps;
    double up = f(x);
    x[i] = keep - eps;
    double down = f(x);
    x[i] = keep;
    g[i] = (up - down) / (2 * eps);
  }
  return g;
}

/// sum(gy * y): the scalar whose gradient a backward op computes for an
/// upstream gradient gy.
inline double dot(const std::vector<float> &gy, const std::vector<double> &y) {
  double s = 0;
  for (size_t i = 0; i < y.size(); ++i)
    s += gy[i] * y[i];
  return s;
}

} // namespace test
} // namespace snnrt

#endif // SNNRT_TEST_OPTESTUTIL_H
