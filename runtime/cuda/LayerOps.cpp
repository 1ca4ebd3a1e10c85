//===- LayerOps.cpp - stateless layers: GEMMs, conv, batch norm ----------===//
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
  expectArity(call, 3, 3, outs, outs);
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
  if (needGx) {
    const DeviceTensor &gx = call.out[o++];
    expectElements(call, gx, d.m * d.k, "rows x K");
    RowMajorGemm g; // gx = gy w
    g.m = toInt(call, d.m, "rows"), g.n = toInt(call, d.k, "K");
    g.k = toInt(call, d.n, "N");
    g.a = gy.f32(), g.lda = d.n;
    g.b = w.f32(), g.ldb = d.k;
    g.c = gx.f32(), g.ldc = d.k, g.beta = beta;
    dev.gemm(g, call.where);
  }
  const DeviceTensor &gw = call.out[o++];
  expectElements(call, gw, d.n * d.k, "like the weight");
  RowMajorGemm g; // gw = gyᵀ x: one GEMM over all rows
  g.transA = true;
  g.m = toInt(call, d.n, "N"), g.n = toInt(call, d.k, "K");
  g.k = toInt(call, d.m, "rows");
  g.a = gy.f32(), g.lda = d.n;
  g.b = x.f32(), g.ldb = d.k;
  g.c = gw.f32(), g.ldc = d.k, g.beta = beta;
  dev.gemm(g, call.where);
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

//===-- batch norm --------------------------------------------------------===//

/// How the statistics of x[M, C, S] are split: `parts` blocks per channel of
/// `rowsPer` rows each, about 8K elements per block and enough blocks to fill
/// the GPU; a partition stays below 2^31 elements (32-bit indices).
struct BnPartition {
  int parts;
  long long rowsPer;
};
BnPartition bnPartition(long long m, long long c, long long s) {
  long long perChannel = m * s;
  long long want = std::max(1LL, std::min((perChannel + 8191) / 8192,
                                          (2048 + c - 1) / c));
  long long rowsPer = (m + want - 1) / want;
  rowsPer = std::max(1LL, std::min(rowsPer, (1LL << 30) / std::max(s, 1LL)));
  BnPartition p;
  p.rowsPer = rowsPer;
  p.parts = static_cast<int>((m + rowsPer - 1) / rowsPer);
  return p;
}

/// x viewed as [M, C, S]: C from gamma, S from `spatial_rank` trailing dims.
void bnDims(const OpCall &call, const DeviceTensor &x, long long channels,
            long long &m, long long &s) {
  size_t r = x.shape.size();
  long long rank = static_cast<long long>(attrNumber(
      call, "spatial_rank",
      r >= 1 && x.shape.back() == channels ? 0 : (r >= 3 ? 2 : 0)));
  if (rank < 0 || static_cast<size_t>(rank) + 1 > r ||
      x.shape[r - 1 - rank] != channels)
    opError(call, "input " + x.name + " has no channel dimension of size " +
                      std::to_string(channels) + " before " +
                      std::to_string(rank) + " spatial dimensions");
  s = 1;
  for (size_t i = r - rank; i < r; ++i)
    s *= x.shape[i];
  m = x.numel() / (channels * s);
}

/// 4 when every tensor of x's shape can be read as float4 (S % 4 == 0 and
/// 16-byte aligned), else 1: the batch-norm kernels' access width.
int bnVectorWidth(long long s, std::initializer_list<const float *> tensors) {
  if (s % 4 != 0)
    return 1;
  for (const float *p : tensors)
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0)
      return 1;
  return 4;
}

void runBatchNorm(CudaDevice &dev, OpCall &call) {
  bool training = attrBool(call, "training", false);
  expectArity(call, 5, 5, 1, 3);
  const DeviceTensor &x = call.in[0], &gamma = call.in[1], &beta = call.in[2];
  const DeviceTensor &runMean = call.in[3], &runVar = call.in[4];
  const DeviceTensor &y = call.out[0];
  long long c = gamma.numel(), m, s;
  bnDims(call, x, c, m, s);
  for (const DeviceTensor *t : {&beta, &runMean, &runVar})
    expectElements(call, *t, c, "one per channel");
  expectElements(call, y, x.numel(), "like the input");
  float eps = static_cast<float>(attrNumber(call, "eps", 1e-5));
  int vec = bnVectorWidth(s, {x.f32(), y.f32()});
  if (!training) {
    dev.launchElementwise("snnrt_bn_apply", x.numel() / vec, call.where,
                          x.f32(), y.f32(), runMean.f32(), runVar.f32(), 1,
                          eps, gamma.f32(), beta.f32(),
                          static_cast<long long>(x.numel()), c, s, vec);
    return;
  }
  float momentum = static_cast<float>(attrNumber(call, "momentum", 0.1));
  float *stats = reinterpret_cast<float *>(
      dev.scratch("bn.stats", 2 * c * 4, call.where));
  float *mean = call.out.size() == 3 ? call.out[1].f32() : stats;
  float *invstd = call.out.size() == 3 ? call.out[2].f32() : stats + c;
  if (call.out.size() == 3) {
    expectElements(call, call.out[1], c, "one per channel");
    expectElements(call, call.out[2], c, "one per channel");
  }
  BnPartition part = bnPartition(m, c, s);
  float *partial = reinterpret_cast<float *>(dev.scratch(
      "bn.partial", 2 * c * part.parts * 4, call.where));
  dev.launch(dev.kernels().builtin("snnrt_bn_stats_partial", call.where),
             static_cast<unsigned>(c * part.parts), 256, 0, call.where,
             x.f32(), m, c, s, part.parts, part.rowsPer, partial, vec);
  dev.launchElementwise("snnrt_bn_stats_finish", c, call.where, x.f32(),
                        static_cast<const float *>(partial), m, c, s,
                        part.parts, eps, momentum, mean, invstd, runMean.f32(),
                        runVar.f32());
  dev.launchElementwise("snnrt_bn_apply", x.numel() / vec, call.where,
                        x.f32(), y.f32(), static_cast<const float *>(mean),
                        static_cast<const float *>(invstd), 0, eps,
                        gamma.f32(), beta.f32(),
                        static_cast<long long>(x.numel()), c, s, vec);
}

void runBatchNormBackward(CudaDevice &dev, OpCall &call) {
  bool accumulate = attrBool(call, "accumulate", false);
  expectArity(call, 5, 5, 3, 3);
  const DeviceTensor &gy = call.in[0], &x = call.in[1], &gamma = call.in[2];
  const DeviceTensor &mean = call.in[3], &invstd = call.in[4];
  long long c = gamma.numel(), m, s;
  bnDims(call, x, c, m, s);
  expectElements(call, gy, x.numel(), "like the input");
  expectElements(call, call.out[0], x.numel(), "like the input");
  for (const DeviceTensor *t : std::initializer_list<const DeviceTensor *>{
           &mean, &invstd, &call.out[1], &call.out[2]})
    expectElements(call, *t, c, "one per channel");
  float *sums = reinterpret_cast<float *>(
      dev.scratch("bn.sums", 2 * c * 4, call.where));
  BnPartition part = bnPartition(m, c, s);
  float *partial = reinterpret_cast<float *>(dev.scratch(
      "bn.partial", 2 * c * part.parts * 4, call.where));
  int vec = bnVectorWidth(s, {gy.f32(), x.f32(), call.out[0].f32()});
  dev.launch(dev.kernels().builtin("snnrt_bn_bwd_partial", call.where),
             static_cast<unsigned>(c * part.parts), 256, 0, call.where,
             gy.f32(), x.f32(), mean.f32(), invstd.f32(), m, c, s, part.parts,
             part.rowsPer, partial, vec);
  dev.launchElementwise("snnrt_bn_bwd_finish", c, call.where,
                        static_cast<const float *>(partial), c, part.parts,
                        sums, call.out[1].f32(), call.out[2].f32(),
                        int(accumulate));
  dev.launchElementwise("snnrt_bn_bwd_apply", x.numel() / vec, call.where,
                        gy.f32(), x.f32(), mean.f32(), invstd.f32(),
                        gamma.f32(), static_cast<const float *>(sums),
                        call.out[0].f32(), static_cast<long long>(x.numel()),
                        c, s, int(accumulate), vec);
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
  else if (kind == "batch_norm")
    runBatchNorm(dev, call);
  else if (kind == "batch_norm_bwd")
    runBatchNormBackward(dev, call);
  else if (kind == "time_slice")
    runTimeSlice(dev, call);
  else if (kind == "time_stack")
    runTimeStack(dev, call);
  else
    return false;
  return true;
}
