//===- CpuNeuron.cpp - the neuron scan and its BPTT on the CPU ------------===//
//
// DESIGN §2: H[t] = V[t-1] + k (v_leak - V[t-1]) + c X[t], S = Θ(H - v_th),
// hard/soft reset; the backward runs t = T-1..0 with a surrogate derivative.
// Parameters are expanded to one value per feature once, so the inner loop
// over features is branch-free and vectorizes; the state lives in a local
// array across the time loop.
//
//===----------------------------------------------------------------------===//

#include "CpuOpContext.h"
#include "HostKernels.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace snnrt {
namespace cpu {
namespace {

enum class Surrogate { Sigmoid, Atan, Triangle, FastSigmoid };

/// Every attribute of a neuron / neuron_bwd op, parameters per feature.
struct NeuronSpec {
  std::string model;
  int64_t T = 0, N = 0, F = 0;
  bool li = false, cuba = false, plif = false, soft = false, strict = false;
  bool detachReset = false, hasThetaGrad = false;
  Surrogate surrogate = Surrogate::Sigmoid;
  float alpha = 4.0f, thetaGrad = 0.0f;
  // σ' = 0 where |H - v_th| > gradBand (infinity: no band).
  float gradBand = INFINITY;
  // One value per feature.
  std::vector<float> k, c, vleak, vth, vreset, vinit, ksyn, csyn, iinit;
  // plif: the weight tensor and whether it is a scalar.
  const TensorInfo *plifW = nullptr;
};

std::vector<float> perFeature(const Ctx &c, const char *name, float fallback,
                              int64_t F) {
  std::vector<float> v(static_cast<size_t>(F), fallback);
  auto it = c.op.attrs.find(name);
  if (it == c.op.attrs.end() || it->is_null())
    return v;
  if (it->is_number()) {
    std::fill(v.begin(), v.end(), it->get<float>());
    return v;
  }
  if (!it->is_object() || !it->contains("tensor") ||
      !it->at("tensor").is_number_integer())
    c.fail(std::string("neuron parameter '") + name +
           "' must be a number or {\"tensor\": id}, got " + it->dump());
  int id = it->at("tensor").get<int>();
  if (id < 0 || id >= static_cast<int>(c.m.tensors.size()))
    c.fail(std::string("neuron parameter '") + name + "' names tensor id " +
           std::to_string(id) + ", which does not exist");
  const TensorInfo &t = c.m.tensor(id);
  if (t.numel() != 1 && t.numel() != static_cast<size_t>(F))
    c.fail(std::string("neuron parameter '") + name + "' tensor '" + t.name +
           "' has " + std::to_string(t.numel()) + " values; expected 1 or " +
           std::to_string(F) + " (one per feature)");
  const float *p = c.get(id);
  for (int64_t f = 0; f < F; ++f)
    v[f] = p[t.numel() == 1 ? 0 : f];
  return v;
}

/// `step`: one step of [B, features...] (neuron_step) instead of a scan of
/// [T, B, features...].
NeuronSpec readSpec(const Ctx &c, bool step = false) {
  NeuronSpec s;
  s.model = c.attr<std::string>("model", "lif");
  if (s.model != "lif" && s.model != "if" && s.model != "plif" &&
      s.model != "li" && s.model != "cuba_lif")
    c.fail("unknown neuron model '" + s.model +
           "' (expected lif, if, plif, li or cuba_lif)");
  const TensorInfo &x = c.in(0);
  if (!step && (x.shape.empty() || x.shape[0] <= 0))
    c.fail("the input " + x.shapeString() + " has no time dimension");
  s.T = step ? 1 : x.shape[0];
  s.N = static_cast<int64_t>(x.numel()) / s.T;
  s.F = c.attr<int64_t>("features", s.N);
  if (s.F <= 0 || s.N % s.F)
    c.fail("'features' = " + std::to_string(s.F) + " does not divide the " +
           std::to_string(s.N) + " neurons of each step");
  s.li = s.model == "li";
  s.cuba = s.model == "cuba_lif";
  s.plif = s.model == "plif";
  std::string reset = c.attr<std::string>("reset", "hard");
  if (reset != "hard" && reset != "soft")
    c.fail("'reset' must be hard or soft, not '" + reset + "'");
  s.soft = reset == "soft";
  s.strict = c.attr("strict", false);
  s.detachReset = c.attr("detach_reset", false);
  int64_t F = s.F;
  s.k = perFeature(c, "k", 0.5f, F);
  s.c = perFeature(c, "c", 0.5f, F);
  s.vleak = perFeature(c, "v_leak", 0.0f, F);
  s.vth = perFeature(c, "v_th", 1.0f, F);
  s.vreset = perFeature(c, "v_reset", 0.0f, F);
  s.vinit = perFeature(c, "v_init", 0.0f, F);
  s.ksyn = perFeature(c, "k_syn", 0.5f, F);
  s.csyn = perFeature(c, "c_syn", 1.0f, F);
  s.iinit = perFeature(c, "i_init", 0.0f, F);
  if (s.model == "if")
    std::fill(s.k.begin(), s.k.end(), 0.0f);
  if (s.plif) {
    auto w = c.op.attrs.find("plif_w");
    if (w == c.op.attrs.end() || !w->is_object() || !w->contains("tensor"))
      c.fail("plif needs 'plif_w': {\"tensor\": id}");
    s.plifW = &c.m.tensor(w->at("tensor").get<int>());
    s.k = perFeature(c, "plif_w", 0.0f, F);
    for (float &k : s.k)
      k = 1.0f / (1.0f + std::exp(-k));
    if (c.attr("decay_input", true))
      s.c = s.k;
    else
      std::fill(s.c.begin(), s.c.end(), 1.0f);
  }
  auto sg = c.op.attrs.find("surrogate");
  std::string kind = "sigmoid";
  nlohmann::json sgAttrs = nlohmann::json::object();
  if (sg != c.op.attrs.end() && sg->is_object()) {
    sgAttrs = *sg;
    kind = sg->value("kind", "sigmoid");
  } else if (sg != c.op.attrs.end() && sg->is_string()) {
    kind = sg->get<std::string>();
  }
  float defaultAlpha;
  if (kind == "sigmoid")
    s.surrogate = Surrogate::Sigmoid, defaultAlpha = 4.0f;
  else if (kind == "atan")
    s.surrogate = Surrogate::Atan, defaultAlpha = 2.0f;
  else if (kind == "triangle")
    s.surrogate = Surrogate::Triangle, defaultAlpha = 1.0f;
  else if (kind == "fast_sigmoid")
    s.surrogate = Surrogate::FastSigmoid, defaultAlpha = 10.0f;
  else
    c.fail("unknown surrogate '" + kind +
           "' (expected sigmoid, atan, triangle or fast_sigmoid)");
  auto alpha = sgAttrs.find("alpha");
  s.alpha = alpha != sgAttrs.end() && alpha->is_number() ? alpha->get<float>()
                                                          : defaultAlpha;
  auto theta = sgAttrs.find("theta_grad");
  if (theta != sgAttrs.end() && theta->is_number()) {
    s.hasThetaGrad = true;
    s.thetaGrad = theta->get<float>();
  }
  auto band = sgAttrs.find("grad_band");
  if (band != sgAttrs.end()) {
    if (!band->is_number() || !(band->get<double>() > 0.0))
      c.fail("surrogate grad_band must be a number > 0 (the half-width of "
             "the band |H - v_th| <= B that keeps the gradient), got " +
             band->dump());
    s.gradBand = band->get<float>();
  }
  return s;
}

inline bool fires(const NeuronSpec &s, float h, float vth) {
  return s.strict ? h > vth : h >= vth;
}

/// V[t] from H[t] (the reset).
inline float afterReset(const NeuronSpec &s, float h, float vth, float vreset) {
  if (s.li)
    return h;
  float spike = fires(s, h, vth) ? 1.0f : 0.0f;
  return s.soft ? h - vth * spike : h * (1.0f - spike) + vreset * spike;
}

inline float surrogateGrad(const NeuronSpec &s, float h, float vth) {
  if (s.hasThetaGrad && h < s.thetaGrad)
    return 0.0f;
  float u = h - vth, a = s.alpha;
  if (std::fabs(u) > s.gradBand)
    return 0.0f;
  switch (s.surrogate) {
  case Surrogate::Sigmoid: {
    float z = 1.0f / (1.0f + std::exp(-a * u));
    return (1.0f - z) * z * a;
  }
  case Surrogate::Atan: {
    float w = (3.14159265358979323846f / 2.0f * a) * u;
    return (a / 2.0f) / (1.0f + w * w);
  }
  case Surrogate::Triangle:
    return (1.0f / a) * std::fmax(0.0f, 1.0f - std::fabs(u) / a);
  case Surrogate::FastSigmoid: {
    float d = a * std::fabs(u) + 1.0f;
    return 1.0f / (d * d);
  }
  }
  return 0.0f;
}

/// The op's generated CPU kernel `which` ("fwd"/"bwd"), if the op names one
/// and the module has a library for this machine.
HostKernel generatedKernel(const Ctx &c, const char *which) {
  auto it = c.op.attrs.find("kernel");
  if (it == c.op.attrs.end() || !it->is_object() || !it->contains(which) ||
      !(*it)[which].is_string())
    return {};
  return findHostKernel(c.m, (*it)[which].get<std::string>());
}

/// Runs `fn` on the kernel ABI's tensors: `first`, then in[firstParam..].
void callGenerated(const Ctx &c, HostKernel fn, std::vector<void *> args,
                   size_t firstParam) {
  for (size_t i = firstParam; i < c.op.in.size(); ++i)
    args.push_back(c.inPtr(i));
  fn(args.data());
}

/// Writes dL/dw of plif's weight into output `index` from dL/dk per
/// feature (k = sigmoid(w)); a scalar weight gets the sum over features.
void writePlifGrad(const Ctx &c, const NeuronSpec &s,
                   const std::vector<double> &gk, size_t index) {
  if (c.op.out.size() <= index)
    c.fail("plif needs an output for the gradient of 'plif_w'");
  size_t wn = s.plifW->numel();
  c.expectElements(c.out(index), wn, "like plif_w");
  GradOut gwOut(c, c.outPtr(index), wn);
  float *gw = gwOut.data();
  double total = 0.0;
  for (int64_t f = 0; f < s.F; ++f) {
    double d = gk[f] * s.k[f] * (1.0 - s.k[f]); // sigmoid'
    if (wn == 1)
      total += d;
    else
      gw[f] = static_cast<float>(d);
  }
  if (wn == 1)
    gw[0] = static_cast<float>(total);
  gwOut.commit();
}

/// The forward scan of DESIGN §2 over T steps from v_init (and i_init):
/// S (li: H) into `out`, H into `hOut`, I into `iOut` and the membrane after
/// the step into `vOut` when not null.
void scanForward(const NeuronSpec &s, const float *x, float *out, float *hOut,
                 float *iOut, bool hBf16, float *vOut = nullptr) {
  int64_t F = s.F, B = s.N / s.F;
  std::vector<float> v(static_cast<size_t>(s.N)), cur(static_cast<size_t>(s.N));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t f = 0; f < F; ++f) {
      v[b * F + f] = s.vinit[f];
      cur[b * F + f] = s.iinit[f];
    }
  const float *k = s.k.data(), *cin = s.c.data(), *vleak = s.vleak.data(),
              *vth = s.vth.data(), *vreset = s.vreset.data(),
              *ksyn = s.ksyn.data(), *csyn = s.csyn.data();
  for (int64_t t = 0; t < s.T; ++t)
    for (int64_t b = 0; b < B; ++b) {
      int64_t base = t * s.N + b * F;
      float *vb = v.data() + b * F, *ib = cur.data() + b * F;
      for (int64_t f = 0; f < F; ++f) {
        float input = x[base + f];
        if (s.cuba) {
          ib[f] = (ib[f] - ksyn[f] * ib[f]) + csyn[f] * input;
          input = ib[f];
          if (iOut)
            iOut[base + f] = ib[f];
        }
        float h = (vb[f] + k[f] * (vleak[f] - vb[f])) + cin[f] * input;
        if (hOut)
          hOut[base + f] = hBf16 ? roundToBf16(h) : h;
        if (s.li) {
          vb[f] = h;
          out[base + f] = h;
          if (vOut)
            vOut[base + f] = h;
          continue;
        }
        bool spike = fires(s, h, vth[f]);
        vb[f] = afterReset(s, h, vth[f], vreset[f]);
        out[base + f] = spike ? 1.0f : 0.0f;
        if (vOut)
          vOut[base + f] = vb[f];
      }
    }
}

/// The op's `recompute_chunk` C (0: H is saved): the forward saves the
/// membrane before steps C, 2C, ... and the backward recomputes H from X.
int64_t recomputeChunk(const Ctx &c, const NeuronSpec &s) {
  int64_t chunk = c.attr<int64_t>("recompute_chunk", 0);
  if (chunk < 0)
    c.fail("'recompute_chunk' must be >= 0, got " + std::to_string(chunk));
  if (chunk > 0 && (s.li || s.cuba || s.plif))
    c.fail("'recompute_chunk' applies to lif and if layers, not " + s.model);
  return chunk;
}

/// Elements of the checkpoint tensor of a layer that recomputes H.
size_t checkpointSize(const NeuronSpec &s, int64_t chunk) {
  int64_t chunks = (s.T + chunk - 1) / chunk;
  return static_cast<size_t>(std::max<int64_t>(chunks - 1, 1) * s.N);
}

} // namespace

/// An infer op whose state snn-run records (`"record": true`): out = S (li:
/// H), H, V; the layer's generated record kernel, else the built-in scan.
static void runNeuronRecord(const Ctx &c, const NeuronSpec &s) {
  c.arity(1, c.op.in.size(), 3, 3);
  size_t total = static_cast<size_t>(s.T * s.N);
  for (size_t i = 0; i < 3; ++i)
    c.expectElements(c.out(i), total, "like the input (S, H, V)");
  if (HostKernel fn = generatedKernel(c, "fwd_record")) {
    callGenerated(c, fn, {c.inPtr(0), c.outPtr(0), c.outPtr(1), c.outPtr(2)},
                  1);
    return;
  }
  scanForward(s, c.inPtr(0), c.outPtr(0), c.outPtr(1), nullptr, false,
              c.outPtr(2));
}

/// A layer fused with its pooling (--snn-fuse, `"pool"`): only its generated
/// kernel computes the pooled spikes.
void runPooledNeuron(const Ctx &c, const NeuronSpec &s) {
  const nlohmann::json &pool = c.op.attrs.at("pool");
  const nlohmann::json *kernel =
      pool.is_object() && pool.contains("kernel") ? &pool.at("kernel") : nullptr;
  if (!kernel || !kernel->is_array() || kernel->size() != 2 ||
      !(*kernel)[0].is_number_integer() || !(*kernel)[1].is_number_integer() ||
      (*kernel)[0].get<int64_t>() <= 0 || (*kernel)[1].get<int64_t>() <= 0)
    c.fail("'pool' must be {\"kind\": \"avg\"|\"sum\", \"kernel\": [KH, KW]}, "
           "got " + pool.dump());
  int64_t area = (*kernel)[0].get<int64_t>() * (*kernel)[1].get<int64_t>();
  if (c.attr("record", false) || c.attr("save_h", false))
    c.fail("a layer fused with its pooling has neither recorded nor saved "
           "state; compile the module without --snn-fuse to record or train "
           "it");
  c.arity(1, c.op.in.size(), 1, 1);
  if (s.N % area)
    c.fail("the " + std::to_string(s.N) + " neurons of a step do not fill " +
           std::to_string(area) + "-neuron pooling windows");
  c.expectElements(c.out(0), static_cast<size_t>(s.T * s.N / area),
                   "the pooled spikes, T x N / (KH KW)");
  HostKernel fn = generatedKernel(c, "fwd");
  if (!fn)
    c.fail("a layer fused with its pooling runs only as its generated "
           "kernel, which this module lacks for this machine; recompile it "
           "(snn-opt --snn-fuse --snn-compile=\"target=cpu\") or without "
           "--snn-fuse");
  callGenerated(c, fn, {c.inPtr(0), c.outPtr(0)}, 1);
}

/// The number of state tensors a layer split in time (--snn-split-time)
/// takes last in `in` and gives last in `out` (0: none).
size_t chainedStates(const Ctx &c, const NeuronSpec &s) {
  int64_t n = c.attr("chained_states", int64_t(0));
  if (n == 0)
    return 0;
  if (n != (s.cuba ? 2 : 1) || c.op.in.size() <= size_t(n) ||
      c.op.out.size() <= size_t(n))
    c.fail("'chained_states' must be the layer's number of state tensors (" +
           std::to_string(s.cuba ? 2 : 1) + "), the last inputs and outputs");
  for (size_t i = 0; i < size_t(n); ++i) {
    c.expectElements(c.in(c.op.in.size() - n + i), size_t(s.N),
                     "a chained state, one value per neuron");
    c.expectElements(c.out(c.op.out.size() - n + i), size_t(s.N),
                     "a chained state, one value per neuron");
  }
  return size_t(n);
}

/// The generated kernel of a layer split in time: the ABI's tensors, then
/// the states in and out (docs/artifact-format.md, "Chained state"), then
/// the tensor parameters. `lead` inputs and `results` outputs come first.
void callChained(const Ctx &c, HostKernel fn, std::vector<void *> args,
                 size_t lead, size_t states) {
  size_t firstIn = c.op.in.size() - states, firstOut = c.op.out.size() - states;
  for (size_t i = 0; i < states; ++i)
    args.push_back(c.inPtr(firstIn + i));
  for (size_t i = 0; i < states; ++i)
    args.push_back(c.outPtr(firstOut + i));
  for (size_t i = lead; i < firstIn; ++i)
    args.push_back(c.inPtr(i));
  fn(args.data());
}

void runChainedNeuron(const Ctx &c, const NeuronSpec &s, size_t states) {
  HostKernel fn = s.plif || c.attr("record", false)
                      ? HostKernel{}
                      : generatedKernel(c, "fwd");
  if (!fn)
    c.fail("a neuron layer split in time runs only as its generated kernel "
           "(no plif, no --record), which this module lacks for this "
           "machine; recompile it with --snn-compile=\"target=cpu\"");
  c.expectElements(c.out(0), size_t(s.T * s.N), "the spikes, like the input");
  std::vector<void *> args{c.inPtr(0)};
  for (size_t i = 0; i + states < c.op.out.size(); ++i)
    args.push_back(c.outPtr(i));
  callChained(c, fn, std::move(args), 1, states);
}

void runNeuron(const Ctx &c) {
  NeuronSpec s = readSpec(c);
  // A layer that applies the batch norm in front of it (--snn-fuse, "bn")
  // reads x: only its generated kernels normalize it.
  if (c.op.attrs.contains("bn") &&
      !generatedKernel(c, c.attr("record", false) ? "fwd_record" : "fwd"))
    c.fail("a layer fused with its batch norm runs only as its generated "
           "kernel, which this module lacks for this machine; recompile it "
           "(snn-opt --snn-fuse --snn-compile=\"target=cpu\") or without "
           "--snn-fuse");
  if (size_t states = chainedStates(c, s))
    return runChainedNeuron(c, s, states);
  if (c.op.attrs.contains("pool"))
    return runPooledNeuron(c, s);
  if (c.attr("record", false))
    return runNeuronRecord(c, s);
  bool saveH = c.attr("save_h", false);
  c.arity(1, c.op.in.size(), saveH ? 2 : 1, s.cuba ? 3 : 2);
  size_t total = static_cast<size_t>(s.T * s.N);
  c.expectElements(c.out(0), total, s.li ? "H, like the input"
                                         : "the spikes, like the input");
  int64_t chunk = saveH ? recomputeChunk(c, s) : 0;
  float *hOut = saveH && c.op.out.size() > 1 ? c.outPtr(1) : nullptr;
  float *iOut = saveH && s.cuba && c.op.out.size() > 2 ? c.outPtr(2) : nullptr;
  if (chunk > 0)
    c.expectElements(c.out(1), checkpointSize(s, chunk),
                     "membrane checkpoints, max(ceil(T/C) - 1, 1) x N");
  else if (hOut)
    c.expectElements(c.out(1), total, "saved H, like the input");
  // A bf16 H (--snn-compile saved-h=bf16) is stored rounded; the scan itself
  // runs in fp32.
  bool hBf16 = hOut && c.out(1).dtype == DType::BF16;
  if (iOut)
    c.expectElements(c.out(2), total, "saved I, like the input");
  // The generated kernel (a bf16 H rounded in its f32 slots).
  if (HostKernel fn = generatedKernel(c, "fwd")) {
    std::vector<void *> args{c.inPtr(0)};
    for (size_t i = 0; i < c.op.out.size(); ++i)
      args.push_back(c.outPtr(i));
    callGenerated(c, fn, std::move(args), 1);
    return;
  }
  const float *x = c.inPtr(0);
  float *out = c.outPtr(0);
  if (chunk > 0) {
    // H goes to scratch; the membrane before steps C, 2C, ... is saved.
    std::vector<float> hs(total);
    scanForward(s, x, out, hs.data(), nullptr, false);
    float *ckpt = c.outPtr(1);
    for (int64_t t = chunk; t < s.T; t += chunk)
      for (int64_t n = 0; n < s.N; ++n) {
        int64_t f = n % s.F;
        float h = hs[(t - 1) * s.N + n];
        ckpt[(t / chunk - 1) * s.N + n] =
            afterReset(s, h, s.vth[f], s.vreset[f]);
      }
    return;
  }
  scanForward(s, x, out, hOut, iOut, hBf16);
}

void runNeuronBackward(const Ctx &c) {
  NeuronSpec s = readSpec(c);
  if (size_t states = chainedStates(c, s)) {
    HostKernel fn = s.plif || c.accumulate() ? HostKernel{}
                                             : generatedKernel(c, "bwd");
    if (!fn)
      c.fail("the backward of a neuron layer split in time runs only as its "
             "generated kernel, which this module lacks for this machine; "
             "recompile it with --snn-compile=\"target=cpu\"");
    size_t total = static_cast<size_t>(s.T * s.N);
    c.expectElements(c.in(1), total, "saved H, like the gradient");
    c.expectElements(c.out(0), total, "gx, like the gradient");
    std::vector<void *> args{c.inPtr(0), c.inPtr(1), c.outPtr(0)};
    if (s.cuba)
      args.push_back(c.inPtr(2));
    return callChained(c, fn, std::move(args), s.cuba ? 3 : 2, states);
  }
  c.arity(2, c.op.in.size(), 1, 2);
  size_t total = static_cast<size_t>(s.T * s.N);
  int64_t chunk = recomputeChunk(c, s);
  c.expectElements(c.out(0), total, "gx, like the gradient");
  if (chunk > 0) {
    // in: gs, X, the membrane checkpoints: H is recomputed.
    c.arity(3, c.op.in.size(), 1, 1);
    c.expectElements(c.in(1), total, "the layer's input X, like the gradient");
    c.expectElements(c.in(2), checkpointSize(s, chunk),
                     "membrane checkpoints, max(ceil(T/C) - 1, 1) x N");
    if (!c.accumulate())
      if (HostKernel fn = generatedKernel(c, "bwd")) {
        callGenerated(c, fn, {c.inPtr(0), c.inPtr(1), c.inPtr(2), c.outPtr(0)},
                      3);
        return;
      }
  } else {
    c.expectElements(c.in(1), total, "saved H, like the gradient");
  }
  // Recomputed from X from v_init: the same arithmetic as the forward.
  std::vector<float> recomputed;
  if (chunk > 0) {
    recomputed.resize(total);
    std::vector<float> spikes(total);
    scanForward(s, c.inPtr(1), spikes.data(), recomputed.data(), nullptr,
                false);
  }
  // The generated kernel overwrites gx and adds plif's gw into a zeroed one.
  if (chunk == 0 && !c.accumulate())
    if (HostKernel fn = generatedKernel(c, "bwd")) {
      std::vector<void *> args{c.inPtr(0), c.inPtr(1), c.outPtr(0)};
      if (s.cuba) {
        if (c.op.in.size() < 3)
          c.fail("cuba_lif backward needs the saved synaptic current");
        args.push_back(c.inPtr(2));
      }
      if (s.plif) {
        if (c.op.out.size() != 2)
          c.fail("plif needs an output for the gradient of 'plif_w'");
        c.expectElements(c.out(1), s.plifW->numel(), "like plif_w");
        std::fill_n(c.outPtr(1), s.plifW->numel(), 0.0f);
        args.push_back(c.outPtr(1));
      }
      callGenerated(c, fn, std::move(args), s.cuba ? 3 : 2);
      return;
    }
  const float *gs = c.inPtr(0),
              *hs = chunk > 0 ? recomputed.data() : c.inPtr(1);
  GradOut gxOut(c, c.outPtr(0), total);
  float *gx = gxOut.data();
  int64_t F = s.F, B = s.N / s.F;
  // dL/dk per feature (plif), reduced over T and the batch in double.
  std::vector<double> gk(s.plif ? static_cast<size_t>(F) : 0, 0.0);
  std::vector<float> gv(static_cast<size_t>(s.N), 0.0f),
      gi(static_cast<size_t>(s.N), 0.0f);
  const float *k = s.k.data(), *cin = s.c.data(), *vth = s.vth.data(),
              *vreset = s.vreset.data(), *ksyn = s.ksyn.data(),
              *csyn = s.csyn.data(), *vleak = s.vleak.data(),
              *vinit = s.vinit.data();
  bool decayInput = c.attr("decay_input", true);
  for (int64_t t = s.T - 1; t >= 0; --t)
    for (int64_t b = 0; b < B; ++b) {
      int64_t base = t * s.N + b * F;
      float *gvb = gv.data() + b * F, *gib = gi.data() + b * F;
      for (int64_t f = 0; f < F; ++f) {
        float h = hs[base + f], gh;
        if (s.li) {
          gh = gs[base + f] + gvb[f]; // the output is H, never reset
        } else {
          float sg = surrogateGrad(s, h, vth[f]);
          bool spike = fires(s, h, vth[f]);
          float dvdh;
          if (!s.soft) {
            dvdh = spike ? 0.0f : 1.0f;
            if (!s.detachReset)
              dvdh += (vreset[f] - h) * sg;
          } else {
            dvdh = s.detachReset ? 1.0f : 1.0f - vth[f] * sg;
          }
          gh = gs[base + f] * sg + gvb[f] * dvdh;
        }
        if (s.plif) {
          // dH/dk with V[t-1] recomputed from H[t-1].
          float vPrev = t > 0 ? afterReset(s, hs[base - s.N + f], vth[f],
                                           vreset[f])
                              : vinit[f];
          float dk = decayInput ? (h - vPrev) / k[f] : vleak[f] - vPrev;
          gk[f] += static_cast<double>(gh) * dk;
        }
        float gin = cin[f] * gh;
        gvb[f] = gh * (1.0f - k[f]);
        if (s.cuba) {
          float g = gin + gib[f];
          gin = csyn[f] * g;
          gib[f] = g * (1.0f - ksyn[f]);
        }
        gx[base + f] = gin;
      }
    }
  gxOut.commit();
  if (s.plif)
    writePlifGrad(c, s, gk, 1);
}

void runNeuronStep(const Ctx &c) {
  NeuronSpec s = readSpec(c, /*step=*/true);
  // in: x, the state (cuba: i, v), then plif's weight and parameters;
  // out: the output and the next state (li: the membrane is both).
  size_t states = s.cuba ? 2 : 1;
  bool saveH = c.attr("save_h", false);
  size_t outs = (s.li ? 1 : 1 + states) + saveH;
  c.arity(1 + states, 64, outs, outs);
  size_t n = static_cast<size_t>(s.N);
  for (size_t i = 0; i <= states; ++i)
    c.expectElements(c.in(i), n, "like the step's input");
  for (size_t i = 0; i < outs; ++i)
    c.expectElements(c.out(i), n, "like the step's input");
  const float *x = c.inPtr(0);
  // "addend": {"tensor": id}: the input is x + addend (a fused snn.add).
  const float *addend = nullptr;
  auto extra = c.op.attrs.find("addend");
  if (extra != c.op.attrs.end()) {
    if (!extra->is_object() || !extra->contains("tensor"))
      c.fail("'addend' must be {\"tensor\": id}");
    int id = extra->at("tensor").get<int>();
    c.expectElements(c.m.tensor(id), n, "like the step's input");
    addend = c.get(id);
  }
  // The generated step kernel: x, the state, the outputs, then the other
  // inputs (plif's weight, the addend, the parameters).
  if (HostKernel fn = generatedKernel(c, saveH ? "fwd_h" : "fwd")) {
    std::vector<void *> args;
    for (size_t i = 0; i <= states; ++i)
      args.push_back(c.inPtr(i));
    for (size_t i = 0; i < outs; ++i)
      args.push_back(c.outPtr(i));
    callGenerated(c, fn, std::move(args), 1 + states);
    return;
  }
  const float *iPrev = s.cuba ? c.inPtr(1) : nullptr;
  const float *vPrev = c.inPtr(s.cuba ? 2 : 1);
  float *out = c.outPtr(0);
  float *iNext = s.cuba ? c.outPtr(1) : nullptr;
  float *vNext = s.li ? out : c.outPtr(s.cuba ? 2 : 1);
  float *hOut = saveH ? c.outPtr(outs - 1) : nullptr;
  int64_t F = s.F, B = s.N / s.F;
  const float *k = s.k.data(), *cin = s.c.data(), *vleak = s.vleak.data(),
              *vth = s.vth.data(), *vreset = s.vreset.data(),
              *ksyn = s.ksyn.data(), *csyn = s.csyn.data();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t f = 0; f < F; ++f) {
      int64_t at = b * F + f;
      float input = addend ? x[at] + addend[at] : x[at];
      if (s.cuba) {
        float i = iPrev[at];
        i = (i - ksyn[f] * i) + csyn[f] * input;
        iNext[at] = input = i;
      }
      float v = vPrev[at];
      float h = (v + k[f] * (vleak[f] - v)) + cin[f] * input;
      if (hOut)
        hOut[at] = h;
      if (s.li) {
        out[at] = h;
        continue;
      }
      bool spike = fires(s, h, vth[f]);
      vNext[at] = afterReset(s, h, vth[f], vreset[f]);
      out[at] = spike ? 1.0f : 0.0f;
    }
}

void runNeuronStepBackward(const Ctx &c) {
  NeuronSpec s = readSpec(c, /*step=*/true);
  // in: gS (li: gV'), [cuba: gI' (the next current's gradient)], gV' (the
  // next membrane's gradient), H, [plif: V before the step, w], parameters;
  // out: gX, [cuba: gI], gV (the previous state's gradients), [plif: gw].
  size_t grads = s.cuba ? 3 : 2;
  size_t outs = grads + (s.plif ? 1 : 0);
  c.arity(grads + 1 + (s.plif ? 2 : 0), 64, outs, outs);
  size_t n = static_cast<size_t>(s.N);
  for (size_t i = 0; i <= grads + (s.plif ? 1 : 0); ++i)
    c.expectElements(c.in(i), n, "like the step's input");
  for (size_t i = 0; i < grads; ++i)
    c.expectElements(c.out(i), n, "like the step's input");
  if (s.plif)
    c.expectElements(c.out(grads), s.plifW->numel(), "like plif_w");
  // The generated kernel: the gradients and H, the outputs (plif's gw added
  // into zeros), then V before the step, w and the parameters.
  if (!c.accumulate())
    if (HostKernel fn = generatedKernel(c, "bwd")) {
      std::vector<void *> args;
      for (size_t i = 0; i <= grads; ++i)
        args.push_back(c.inPtr(i));
      for (size_t i = 0; i < outs; ++i)
        args.push_back(c.outPtr(i));
      if (s.plif)
        std::fill_n(c.outPtr(grads), s.plifW->numel(), 0.0f);
      callGenerated(c, fn, std::move(args), grads + 1);
      return;
    }
  const float *vBefore = s.plif ? c.inPtr(grads + 1) : nullptr;
  // dL/dk per feature (plif), reduced over the batch in double.
  std::vector<double> gk(s.plif ? static_cast<size_t>(s.F) : 0, 0.0);
  bool decayInput = c.attr("decay_input", true);
  const float *gs = c.inPtr(0), *giNext = s.cuba ? c.inPtr(1) : nullptr;
  const float *gvNext = c.inPtr(grads - 1), *hs = c.inPtr(grads);
  float *gx = c.outPtr(0), *gi = s.cuba ? c.outPtr(1) : nullptr;
  float *gv = c.outPtr(grads - 1);
  int64_t F = s.F, B = s.N / s.F;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t f = 0; f < F; ++f) {
      int64_t at = b * F + f;
      float h = hs[at], gh;
      if (s.li) {
        gh = gs[at] + gvNext[at];
      } else {
        float sg = surrogateGrad(s, h, s.vth[f]);
        bool spike = fires(s, h, s.vth[f]);
        float dvdh;
        if (!s.soft) {
          dvdh = spike ? 0.0f : 1.0f;
          if (!s.detachReset)
            dvdh += (s.vreset[f] - h) * sg;
        } else {
          dvdh = s.detachReset ? 1.0f : 1.0f - s.vth[f] * sg;
        }
        gh = gs[at] * sg + gvNext[at] * dvdh;
      }
      gv[at] = gh * (1.0f - s.k[f]);
      float gin = s.c[f] * gh;
      if (s.cuba) {
        float g = gin + giNext[at];
        gin = s.csyn[f] * g;
        gi[at] = g * (1.0f - s.ksyn[f]);
      }
      gx[at] = gin;
      if (s.plif) {
        float dk = decayInput ? (h - vBefore[at]) / s.k[f]
                              : s.vleak[f] - vBefore[at];
        gk[f] += static_cast<double>(gh) * dk;
      }
    }
  if (s.plif)
    writePlifGrad(c, s, gk, grads);
}

} // namespace cpu
} // namespace snnrt
