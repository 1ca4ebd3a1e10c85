//===- LayerOps.cpp - stateless layers: GEMMs, conv ----------------------===//
//
// Every stateless layer runs once over all T*B rows. Linear layers and
// convolutions (im2col + cuBLAS) reduce their weight gradients over all rows
// in one GEMM; the column buffer is chunked only when it would exceed
// kMaxColumnBytes.
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
constexpr std::size_t kMaxColumnBytes = std::size_t(512) << 20;

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

/// has_bias, need_gx, accumulate of linear_bwd/conv2d_bwd (in: gy, x, w;
/// out: gx?, gw, gb?), with their arity checked.
std::tuple<bool, bool, bool> weightGradFlags(const OpCall &call) {
  bool hasBias = attrBool(call, "has_bias", false);
  bool needGx = attrBool(call, "need_gx", true);
  size_t outs = 1 + hasBias + needGx;
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
  if (hasBias) {
    expectElements(call, call.in[2], d.n, "bias of N");
    dev.launchElementwise("snnrt_add_bias", d.m * d.n, call.where, y.f32(),
                          call.in[2].f32(), d.m, d.n);
  }
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
  if (hasBias) {
    const DeviceTensor &gb = call.out[o++];
    expectElements(call, gb, d.n, "like the bias");
    dev.launch(dev.kernels().builtin("snnrt_channel_sum", call.where),
               static_cast<unsigned>(d.n), 256, 0, call.where, gy.f32(),
               gb.f32(), d.m, d.n, 1LL, int(accumulate));
  }
}

//===-- convolution windows ----------------------------------------------===//

/// The window of a conv op over x [M, C, H, W] (the last three dims).
/// `asymmetric` (convolutions) is set when a dim pads its two sides
/// differently.
SnnConvShape windowShape(const OpCall &call, const DeviceTensor &x,
                         int64_t kh, int64_t kw, bool dilated,
                         const char *kernelAttr, bool *asymmetric = nullptr) {
  if (x.shape.size() < 4)
    opError(call, "input " + x.name + " must be [rows..., C, H, W]");
  SnnConvShape s{};
  size_t r = x.shape.size();
  s.channels = x.shape[r - 3], s.height = x.shape[r - 2];
  s.width = x.shape[r - 1];
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
  long long out, groups, groupOut, groupK, pixels;
  long long chunk; // images per column buffer
};

ConvSetup convSetup(const OpCall &call, const DeviceTensor &x,
                    const DeviceTensor &w, bool backward) {
  if (w.shape.size() != 4)
    opError(call, "weight " + w.name + " must be [O, C/groups, KH, KW]");
  ConvSetup c;
  c.shape = windowShape(call, x, w.shape[2], w.shape[3], true, "kernel",
                        &c.asymmetric);
  c.groups = static_cast<long long>(attrNumber(call, "groups", 1));
  c.out = w.shape[0];
  if (c.groups <= 0 || c.shape.channels % c.groups || c.out % c.groups ||
      w.shape[1] * c.groups != c.shape.channels)
    opError(call, "weight " + w.name + " [" + std::to_string(w.shape[0]) +
                      ", " + std::to_string(w.shape[1]) + ", ...] does not "
                      "fit " + std::to_string(c.shape.channels) +
                      " input channels in " + std::to_string(c.groups) +
                      " groups");
  c.shape.groupChannels = c.shape.channels / c.groups;
  c.groupOut = c.out / c.groups;
  c.groupK = c.shape.groupChannels * c.shape.kernelH * c.shape.kernelW;
  c.pixels = c.shape.outHeight * c.shape.outWidth;
  // Per image: the columns (and in backward their gradient and gyᵀ).
  long long perImage = c.groupK * c.pixels * (backward ? 2 : 1) +
                       (backward ? c.out * c.pixels : 0);
  c.chunk = std::max(1LL, static_cast<long long>(kMaxColumnBytes / 4) /
                              std::max(1LL, perImage));
  c.chunk = std::min(c.chunk, c.shape.images);
  return c;
}

void im2col(CudaDevice &dev, const OpCall &call, const float *x, float *col,
            SnnConvShape s, long long group) {
  long long total = s.groupChannels * s.kernelH * s.kernelW * s.images *
                    s.outHeight * s.outWidth;
  dev.launchElementwise("snnrt_im2col", total, call.where, x, col, s, group);
}

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
  return p;
}

void addConvBias(CudaDevice &dev, OpCall &call, const ConvSetup &c,
                 const DeviceTensor &y) {
  expectElements(call, call.in[2], c.out, "bias of O");
  dev.launchElementwise("snnrt_add_channel_bias", y.numel(), call.where,
                        y.f32(), call.in[2].f32(),
                        static_cast<long long>(y.numel()), c.out, c.pixels);
}

void runConv(CudaDevice &dev, OpCall &call) {
  bool hasBias = attrBool(call, "has_bias", call.in.size() == 3);
  // An event-driven layer's dense path also reads the decision (last
  // input). The GEMM runs whatever it says: cuBLAS cannot read it without a
  // host synchronisation, so the event-driven kernel's output, when it ran,
  // is overwritten with the same function (docs/artifact-format.md).
  size_t inputs = (hasBias ? 3 : 2) +
                  (attrBool(call, "unless_event_path", false) ? 1 : 0);
  expectArity(call, inputs, inputs, 1, 1);
  const DeviceTensor &x = call.in[0], &w = call.in[1], &y = call.out[0];
  ConvSetup c = convSetup(call, x, w, false);
  const SnnConvShape &s = c.shape;
  expectElements(call, y, s.images * c.out * c.pixels, "M x O x OH x OW");
  if (CudnnConv *cudnn = cudnnFor(dev, c)) {
    cudnn->forward(convProblem(c), x.f32(), w.f32(), y.f32(), call.where);
    if (hasBias)
      addConvBias(dev, call, c, y);
    return;
  }
  long long inImage = s.channels * s.height * s.width;
  float *col = reinterpret_cast<float *>(dev.scratch(
      "conv.col", c.groupK * c.chunk * c.pixels * 4, call.where));
  for (long long m0 = 0; m0 < s.images; m0 += c.chunk) {
    SnnConvShape part = s;
    part.images = std::min(c.chunk, s.images - m0);
    for (long long g = 0; g < c.groups; ++g) {
      im2col(dev, call, x.f32() + m0 * inImage, col, part, g);
      // y_m[Og, P] = w_g[Og, Kg] col[:, m P .. m P + P], one batch entry per
      // image.
      RowMajorGemm gm;
      gm.m = toInt(call, c.groupOut, "O/groups");
      gm.n = toInt(call, c.pixels, "OH*OW");
      gm.k = toInt(call, c.groupK, "C/groups*KH*KW");
      gm.a = w.f32() + g * c.groupOut * c.groupK, gm.lda = c.groupK;
      gm.b = col, gm.ldb = part.images * c.pixels, gm.strideB = c.pixels;
      gm.c = y.f32() + m0 * c.out * c.pixels + g * c.groupOut * c.pixels;
      gm.ldc = c.pixels, gm.strideC = c.out * c.pixels;
      gm.batch = toInt(call, part.images, "images");
      dev.gemm(gm, call.where);
    }
  }
  if (hasBias)
    addConvBias(dev, call, c, y);
}

void convBackwardIm2col(CudaDevice &dev, OpCall &call, const ConvSetup &c,
                        const DeviceTensor *gx, const DeviceTensor &gw,
                        bool accumulate);

void runConvBackward(CudaDevice &dev, OpCall &call) {
  auto [hasBias, needGx, accumulate] = weightGradFlags(call);
  const DeviceTensor &gy = call.in[0], &x = call.in[1], &w = call.in[2];
  ConvSetup c = convSetup(call, x, w, true);
  const SnnConvShape &s = c.shape;
  expectElements(call, gy, s.images * c.out * c.pixels, "M x O x OH x OW");
  size_t o = 0;
  const DeviceTensor *gx = needGx ? &call.out[o++] : nullptr;
  const DeviceTensor &gw = call.out[o++];
  expectElements(call, gw, w.numel(), "like the weight");
  if (gx)
    expectElements(call, *gx, x.numel(), "like the input");
  if (CudnnConv *cudnn = cudnnFor(dev, c)) {
    ConvProblem p = convProblem(c);
    cudnn->backwardFilter(p, x.f32(), gy.f32(), gw.f32(), accumulate,
                          call.where);
    if (gx)
      cudnn->backwardData(p, gy.f32(), w.f32(), gx->f32(), accumulate,
                          call.where);
  } else {
    convBackwardIm2col(dev, call, c, gx, gw, accumulate);
  }
  if (hasBias) {
    const DeviceTensor &gb = call.out[o++];
    expectElements(call, gb, c.out, "like the bias");
    dev.launch(dev.kernels().builtin("snnrt_channel_sum", call.where),
               static_cast<unsigned>(c.out), 256, 0, call.where, gy.f32(),
               gb.f32(), s.images, c.out, c.pixels, int(accumulate));
  }
}

/// gw and gx through column buffers and cuBLAS.
void convBackwardIm2col(CudaDevice &dev, OpCall &call, const ConvSetup &c,
                        const DeviceTensor *gx, const DeviceTensor &gw,
                        bool accumulate) {
  const DeviceTensor &gy = call.in[0], &x = call.in[1], &w = call.in[2];
  const SnnConvShape &s = c.shape;
  long long inImage = s.channels * s.height * s.width;
  long long colElems = c.groupK * c.chunk * c.pixels;
  float *col = reinterpret_cast<float *>(
      dev.scratch("conv.col", colElems * 4, call.where));
  float *colGrad = reinterpret_cast<float *>(
      dev.scratch("conv.colgrad", colElems * 4, call.where));
  float *gyT = reinterpret_cast<float *>(dev.scratch(
      "conv.gyT", c.out * c.chunk * c.pixels * 4, call.where));
  for (long long m0 = 0; m0 < s.images; m0 += c.chunk) {
    SnnConvShape part = s;
    part.images = std::min(c.chunk, s.images - m0);
    long long cols = part.images * c.pixels;
    // gyᵀ[O, images*P]: each output channel's gradients in one row.
    dev.launchElementwise("snnrt_channels_first", c.out * cols, call.where,
                          gy.f32() + m0 * c.out * c.pixels, gyT,
                          part.images, c.out, c.pixels);
    for (long long g = 0; g < c.groups; ++g) {
      im2col(dev, call, x.f32() + m0 * inImage, col, part, g);
      const float *gyG = gyT + g * c.groupOut * cols;
      RowMajorGemm gwG; // gw_g = gyᵀ_g colᵀ: all rows of the chunk at once
      gwG.transB = true;
      gwG.m = toInt(call, c.groupOut, "O/groups");
      gwG.n = toInt(call, c.groupK, "C/groups*KH*KW");
      gwG.k = toInt(call, cols, "images*OH*OW");
      gwG.a = gyG, gwG.lda = cols;
      gwG.b = col, gwG.ldb = cols;
      gwG.c = gw.f32() + g * c.groupOut * c.groupK, gwG.ldc = c.groupK;
      gwG.beta = (accumulate || m0 > 0) ? 1.0f : 0.0f;
      dev.gemm(gwG, call.where);
      if (!gx)
        continue;
      RowMajorGemm gc; // colGrad = w_gᵀ gyᵀ_g
      gc.transA = true;
      gc.m = toInt(call, c.groupK, "C/groups*KH*KW");
      gc.n = toInt(call, cols, "images*OH*OW");
      gc.k = toInt(call, c.groupOut, "O/groups");
      gc.a = w.f32() + g * c.groupOut * c.groupK, gc.lda = c.groupK;
      gc.b = gyG, gc.ldb = cols;
      gc.c = colGrad, gc.ldc = cols;
      dev.gemm(gc, call.where);
      dev.launchElementwise(
          "snnrt_col2im", part.images * inImage / c.groups, call.where,
          static_cast<const float *>(colGrad), gx->f32() + m0 * inImage, part,
          g, int(accumulate));
    }
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
