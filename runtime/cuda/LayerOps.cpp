//===- LayerOps.cpp - stateless layers: GEMMs, conv ----------------------===//
//
// Every stateless layer runs once over all T*B rows: cuBLAS or cuDNN, then
// the op's generated `launches` (the bias, its gradient). A convolution
// that cuDNN cannot run goes through the op's `columns`: per chunk of
// images the generated im2col, one cuBLAS GEMM per group, the generated
// layout copy (and col2im for gx).
//
//===----------------------------------------------------------------------===//

#include "CudaOps.h"
#include "kernels/KernelArgs.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <tuple>

using namespace snnrt::cuda;

namespace {

int toInt(const OpCall &call, long long v, const char *what) {
  if (v < 0 || v > INT_MAX)
    opError(call, std::string(what) + " = " + std::to_string(v) +
                      " exceeds what one cuBLAS call supports (2^31-1)");
  return static_cast<int>(v);
}

void expectElements(const OpCall &call, const DeviceTensor &t, int64_t n,
                    const std::string &why) {
  if (t.numel() != n)
    opError(call, "tensor " + t.name + " has " + std::to_string(t.numel()) +
                      " elements; expected " + std::to_string(n) + " (" + why +
                      ")");
}

/// The op's scratch tensors (after its results).
size_t scratchCount(const OpCall &call) {
  return call.op.contains("scratch") && call.op["scratch"].is_array()
             ? call.op["scratch"].size()
             : 0;
}

/// has_bias, need_gx, accumulate of linear_bwd/conv2d_bwd (in: gy, x, w;
/// out: gx?, gw, gb?, scratch), with their arity checked.
std::tuple<bool, bool, bool> weightGradFlags(const OpCall &call) {
  bool hasBias = attrBool(call, "has_bias", false);
  bool needGx = attrBool(call, "need_gx", true);
  size_t outs = 1 + hasBias + needGx + scratchCount(call);
  // The dense path of an event-driven linear backward also reads the
  // decision (a 4th input).
  size_t ins = 3 + (attrBool(call, "unless_event_path", false) ? 1 : 0);
  expectArity(call, ins, ins, outs, outs);
  return {hasBias, needGx, attrBool(call, "accumulate", false)};
}

//===-- linear ------------------------------------------------------------===//

struct LinearDims {
  long long m, n, k;
};

LinearDims linearDims(const OpCall &call, const DeviceTensor &x,
                      const DeviceTensor &w) {
  if (w.shape.size() != 2)
    opError(call, "weight " + w.name + " must be [N, K]");
  LinearDims d{0, w.shape[0], w.shape[1]};
  if (d.k <= 0 || x.numel() % d.k != 0)
    opError(call, "input " + x.name + " (" + std::to_string(x.numel()) +
                      " elements) is not a list of rows of K = " +
                      std::to_string(d.k));
  d.m = x.numel() / d.k;
  return d;
}

void runDenseLinear(CudaDevice &dev, OpCall &call, bool hasBias) {
  const DeviceTensor &x = call.in[0], &w = call.in[1], &y = call.out[0];
  LinearDims d = linearDims(call, x, w);
  expectElements(call, y, d.m * d.n, "rows x N");
  RowMajorGemm g;
  g.transB = true; // y = x wᵀ
  g.m = toInt(call, d.m, "rows");
  g.n = toInt(call, d.n, "N");
  g.k = toInt(call, d.k, "K");
  g.a = x.f32(), g.lda = d.k;
  g.b = w.f32(), g.ldb = d.k;
  g.c = y.f32(), g.ldc = d.n;
  dev.gemm(g, call.where);
  if (hasBias)
    expectElements(call, call.in[2], d.n, "bias of N");
  runOpLaunches(dev, call);
}

void runLinear(CudaDevice &dev, OpCall &call) {
  bool hasBias = attrBool(call, "has_bias", call.in.size() == 3);
  bool unlessEventPath = attrBool(call, "unless_event_path", false);
  size_t inputs = (hasBias ? 3 : 2) + (unlessEventPath ? 1 : 0);
  expectArity(call, inputs, inputs, 1, 1);
  if (!unlessEventPath)
    return runDenseLinear(dev, call, hasBias);
  // An event-driven layer's dense path reads the decision (last input)
  // on the device: a conditional graph node when the program is captured,
  // else the GEMM runs and overwrites the event-driven kernel's output with
  // the same function (docs/artifact-format.md).
  expectElements(call, call.in.back(), 2, "the decision of an event-driven "
                                          "layer");
  dev.runUnlessEventPath(
      call.in.back().ptr, [&] { runDenseLinear(dev, call, hasBias); },
      call.where);
}

void runLinearBackward(CudaDevice &dev, OpCall &call) {
  auto [hasBias, needGx, accumulate] = weightGradFlags(call);
  const DeviceTensor &gy = call.in[0], &x = call.in[1], &w = call.in[2];
  LinearDims d = linearDims(call, x, w);
  expectElements(call, gy, d.m * d.n, "rows x N");
  size_t o = 0;
  float beta = accumulate ? 1.0f : 0.0f;
  const DeviceTensor *gx = needGx ? &call.out[o++] : nullptr;
  if (gx)
    expectElements(call, *gx, d.m * d.k, "rows x K");
  const DeviceTensor &gw = call.out[o++];
  expectElements(call, gw, d.n * d.k, "like the weight");
  long long chunks = call.op.value("gw_chunks", 0LL);
  if (chunks > 1 && (d.m % chunks != 0 || scratchCount(call) != 1))
    opError(call, "'gw_chunks' = " + std::to_string(chunks) +
                      " must divide the " + std::to_string(d.m) +
                      " rows and come with one scratch tensor");
  if (chunks > 1)
    expectElements(call, call.out.back(), chunks * d.n * d.k + chunks,
                   "gw_chunks x N x K partials and gw_chunks ones");
  auto gemms = [&] {
    if (gx) {
      RowMajorGemm g; // gx = gy w
      g.m = toInt(call, d.m, "rows"), g.n = toInt(call, d.k, "K");
      g.k = toInt(call, d.n, "N");
      g.a = gy.f32(), g.lda = d.n;
      g.b = w.f32(), g.ldb = d.k;
      g.c = gx->f32(), g.ldc = d.k, g.beta = beta;
      dev.gemm(g, call.where);
    }
    RowMajorGemm g; // gw = gyᵀ x: one GEMM over all rows
    g.transA = true;
    g.m = toInt(call, d.n, "N"), g.n = toInt(call, d.k, "K");
    g.k = toInt(call, d.m, "rows");
    g.a = gy.f32(), g.lda = d.n;
    g.b = x.f32(), g.ldb = d.k;
    g.c = gw.f32(), g.ldc = d.k, g.beta = beta;
    if (chunks > 1) {
      // A thin gw split over the rows (the compiler's `gw_chunks`): the
      // partial gw of each chunk as a strided batch, then their sum as
      // ones[1, P] partials[P, N K] (ones after the partials).
      float *partials = call.out.back().f32();
      float *ones = partials + chunks * d.n * d.k;
      dev.fillWords(reinterpret_cast<CUdeviceptr>(ones), 0x3f800000u,
                    static_cast<std::size_t>(chunks), call.where);
      g.k = toInt(call, d.m / chunks, "rows per chunk");
      g.c = partials, g.beta = 0.0f;
      g.batch = toInt(call, chunks, "gw_chunks");
      g.strideA = d.m / chunks * d.n, g.strideB = d.m / chunks * d.k;
      g.strideC = d.n * d.k;
      dev.gemm(g, call.where);
      RowMajorGemm sum;
      sum.m = 1, sum.n = toInt(call, d.n * d.k, "N K");
      sum.k = toInt(call, chunks, "gw_chunks");
      sum.a = ones, sum.lda = chunks;
      sum.b = partials, sum.ldb = d.n * d.k;
      sum.c = gw.f32(), sum.ldc = d.n * d.k, sum.beta = beta;
      dev.gemm(sum, call.where);
      return;
    }
    dev.gemm(g, call.where);
  };
  if (attrBool(call, "unless_event_path", false)) {
    // An event-driven backward's dense path: the GEMMs as the forward's
    // (runLinear), the bias gradient below always.
    expectElements(call, call.in.back(), 2,
                   "the decision of an event-driven backward");
    dev.runUnlessEventPath(call.in.back().ptr, gemms, call.where);
  } else {
    gemms();
  }
  if (hasBias)
    expectElements(call, call.out[o], d.n, "like the bias");
  runOpLaunches(dev, call); // gb
}

//===-- convolution windows ----------------------------------------------===//

/// The window of a conv op over x [M, C, H, W] (the last three dims; [M,
/// H, W, C] when the op is channels_last). `asymmetric` (convolutions) is
/// set when a dim pads its two sides differently.
SnnConvShape windowShape(const OpCall &call, const DeviceTensor &x,
                         int64_t kh, int64_t kw, bool dilated,
                         const char *kernelAttr, bool *asymmetric = nullptr) {
  bool last = attrBool(call, "channels_last", false);
  if (x.shape.size() < 4)
    opError(call, "input " + x.name + " must be " +
                      (last ? "[rows..., H, W, C]" : "[rows..., C, H, W]"));
  SnnConvShape s{};
  size_t r = x.shape.size();
  if (last) {
    s.height = x.shape[r - 3], s.width = x.shape[r - 2];
    s.channels = x.shape[r - 1];
  } else {
    s.channels = x.shape[r - 3], s.height = x.shape[r - 2];
    s.width = x.shape[r - 1];
  }
  s.images = x.numel() / (s.channels * s.height * s.width);
  s.kernelH = kh, s.kernelW = kw;
  std::vector<int64_t> stride =
      call.op.contains("stride") ? attrInts(call, "stride", 2)
                                 : std::vector<int64_t>{kh, kw};
  // Convolutions may pad asymmetrically: [top, left, bottom, right].
  bool fourPads = dilated && call.op.contains("padding") &&
                  call.op["padding"].is_array() &&
                  call.op["padding"].size() == 4;
  std::vector<int64_t> pad = call.op.contains("padding")
                                 ? attrInts(call, "padding", fourPads ? 4 : 2)
                                 : std::vector<int64_t>{0, 0};
  if (!fourPads)
    pad = {pad[0], pad[1], pad[0], pad[1]};
  if (asymmetric)
    *asymmetric = pad[0] != pad[2] || pad[1] != pad[3];
  std::vector<int64_t> dil = dilated && call.op.contains("dilation")
                                 ? attrInts(call, "dilation", 2)
                                 : std::vector<int64_t>{1, 1};
  s.strideH = stride[0], s.strideW = stride[1];
  s.padH = pad[0], s.padW = pad[1], s.dilH = dil[0], s.dilW = dil[1];
  if (kh <= 0 || kw <= 0 || s.strideH <= 0 || s.strideW <= 0 || s.padH < 0 ||
      s.padW < 0 || pad[2] < 0 || pad[3] < 0 || s.dilH <= 0 || s.dilW <= 0)
    opError(call, std::string("'") + kernelAttr +
                      "', 'stride' and 'dilation' must be positive and "
                      "'padding' non-negative");
  // The kernels index with the leading pads; the trailing ones only size
  // the output.
  s.outHeight =
      (s.height + s.padH + pad[2] - s.dilH * (kh - 1) - 1) / s.strideH + 1;
  s.outWidth =
      (s.width + s.padW + pad[3] - s.dilW * (kw - 1) - 1) / s.strideW + 1;
  if (s.outHeight <= 0 || s.outWidth <= 0)
    opError(call, "the window is larger than the padded input " + x.name);
  s.groupChannels = s.channels;
  return s;
}

struct ConvSetup {
  SnnConvShape shape;
  /// Padding differs between the two sides of a dim: cuDNN cannot.
  bool asymmetric = false;
  /// NHWC activations, an [O, KH, KW, C] weight (groups = 1).
  bool channelsLast = false;
  long long out, groups, groupOut, groupK, pixels;
};

ConvSetup convSetup(const OpCall &call, const DeviceTensor &x,
                    const DeviceTensor &w) {
  ConvSetup c;
  c.channelsLast = attrBool(call, "channels_last", false);
  if (w.shape.size() != 4)
    opError(call, "weight " + w.name + " must be " +
                      (c.channelsLast ? "[O, KH, KW, C] (channels_last)"
                                      : "[O, C/groups, KH, KW]"));
  // The kernel's KH, KW and the weight's channels per group.
  int64_t kh = c.channelsLast ? w.shape[1] : w.shape[2];
  int64_t kw = c.channelsLast ? w.shape[2] : w.shape[3];
  int64_t wc = c.channelsLast ? w.shape[3] : w.shape[1];
  c.shape = windowShape(call, x, kh, kw, true, "kernel", &c.asymmetric);
  c.groups = static_cast<long long>(attrNumber(call, "groups", 1));
  c.out = w.shape[0];
  if (c.groups <= 0 || c.shape.channels % c.groups || c.out % c.groups ||
      wc * c.groups != c.shape.channels || (c.channelsLast && c.groups != 1))
    opError(call, "weight " + w.name + " [" + std::to_string(w.shape[0]) +
                      ", " + std::to_string(w.shape[1]) + ", ...] does not "
                      "fit " + std::to_string(c.shape.channels) +
                      " input channels in " + std::to_string(c.groups) +
                      " groups");
  c.shape.groupChannels = c.shape.channels / c.groups;
  c.groupOut = c.out / c.groups;
  c.groupK = c.shape.groupChannels * c.shape.kernelH * c.shape.kernelW;
  c.pixels = c.shape.outHeight * c.shape.outWidth;
  return c;
}

/// The op's `columns`: chunks of `images` images through the scratch
/// tensors col [C*KH*KW, images*P] and rows [O, images*P].
struct Columns {
  const OpCall &call;
  const nlohmann::json &plan;
  long long images;
  DeviceTensor col, rows;

  Columns(OpCall &call, const ConvSetup &c)
      : call(call), plan(columnsOf(call)) {
    images = plan.value("images", 0LL);
    if (images <= 0 || c.shape.images % images)
      opError(call, "\"columns\".images must divide the " +
                        std::to_string(c.shape.images) + " images");
    col = scratch("col", c.groupK * c.groups * images * c.pixels);
    // NHWC GEMMs read and write the activations in place: no `rows`.
    if (!c.channelsLast)
      rows = scratch("rows", c.out * images * c.pixels);
  }
  static const nlohmann::json &columnsOf(const OpCall &call) {
    if (!call.op.contains("columns") || !call.op["columns"].is_object())
      opError(call, "a convolution without cuDNN needs its \"columns\" "
                    "(the generated im2col kernels); recompile the module "
                    "with this snn-opt");
    return call.op["columns"];
  }
  DeviceTensor scratch(const char *name, long long n) const {
    if (!plan.contains(name) || !plan[name].is_number_integer())
      opError(call, std::string("\"columns\" needs the tensor id \"") +
                        name + "\"");
    DeviceTensor t = call.tensor(plan[name].get<int64_t>());
    expectElements(call, t, n, name);
    return t;
  }
  /// The plan's kernel `name` on (from, to).
  void run(CudaDevice &dev, OpCall &c, const char *name, const float *from,
           float *to) const {
    if (!plan.contains(name))
      opError(c, std::string("\"columns\" has no launch \"") + name + "\"");
    launchKernelAt(dev, c, plan[name],
                   {reinterpret_cast<CUdeviceptr>(from),
                    reinterpret_cast<CUdeviceptr>(to)});
  }
};

/// cuDNN when it is loaded, the tensors fit its 32-bit sizes and the padding
/// is symmetric; else im2col + cuBLAS.
CudnnConv *cudnnFor(CudaDevice &dev, const ConvSetup &c) {
  const SnnConvShape &s = c.shape;
  if (c.asymmetric)
    return nullptr;
  long long largest = std::max(s.images * s.channels * s.height * s.width,
                               s.images * c.out * c.pixels);
  return largest <= INT_MAX ? dev.cudnn() : nullptr;
}

ConvProblem convProblem(const ConvSetup &c) {
  ConvProblem p;
  p.shape = c.shape;
  p.out = c.out;
  p.groups = c.groups;
  p.channelsLast = c.channelsLast;
  return p;
}

/// A row-major GEMM of the NHWC column path (no groups): m x n = (m x k)
/// (k x n), each operand stored row-major as it is read, or transposed.
RowMajorGemm pixelGemm(const OpCall &call, bool transA, bool transB,
                       long long m, long long n, long long k, const float *a,
                       const float *b, float *out, float beta) {
  RowMajorGemm g;
  g.transA = transA, g.transB = transB;
  g.m = toInt(call, m, "GEMM rows");
  g.n = toInt(call, n, "GEMM columns");
  g.k = toInt(call, k, "GEMM depth");
  g.a = a, g.lda = transA ? m : k;
  g.b = b, g.ldb = transB ? k : n;
  g.c = out, g.ldc = n;
  g.beta = beta;
  return g;
}


void runConv(CudaDevice &dev, OpCall &call) {
  bool hasBias = attrBool(call, "has_bias", call.in.size() == 3);
  // An event-driven layer's dense path also reads the decision (last
  // input). The GEMM runs whatever it says: cuBLAS cannot read it without a
  // host synchronisation, so the event-driven kernel's output, when it ran,
  // is overwritten with the same function (docs/artifact-format.md).
  size_t inputs = (hasBias ? 3 : 2) +
                  (attrBool(call, "unless_event_path", false) ? 1 : 0);
  size_t outputs = 1 + scratchCount(call);
  expectArity(call, inputs, inputs, outputs, outputs);
  const DeviceTensor &x = call.in[0], &w = call.in[1], &y = call.out[0];
  ConvSetup c = convSetup(call, x, w);
  const SnnConvShape &s = c.shape;
  expectElements(call, y, s.images * c.out * c.pixels, "M x O x OH x OW");
  if (hasBias)
    expectElements(call, call.in[2], c.out, "bias of O");
  if (CudnnConv *cudnn = cudnnFor(dev, c)) {
    cudnn->forward(convProblem(c), x.f32(), w.f32(), y.f32(), call.where);
    runOpLaunches(dev, call);
    return;
  }
  Columns plan(call, c);
  long long inImage = s.channels * s.height * s.width;
  long long cols = plan.images * c.pixels;
  for (long long m0 = 0; m0 < s.images; m0 += plan.images) {
    plan.run(dev, call, "im2col", x.f32() + m0 * inImage, plan.col.f32());
    if (c.channelsLast) { // y[images*P, O] = col[images*P, K] wᵀ
      dev.gemm(pixelGemm(call, false, true, cols, c.out, c.groupK,
                         plan.col.f32(), w.f32(),
                         y.f32() + m0 * c.out * c.pixels, 0.0f),
               call.where);
      continue;
    }
    for (long long g = 0; g < c.groups; ++g) {
      // rows_g[Og, images*P] = w_g[Og, Kg] col_g[Kg, images*P]
      RowMajorGemm gm;
      gm.m = toInt(call, c.groupOut, "O/groups");
      gm.n = toInt(call, cols, "images*OH*OW");
      gm.k = toInt(call, c.groupK, "C/groups*KH*KW");
      gm.a = w.f32() + g * c.groupOut * c.groupK, gm.lda = c.groupK;
      gm.b = plan.col.f32() + g * c.groupK * cols, gm.ldb = cols;
      gm.c = plan.rows.f32() + g * c.groupOut * cols, gm.ldc = cols;
      dev.gemm(gm, call.where);
    }
    plan.run(dev, call, "channels_last", plan.rows.f32(),
             y.f32() + m0 * c.out * c.pixels);
  }
  runOpLaunches(dev, call);
}

void convBackwardColumns(CudaDevice &dev, OpCall &call, const ConvSetup &c,
                         const DeviceTensor *gx, const DeviceTensor &gw,
                         bool accumulate);

void runConvBackward(CudaDevice &dev, OpCall &call) {
  auto [hasBias, needGx, accumulate] = weightGradFlags(call);
  const DeviceTensor &gy = call.in[0], &x = call.in[1], &w = call.in[2];
  ConvSetup c = convSetup(call, x, w);
  const SnnConvShape &s = c.shape;
  expectElements(call, gy, s.images * c.out * c.pixels, "M x O x OH x OW");
  size_t o = 0;
  const DeviceTensor *gx = needGx ? &call.out[o++] : nullptr;
  const DeviceTensor &gw = call.out[o++];
  expectElements(call, gw, w.numel(), "like the weight");
  if (gx)
    expectElements(call, *gx, x.numel(), "like the input");
  if (hasBias)
    expectElements(call, call.out[o], c.out, "like the bias");
  if (CudnnConv *cudnn = cudnnFor(dev, c)) {
    ConvProblem p = convProblem(c);
    cudnn->backwardFilter(p, x.f32(), gy.f32(), gw.f32(), accumulate,
                          call.where);
    if (gx)
      cudnn->backwardData(p, gy.f32(), w.f32(), gx->f32(), accumulate,
                          call.where);
  } else {
    convBackwardColumns(dev, call, c, gx, gw, accumulate);
  }
  runOpLaunches(dev, call); // gb
}

/// gw and gx through the column buffers and cuBLAS: per chunk, gy as
/// [O, images*P], then per group gw (+)= gy_g colᵀ_g and the column
/// gradient w_gᵀ gy_g in place of col_g, scattered into gx by col2im.
void convBackwardColumns(CudaDevice &dev, OpCall &call, const ConvSetup &c,
                         const DeviceTensor *gx, const DeviceTensor &gw,
                         bool accumulate) {
  const DeviceTensor &gy = call.in[0], &x = call.in[1], &w = call.in[2];
  const SnnConvShape &s = c.shape;
  Columns plan(call, c);
  long long inImage = s.channels * s.height * s.width;
  long long cols = plan.images * c.pixels;
  for (long long m0 = 0; m0 < s.images; m0 += plan.images) {
    if (c.channelsLast) {
      // gw (+)= gyᵀ col; col = gy w, scattered into gx by col2im.
      const float *gyChunk = gy.f32() + m0 * c.out * c.pixels;
      plan.run(dev, call, "im2col", x.f32() + m0 * inImage, plan.col.f32());
      dev.gemm(pixelGemm(call, true, false, c.out, c.groupK, cols, gyChunk,
                         plan.col.f32(), gw.f32(),
                         (accumulate || m0 > 0) ? 1.0f : 0.0f),
               call.where);
      if (!gx)
        continue;
      dev.gemm(pixelGemm(call, false, false, cols, c.groupK, c.out, gyChunk,
                         w.f32(), plan.col.f32(), 0.0f),
               call.where);
      plan.run(dev, call, "col2im", plan.col.f32(), gx->f32() + m0 * inImage);
      continue;
    }
    plan.run(dev, call, "channels_first", gy.f32() + m0 * c.out * c.pixels,
             plan.rows.f32());
    plan.run(dev, call, "im2col", x.f32() + m0 * inImage, plan.col.f32());
    for (long long g = 0; g < c.groups; ++g) {
      const float *gyG = plan.rows.f32() + g * c.groupOut * cols;
      float *colG = plan.col.f32() + g * c.groupK * cols;
      RowMajorGemm gwG; // gw_g = gy_g colᵀ_g: all rows of the chunk at once
      gwG.transB = true;
      gwG.m = toInt(call, c.groupOut, "O/groups");
      gwG.n = toInt(call, c.groupK, "C/groups*KH*KW");
      gwG.k = toInt(call, cols, "images*OH*OW");
      gwG.a = gyG, gwG.lda = cols;
      gwG.b = colG, gwG.ldb = cols;
      gwG.c = gw.f32() + g * c.groupOut * c.groupK, gwG.ldc = c.groupK;
      gwG.beta = (accumulate || m0 > 0) ? 1.0f : 0.0f;
      dev.gemm(gwG, call.where);
      if (!gx)
        continue;
      RowMajorGemm gc; // col_g = w_gᵀ gy_g
      gc.transA = true;
      gc.m = toInt(call, c.groupK, "C/groups*KH*KW");
      gc.n = toInt(call, cols, "images*OH*OW");
      gc.k = toInt(call, c.groupOut, "O/groups");
      gc.a = w.f32() + g * c.groupOut * c.groupK, gc.lda = c.groupK;
      gc.b = gyG, gc.ldb = cols;
      gc.c = colG, gc.ldc = cols;
      dev.gemm(gc, call.where);
    }
    if (gx)
      plan.run(dev, call, "col2im", plan.col.f32(),
               gx->f32() + m0 * inImage);
  }
}

/// time_slice: step `index` of x[T, ...]; time_stack: N steps into y[N, ...]
/// (an unrolled recurrent loop's edges). Device-to-device copies.
void runTimeSlice(CudaDevice &dev, OpCall &call) {
  expectArity(call, 1, 1, 1, 1);
  const DeviceTensor &x = call.in[0], &y = call.out[0];
  long long index = static_cast<long long>(attrNumber(call, "index"));
  if (x.shape.empty() || index < 0 || index >= x.shape[0] ||
      x.numel() != x.shape[0] * y.numel())
    opError(call, "needs x [T, ...], y [...] and 0 <= index < T");
  dev.copyOnDevice(y.ptr, x.ptr + index * y.numel() * sizeof(float),
                   y.numel() * sizeof(float), call.where);
}

void runTimeStack(CudaDevice &dev, OpCall &call) {
  expectArity(call, 1, 1 << 20, 1, 1);
  const DeviceTensor &y = call.out[0];
  int64_t n = call.in[0].numel();
  if (y.numel() != n * static_cast<int64_t>(call.in.size()))
    opError(call, "the result must hold every step");
  for (size_t t = 0; t < call.in.size(); ++t) {
    if (call.in[t].numel() != n)
      opError(call, "steps of different sizes");
    dev.copyOnDevice(y.ptr + t * n * sizeof(float), call.in[t].ptr,
                     n * sizeof(float), call.where);
  }
}
} // namespace

bool snnrt::cuda::runLayerOp(CudaDevice &dev, OpCall &call) {
  std::string kind = call.op.value("op", "");
  if (kind == "linear")
    runLinear(dev, call);
  else if (kind == "linear_bwd")
    runLinearBackward(dev, call);
  else if (kind == "conv2d")
    runConv(dev, call);
  else if (kind == "conv2d_bwd")
    runConvBackward(dev, call);
  else if (kind == "time_slice")
    runTimeSlice(dev, call);
  else if (kind == "time_stack")
    runTimeStack(dev, call);
  else
    return false;
  return true;
}
