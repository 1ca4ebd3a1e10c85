//===- CpuOps.cpp - the CPU forward ops and the op dispatch ---------------===//
//
// GEMMs (linear, convolution over column buffers) go through CBLAS
// (OpenBLAS); the bias, im2col and layout copies around them, the
// elementwise ops, dropout, pooling, batch norm, the losses and the
// optimizer updates are compiler-generated code of the module's CPU kernel
// library, run by name. Backward and neuron ops live in their own files
// (CpuOpContext.h lists them).
//
//===----------------------------------------------------------------------===//

#include "CpuOpContext.h"
#include "HostKernels.h"
#include "snnrt/BlasCore.h"
#include "snnrt/CpuThreads.h"

#ifdef SNNRT_HAVE_CBLAS
#include <cblas.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using nlohmann::json;

namespace snnrt {
namespace cpu {

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const float *a, const float *b, float beta, float *c) {
#ifdef SNNRT_HAVE_CBLAS
  warnIfGenericBlasCore();
  int64_t lda = transA ? m : k, ldb = transB ? k : n;
  // C's rows [i0, i1) and columns [j0, j1).
  auto slice = [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, i1 - i0, j1 - j0, k, 1.0f,
                a + (transA ? i0 : i0 * k), lda, b + (transB ? j0 * k : j0),
                ldb, beta, c + i0 * n + j0, n);
  };
  // Split over the runtime's threads (CpuThreads.h) into a grid of tiles of
  // C, at least 32 x 32 each and at most one per thread, the most tiles
  // (then the squarest); GEMMs under ~1 MFLOP stay whole.
  int threads = splitsGemms() ? getCpuThreads() : 1;
  constexpr int64_t kMinTile = 32;
  int64_t rowParts = 1, colParts = 1;
  if (threads > 1 && 2 * m * n * k >= (int64_t(1) << 20)) {
    auto skew = [&](int64_t rr, int64_t cc) {
      return std::abs(m / rr - n / cc);
    };
    int64_t maxRowParts =
        std::max<int64_t>(std::min<int64_t>(threads, m / kMinTile), 1);
    for (int64_t r = 1; r <= maxRowParts; ++r) {
      int64_t c = std::min<int64_t>(threads / r,
                                    std::max<int64_t>(n / kMinTile, 1));
      if (r * c > rowParts * colParts ||
          (r * c == rowParts * colParts && skew(r, c) < skew(rowParts, colParts)))
        rowParts = r, colParts = c;
    }
  }
  if (rowParts * colParts == 1) {
    slice(0, m, 0, n);
    return;
  }
  parallelFor(rowParts * colParts, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      auto [i0, i1] = getChunkRange(m, rowParts, t / colParts);
      auto [j0, j1] = getChunkRange(n, colParts, t % colParts);
      slice(i0, i1, j0, j1);
    }
  });
#else
  // A build without BLAS (e.g. on a GPU server) stays correct, just slower.
  for (int64_t i = 0; i < m; ++i) {
    float *row = c + i * n;
    for (int64_t j = 0; j < n; ++j)
      row[j] = beta == 0.0f ? 0.0f : beta * row[j];
    for (int64_t p = 0; p < k; ++p) {
      float av = transA ? a[p * m + i] : a[i * k + p];
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

const TensorInfo &Ctx::in(size_t i) const {
  if (i >= op.in.size())
    fail("needs at least " + std::to_string(i + 1) + " inputs, has " +
         std::to_string(op.in.size()));
  return m.tensor(op.in[i]);
}

const TensorInfo &Ctx::out(size_t i) const {
  if (i >= op.out.size())
    fail("needs at least " + std::to_string(i + 1) + " outputs, has " +
         std::to_string(op.out.size()));
  return m.tensor(op.out[i]);
}

void Ctx::arity(size_t minIn, size_t maxIn, size_t minOut,
                size_t maxOut) const {
  auto range = [](size_t lo, size_t hi) {
    return lo == hi ? std::to_string(lo)
                    : std::to_string(lo) + " to " + std::to_string(hi);
  };
  if (op.in.size() < minIn || op.in.size() > maxIn)
    fail("takes " + range(minIn, maxIn) + " inputs, got " +
         std::to_string(op.in.size()));
  if (op.out.size() < minOut || op.out.size() > maxOut)
    fail("has " + range(minOut, maxOut) + " outputs, got " +
         std::to_string(op.out.size()));
}

void Ctx::expectElements(const TensorInfo &t, size_t n,
                         const char *what) const {
  if (t.numel() != n)
    fail("tensor '" + t.name + "' " + t.shapeString() + " has " +
         std::to_string(t.numel()) + " elements, expected " +
         std::to_string(n) + " (" + what + ")");
}

std::vector<int64_t> Ctx::pair(const char *name,
                               std::vector<int64_t> fallback) const {
  auto v = attr<std::vector<int64_t>>(name, fallback);
  if (v.size() != 2)
    fail(std::string("attribute '") + name + "' must have 2 values");
  return v;
}

GradOut::GradOut(const Ctx &c, float *dst, size_t n)
    : dst(dst), n(n), acc(c.accumulate()) {
  if (acc)
    tmp.assign(n, 0.0f);
}

void GradOut::commit() {
  if (acc)
    for (size_t i = 0; i < n; ++i)
      dst[i] += tmp[i];
}

float counterUniform(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

ConvGeometry::ConvGeometry(const Ctx &c, const TensorInfo &x,
                           const TensorInfo &w, const TensorInfo &y) {
  size_t r = x.shape.size();
  channelsLast = c.attr("channels_last", false);
  if (r < 3 || w.shape.size() != 4 || y.shape.size() != r)
    c.fail(std::string(channelsLast
                           ? "channels_last expects x [..., H, W, C], w [O, "
                             "KH, KW, C]"
                           : "expects x [..., C, H, W], w [O, C/groups, KH, "
                             "KW]") +
           " and y of x's rank; got x " + x.shapeString() + ", w " +
           w.shapeString() + ", y " + y.shapeString());
  if (channelsLast) {
    H = x.shape[r - 3], W = x.shape[r - 2], C = x.shape[r - 1];
    O = w.shape[0], KH = w.shape[1], KW = w.shape[2], Cg = w.shape[3];
    OH = y.shape[r - 3], OW = y.shape[r - 2];
  } else {
    C = x.shape[r - 3], H = x.shape[r - 2], W = x.shape[r - 1];
    O = w.shape[0], Cg = w.shape[1], KH = w.shape[2], KW = w.shape[3];
    OH = y.shape[r - 2], OW = y.shape[r - 1];
  }
  samples = static_cast<int64_t>(x.numel()) / (C * H * W);
  stride = c.pair("stride", {1, 1});
  // [top, left] on both sides, or [top, left, bottom, right].
  std::vector<int64_t> padding =
      c.attr<std::vector<int64_t>>("padding", {0, 0});
  if ((padding.size() != 2 && padding.size() != 4) ||
      std::any_of(padding.begin(), padding.end(),
                  [](int64_t p) { return p < 0; }))
    c.fail("'padding' must be 2 or 4 non-negative integers");
  pad = {padding[0], padding[1]};
  padEnd = padding.size() == 4 ? std::vector<int64_t>{padding[2], padding[3]}
                               : pad;
  dil = c.pair("dilation", {1, 1});
  groups = c.attr<int64_t>("groups", 1);
  if (groups <= 0 || C % groups || O % groups || C / groups != Cg ||
      y.shape[channelsLast ? r - 1 : r - 3] != O || (channelsLast && groups != 1))
    c.fail("channels do not match: x has " + std::to_string(C) +
           ", w " + w.shapeString() + ", groups " + std::to_string(groups) +
           ", y " + y.shapeString());
  Og = O / groups;
  auto expected = [](int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1,
                     int64_t d) {
    return (in + p0 + p1 - d * (k - 1) - 1) / s + 1;
  };
  if (OH != expected(H, KH, stride[0], pad[0], padEnd[0], dil[0]) ||
      OW != expected(W, KW, stride[1], pad[1], padEnd[1], dil[1]))
    c.fail("output " + y.shapeString() +
           " does not match the input, kernel, stride, padding and dilation");
}

size_t scratchCount(const Ctx &c) {
  auto it = c.op.attrs.find("scratch");
  return it != c.op.attrs.end() && it->is_array() ? it->size() : 0;
}

ConvColumns::ConvColumns(const Ctx &c, const ConvGeometry &g)
    : op([&]() -> const json & {
        auto it = c.op.attrs.find("columns");
        if (it == c.op.attrs.end() || !it->is_object())
          c.fail("a convolution needs its \"columns\" (the generated "
                 "im2col kernels); recompile the module with this snn-opt");
        return *it;
      }()) {
  images = op.value("images", int64_t(0));
  if (images <= 0 || g.samples % images)
    c.fail("\"columns\".images must divide the " +
           std::to_string(g.samples) + " images");
  auto scratch = [&](const char *name, size_t n) {
    if (!op.contains(name) || !op[name].is_number_integer())
      c.fail(std::string("\"columns\" needs the tensor id \"") + name + "\"");
    const TensorInfo &t = c.m.tensor(op[name].get<int>());
    c.expectElements(t, n, name);
    return c.get(t.id);
  };
  col = scratch("col", static_cast<size_t>(g.C * g.KH * g.KW * images *
                                            g.cols()));
  // NHWC GEMMs write the activations directly: no `rows`.
  rows = g.channelsLast
             ? nullptr
             : scratch("rows", static_cast<size_t>(g.O * images * g.cols()));
}

void ConvColumns::run(const Ctx &c, const char *name, const float *from,
                      float *to) const {
  if (!op.contains(name))
    c.fail(std::string("\"columns\" has no launch \"") + name + "\"");
  launchKernelAt(c, op[name], {const_cast<float *>(from), to});
}

namespace {

void linear(const Ctx &c) {
  bool hasBias = c.attr("has_bias", false);
  if (c.attr("unless_event_path", false)) {
    // The dense path of an event-driven layer: the decision (last input,
    // two i32 words) says whether the event-driven kernel computed y.
    c.arity(hasBias ? 4 : 3, hasBias ? 4 : 3, 1, 1);
    int32_t decision[2];
    std::memcpy(decision, c.inPtr(hasBias ? 3 : 2), sizeof(decision));
    if (decision[1] != 0)
      return;
  } else {
    c.arity(2, 3, 1, 1);
  }
  const TensorInfo &x = c.in(0), &w = c.in(1);
  if (w.shape.size() != 2)
    c.fail("weight '" + w.name + "' must be [N, K], got " + w.shapeString());
  int64_t n = w.shape[0], k = w.shape[1];
  int64_t rows = static_cast<int64_t>(x.numel()) / k;
  c.expectElements(x, static_cast<size_t>(rows * k), "rows of K inputs");
  c.expectElements(c.out(0), static_cast<size_t>(rows * n), "rows of N outputs");
  gemm(false, true, rows, n, k, c.inPtr(0), c.inPtr(1), 0.0f, c.outPtr(0));
  runOpLaunches(c);
}

/// One GEMM per group over a chunk's columns, written [O, images * P],
/// then copied to y's [images, O, P]; the bias after the last chunk.
/// NHWC: y[images * P, O] = col[images * P, KH*KW*C] wᵀ, in place.
void conv2d(const Ctx &c) {
  size_t scratch = scratchCount(c);
  if (c.attr("unless_event_path", false)) {
    // The dense path of an event-driven convolution: the decision (last
    // input, two i32 words) says whether event_conv2d computed y.
    size_t ins = c.attr("has_bias", false) ? 4 : 3;
    c.arity(ins, ins, 1 + scratch, 1 + scratch);
    int32_t decision[2];
    std::memcpy(decision, c.inPtr(ins - 1), sizeof(decision));
    if (decision[1] != 0)
      return;
  } else {
    c.arity(2, 3, 1 + scratch, 1 + scratch);
  }
  ConvGeometry g(c, c.in(0), c.in(1), c.out(0));
  ConvColumns plan(c, g);
  int64_t cols = plan.images * g.cols(), kdim = g.kdim();
  const float *x = c.inPtr(0), *w = c.inPtr(1);
  float *y = c.outPtr(0);
  for (int64_t s = 0; s < g.samples; s += plan.images) {
    plan.run(c, "im2col", x + s * g.C * g.H * g.W, plan.col);
    if (g.channelsLast) {
      gemm(false, true, cols, g.O, kdim, plan.col, w, 0.0f,
           y + s * g.O * g.cols());
      continue;
    }
    for (int64_t grp = 0; grp < g.groups; ++grp)
      gemm(false, false, g.Og, cols, kdim, w + grp * g.Og * kdim,
           plan.col + grp * kdim * cols, 0.0f, plan.rows + grp * g.Og * cols);
    plan.run(c, "channels_last", plan.rows, y + s * g.O * g.cols());
  }
  runOpLaunches(c);
}

} // namespace

void launchKernelAt(const Ctx &c, const json &launch,
                    std::vector<void *> pointers) {
  std::string name = launch.value("kernel", std::string());
  if (name.empty())
    c.fail("a kernel launch needs \"kernel\" (a name)");
  findOpKernel(c.m, name)(pointers.data());
}

namespace {
/// One launch of a generated kernel of the module's CPU library
/// (docs/artifact-format.md, "Generated op kernels"): one pointer per tensor
/// of `args`, then the run values when the launch says `run_values`.
void launchGeneratedKernel(const Ctx &c, const json &launch) {
  auto args = launch.find("args");
  if (args == launch.end() || !args->is_array())
    c.fail("a kernel launch needs \"kernel\" (a name) and \"args\" (tensor "
           "ids)");
  std::vector<void *> pointers;
  for (const json &id : *args) {
    if (!id.is_number_integer())
      c.fail("\"args\" must be tensor ids");
    pointers.push_back(c.get(c.m.tensor(id.get<int>()).id));
  }
  // Word 0: the learning rate (f32 bits), word 1: the 1-based step, words
  // 2 and 3: the step's random seed (low, high).
  uint32_t run[4] = {0, 0, static_cast<uint32_t>(c.run.seed),
                     static_cast<uint32_t>(c.run.seed >> 32)};
  if (launch.value("run_values", false)) {
    std::memcpy(&run[0], &c.run.learningRate, sizeof(float));
    run[1] = static_cast<uint32_t>(c.run.step);
    pointers.push_back(run);
  }
  // Outputs that the kernel's ranges accumulate into (a counting
  // compact_rows' decision: counts and a ticket) start at zero.
  auto zero = c.op.attrs.find("zero_outputs");
  if (zero != c.op.attrs.end() && zero->is_array())
    for (const json &id : *zero) {
      if (!id.is_number_integer() || std::find(c.op.out.begin(), c.op.out.end(),
                                               id.get<int>()) == c.op.out.end())
        c.fail("\"zero_outputs\" must be true/false or a list of the op's "
               "outputs");
      const TensorInfo &t = c.m.tensor(id.get<int>());
      std::memset(c.get(t.id), 0,
                  static_cast<size_t>(t.numel()) * dtypeSize(t.dtype));
    }
  launchKernelAt(c, launch, std::move(pointers));
}

/// A `kernel` op: its own kernel, or the kernels of its `launches` in turn.
void generatedKernel(const Ctx &c) {
  auto launches = c.op.attrs.find("launches");
  if (launches == c.op.attrs.end())
    return launchGeneratedKernel(c, c.op.attrs);
  if (!launches->is_array() || launches->empty())
    c.fail("\"launches\" must be a non-empty list of kernel launches");
  for (const json &launch : *launches)
    launchGeneratedKernel(c, launch);
}

} // namespace

void runOpLaunches(const Ctx &c) {
  auto launches = c.op.attrs.find("launches");
  if (c.attr("has_bias", false) && launches == c.op.attrs.end())
    c.fail("a layer with a bias needs its \"launches\" (the generated bias "
           "kernel); recompile the module with this snn-opt");
  if (launches == c.op.attrs.end())
    return;
  if (!launches->is_array())
    c.fail("\"launches\" must be a list of kernel launches");
  for (const json &launch : *launches)
    launchGeneratedKernel(c, launch);
}
} // namespace cpu

void runCpuOp(const Module &module, const Op &op, size_t index,
              const TensorLookup &tensor, const RunContext &run) {
  using namespace cpu;
  Ctx c{module, op, index, tensor, run, {}};
  const std::string &k = op.kind;
  if ((k == "neuron" || k == "neuron_bwd") && op.attrs.contains("spike_count"))
    return runCountingNeuron(c);
  if (k == "linear")
    return linear(c);
  if (k == "conv2d")
    return conv2d(c);
  if (k == "neuron")
    return runNeuron(c);
  if (k == "neuron_step")
    return runNeuronStep(c);
  if (k == "time_loop")
    return runTimeLoop(c);
  if (k == "neuron_step_bwd")
    return runNeuronStepBackward(c);
  if (k == "time_slice")
    return runTimeSlice(c);
  if (k == "time_stack")
    return runTimeStack(c);
  if (k == "neuron_bwd")
    return runNeuronBackward(c);
  if (k == "kernel")
    return generatedKernel(c);
  if (k == "linear_bwd" || k == "conv2d_bwd")
    return runLayerBackward(c);
  c.fail("unknown op kind; this runtime implements the ops of "
         "docs/artifact-format.md (recompile the module with a matching "
         "snn-opt)");
}

} // namespace snnrt
