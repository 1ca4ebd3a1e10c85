//===- CpuOps.cpp - the CPU implementation of the forward ops -------------===//
//
// Straightforward loops over contiguous rows, written so that the compiler
// vectorizes the inner loops; GEMMs (linear, convolution via im2col) go
// through CBLAS (OpenBLAS).
//
//===----------------------------------------------------------------------===//

#include "snnrt/CpuOps.h"
#include "snnrt/Error.h"

#ifdef SNNRT_HAVE_CBLAS
#include <cblas.h>
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using nlohmann::json;

namespace snnrt {
namespace {

/// C[m,n] = A[m,k] * op(B) with B either [k,n] (transB false) or [n,k]:
/// CBLAS when the build found it, else plain loops (a build without BLAS,
/// e.g. on a GPU server, stays correct, just slower on the CPU).
void gemm(bool transB, int64_t m, int64_t n, int64_t k, const float *a,
          const float *b, float *c) {
#ifdef SNNRT_HAVE_CBLAS
  cblas_sgemm(CblasRowMajor, CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              m, n, k, 1.0f, a, k, b, transB ? k : n, 0.0f, c, n);
#else
  for (int64_t i = 0; i < m; ++i) {
    float *row = c + i * n;
    std::fill(row, row + n, 0.0f);
    for (int64_t p = 0; p < k; ++p) {
      float av = a[i * k + p];
      if (transB)
        for (int64_t j = 0; j < n; ++j)
          row[j] += av * b[j * k + p];
      else
        for (int64_t j = 0; j < n; ++j)
          row[j] += av * b[p * n + j];
    }
  }
#endif
}

struct Ctx {
  const Module &m;
  const Op &op;
  size_t index;
  const TensorLookup &get;

  [[noreturn]] void fail(const std::string &what) const {
    throw Error(m.dir + ": " + op.describe(index) + ": " + what);
  }
  const TensorInfo &in(size_t i) const { return m.tensor(op.in.at(i)); }
  const TensorInfo &out(size_t i) const { return m.tensor(op.out.at(i)); }
  float *inPtr(size_t i) const { return get(op.in.at(i)); }
  float *outPtr(size_t i) const { return get(op.out.at(i)); }
  template <typename T> T attr(const char *name, T fallback) const {
    auto it = op.attrs.find(name);
    return it == op.attrs.end() ? fallback : it->get<T>();
  }
  std::vector<int64_t> pair(const char *name, std::vector<int64_t> fallback) const {
    auto it = op.attrs.find(name);
    if (it == op.attrs.end())
      return fallback;
    auto v = it->get<std::vector<int64_t>>();
    if (v.size() != 2)
      fail(std::string("attribute '") + name + "' must have 2 values");
    return v;
  }
};

void linear(const Ctx &c) {
  const TensorInfo &x = c.in(0), &w = c.in(1);
  int64_t n = w.shape[0], k = w.shape[1];
  int64_t rows = static_cast<int64_t>(x.numel()) / k;
  float *y = c.outPtr(0);
  gemm(/*transB=*/true, rows, n, k, c.inPtr(0), c.inPtr(1), y);
  if (c.attr("has_bias", false)) {
    const float *b = c.inPtr(2);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j)
        y[r * n + j] += b[j];
  }
}

void conv2d(const Ctx &c) {
  const TensorInfo &xi = c.in(0), &wi = c.in(1), &yi = c.out(0);
  size_t r = xi.shape.size();
  int64_t C = xi.shape[r - 3], H = xi.shape[r - 2], W = xi.shape[r - 1];
  int64_t O = wi.shape[0], Cg = wi.shape[1], KH = wi.shape[2], KW = wi.shape[3];
  int64_t OH = yi.shape[r - 2], OW = yi.shape[r - 1];
  int64_t samples = static_cast<int64_t>(xi.numel()) / (C * H * W);
  auto stride = c.pair("stride", {1, 1}), pad = c.pair("padding", {0, 0}),
       dil = c.pair("dilation", {1, 1});
  int64_t groups = c.attr<int64_t>("groups", 1), Og = O / groups;
  int64_t cols = OH * OW, kdim = Cg * KH * KW;
  std::vector<float> col(static_cast<size_t>(kdim * cols));
  const float *x = c.inPtr(0), *w = c.inPtr(1);
  float *y = c.outPtr(0);
  const float *b = c.attr("has_bias", false) ? c.inPtr(2) : nullptr;
  for (int64_t s = 0; s < samples; ++s) {
    for (int64_t g = 0; g < groups; ++g) {
      // im2col of this sample's group: [Cg*KH*KW, OH*OW].
      for (int64_t ch = 0; ch < Cg; ++ch)
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            float *dst = &col[((ch * KH + kh) * KW + kw) * cols];
            const float *src = x + (s * C + g * Cg + ch) * H * W;
            for (int64_t oh = 0; oh < OH; ++oh) {
              int64_t ih = oh * stride[0] - pad[0] + kh * dil[0];
              for (int64_t ow = 0; ow < OW; ++ow) {
                int64_t iw = ow * stride[1] - pad[1] + kw * dil[1];
                dst[oh * OW + ow] = (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                        ? src[ih * W + iw]
                                        : 0.0f;
              }
            }
          }
      gemm(/*transB=*/false, Og, cols, kdim, w + g * Og * kdim, col.data(),
           y + (s * O + g * Og) * cols);
    }
    if (b)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t i = 0; i < cols; ++i)
          y[(s * O + o) * cols + i] += b[o];
  }
}

void pool(const Ctx &c, const std::string &kind) {
  const TensorInfo &xi = c.in(0), &yi = c.out(0);
  size_t r = xi.shape.size();
  int64_t H = xi.shape[r - 2], W = xi.shape[r - 1];
  int64_t OH = yi.shape[r - 2], OW = yi.shape[r - 1];
  int64_t planes = static_cast<int64_t>(xi.numel()) / (H * W);
  auto kernel = c.pair("kernel", {1, 1});
  auto stride = c.pair("stride", kernel), pad = c.pair("padding", {0, 0});
  const float *x = c.inPtr(0);
  float *y = c.outPtr(0);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        float acc = kind == "max" ? -std::numeric_limits<float>::infinity() : 0.0f;
        for (int64_t kh = 0; kh < kernel[0]; ++kh)
          for (int64_t kw = 0; kw < kernel[1]; ++kw) {
            int64_t ih = oh * stride[0] - pad[0] + kh,
                    iw = ow * stride[1] - pad[1] + kw;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W)
              continue; // padding: -inf for max, 0 for sums
            float v = x[(p * H + ih) * W + iw];
            acc = kind == "max" ? std::max(acc, v) : acc + v;
          }
        if (kind == "avg")
          acc /= static_cast<float>(kernel[0] * kernel[1]);
        y[(p * OH + oh) * OW + ow] = acc;
      }
}

void batchNorm(const Ctx &c) {
  if (c.attr("training", false))
    c.fail("training-mode batch norm is not supported by the CPU runtime yet");
  const TensorInfo &xi = c.in(0), &gi = c.in(1);
  int64_t C = gi.shape[0];
  int64_t spatial = 1;
  size_t r = xi.shape.size();
  int64_t rank = c.attr<int64_t>("spatial_rank", 2);
  for (int64_t i = 0; i < rank; ++i)
    spatial *= xi.shape[r - 1 - i];
  int64_t rows = static_cast<int64_t>(xi.numel()) / (C * spatial);
  double eps = c.attr("eps", 1e-5);
  const float *x = c.inPtr(0), *g = c.inPtr(1), *b = c.inPtr(2),
              *mean = c.inPtr(3), *var = c.inPtr(4);
  float *y = c.outPtr(0);
  for (int64_t ch = 0; ch < C; ++ch) {
    float scale = static_cast<float>(g[ch] / std::sqrt(double(var[ch]) + eps));
    float shift = b[ch] - mean[ch] * scale;
    for (int64_t row = 0; row < rows; ++row) {
      const float *src = x + (row * C + ch) * spatial;
      float *dst = y + (row * C + ch) * spatial;
      for (int64_t i = 0; i < spatial; ++i)
        dst[i] = src[i] * scale + shift;
    }
  }
}

/// A neuron parameter: a number, or {"tensor": id} with one value per feature.
struct Param {
  float scalar = 0.0f;
  const float *perNeuron = nullptr;
  float at(int64_t feature) const {
    return perNeuron ? perNeuron[feature] : scalar;
  }
};

Param param(const Ctx &c, const char *name, float fallback) {
  Param p;
  p.scalar = fallback;
  auto it = c.op.attrs.find(name);
  if (it == c.op.attrs.end() || it->is_null())
    return p;
  if (it->is_number()) {
    p.scalar = it->get<float>();
  } else if (it->is_object() && it->contains("tensor")) {
    p.perNeuron = c.get(it->at("tensor").get<int>());
  } else {
    c.fail(std::string("neuron parameter '") + name +
           "' must be a number or {\"tensor\": id}");
  }
  return p;
}

void neuron(const Ctx &c) {
  std::string model = c.attr<std::string>("model", "lif");
  const TensorInfo &xi = c.in(0);
  int64_t T = xi.shape[0];
  int64_t N = static_cast<int64_t>(xi.numel()) / T;
  int64_t F = c.attr<int64_t>("features", N);
  if (F <= 0 || N % F)
    c.fail("'features' = " + std::to_string(F) + " does not divide the " +
           std::to_string(N) + " neurons of each step");
  bool soft = c.attr<std::string>("reset", "hard") == "soft";
  bool strict = c.attr("strict", false);
  bool li = model == "li", cuba = model == "cuba_lif";
  Param k = param(c, "k", 0.5f), cin = param(c, "c", 0.5f),
        vleak = param(c, "v_leak", 0.0f), vth = param(c, "v_th", 1.0f),
        vreset = param(c, "v_reset", 0.0f), vinit = param(c, "v_init", 0.0f),
        ksyn = param(c, "k_syn", 0.5f), csyn = param(c, "c_syn", 1.0f),
        iinit = param(c, "i_init", 0.0f);
  if (model == "if")
    k = Param{}; // no leak
  std::vector<float> plifK;
  if (model == "plif") {
    auto w = c.op.attrs.find("plif_w");
    if (w == c.op.attrs.end() || !w->is_object())
      c.fail("plif needs 'plif_w': {\"tensor\": id}");
    const TensorInfo &wi = c.m.tensor(w->at("tensor").get<int>());
    const float *wp = c.get(wi.id);
    plifK.resize(static_cast<size_t>(F));
    for (int64_t f = 0; f < F; ++f) {
      float wv = wp[wi.numel() == 1 ? 0 : f];
      plifK[f] = 1.0f / (1.0f + std::exp(-wv));
    }
    k = Param{0.0f, plifK.data()};
    cin = c.attr("decay_input", true) ? k : Param{1.0f, nullptr};
  }
  const float *x = c.inPtr(0);
  float *out = c.outPtr(0);
  float *saveH = c.attr("save_h", false) && c.op.out.size() > 1 ? c.outPtr(1)
                                                                 : nullptr;
  std::vector<float> v(static_cast<size_t>(N)), cur(static_cast<size_t>(N));
  for (int64_t n = 0; n < N; ++n) {
    v[n] = vinit.at(n % F);
    cur[n] = iinit.at(n % F);
  }
  for (int64_t t = 0; t < T; ++t) {
    const float *xt = x + t * N;
    float *ot = out + t * N;
    for (int64_t n = 0; n < N; ++n) {
      int64_t f = n % F;
      float input = xt[n];
      if (cuba) {
        cur[n] = cur[n] - ksyn.at(f) * cur[n] + csyn.at(f) * input;
        input = cur[n];
      }
      float h = v[n] + k.at(f) * (vleak.at(f) - v[n]) + cin.at(f) * input;
      if (saveH)
        saveH[t * N + n] = h;
      if (li) {
        v[n] = h;
        ot[n] = h;
        continue;
      }
      float th = vth.at(f);
      float s = (strict ? h > th : h >= th) ? 1.0f : 0.0f;
      v[n] = soft ? h - th * s : h * (1.0f - s) + vreset.at(f) * s;
      ot[n] = s;
    }
  }
}

} // namespace

void runCpuOp(const Module &module, const Op &op, size_t index,
              const TensorLookup &tensor) {
  Ctx c{module, op, index, tensor};
  const std::string &k = op.kind;
  if (k == "linear")
    return linear(c);
  if (k == "conv2d")
    return conv2d(c);
  if (k == "avg_pool2d")
    return pool(c, "avg");
  if (k == "sum_pool2d")
    return pool(c, "sum");
  if (k == "max_pool2d")
    return pool(c, "max");
  if (k == "batch_norm")
    return batchNorm(c);
  if (k == "neuron")
    return neuron(c);
  size_t n = c.in(0).numel();
  const float *x = c.inPtr(0);
  float *y = c.outPtr(0);
  if (k == "add") {
    const float *b = c.inPtr(1);
    for (size_t i = 0; i < n; ++i)
      y[i] = x[i] + b[i];
    return;
  }
  if (k == "scale") {
    float s = c.attr("scale", 1.0f);
    for (size_t i = 0; i < n; ++i)
      y[i] = s * x[i];
    return;
  }
  if (k == "dropout") {
    if (c.attr("training", false))
      c.fail("training-mode dropout is not supported by the CPU runtime yet");
    if (y != x)
      std::copy(x, x + n, y);
    return;
  }
  c.fail("the CPU runtime does not implement this op yet");
}

} // namespace snnrt
