//===- LayerOps.cpp - linear and conv ops: library calls and kernels ------===//
//
// docs/artifact-format.md, "Layer ops: library calls and their kernels": a
// linear, conv2d, linear_bwd or conv2d_bwd op stays an op of its own (the
// runtime calls cuBLAS, cuDNN or a CPU BLAS) and names the generated
// kernels that run around the call: `launches` (the bias add after the
// forward GEMM, the bias gradient of the backward) and, for convolutions,
// `columns`, the kernels and scratch tensors of the GEMMs over column
// buffers (the CPU, and CUDA where cuDNN cannot run the convolution).
//
//===----------------------------------------------------------------------===//

#include "ManifestBuilder.h"

#include "snn/Conversion/NeuronToGPU/LayerKernels.h"

using namespace mlir;
using namespace mlir::snn;
using llvm::json::Array;
using llvm::json::Object;

/// Column buffer and channel rows of one chunk of images together stay
/// within this (the CPU's caches favour small chunks; a chunk still holds
/// thousands of columns for every GEMM).
static constexpr int64_t kMaxColumnBytes = int64_t(64) << 20;

/// A launch description without tensors: the runtime passes the pointers
/// of the chunk it works on.
static Object chunkLaunch(Object launch) {
  launch.erase("args");
  return launch;
}

static SmallVector<int64_t> getInts(const Object &op, StringRef name,
                                    SmallVector<int64_t> fallback) {
  if (const Array *a = op.getArray(name))
    return toInts(*a);
  return fallback;
}

/// Chunks of rows for a linear backward's thin weight gradient on the GPU
/// (`gw_chunks`), 0 to keep one GEMM: 32 of at least 256 rows each for
/// at most 32 outputs, else the most chunks below 32 that divide the rows.
static int64_t getThinWeightGradChunks(int64_t rows, int64_t outputs) {
  constexpr int64_t kMaxOutputs = 32, kChunks = 32, kMinChunkRows = 256,
                    kMinChunks = 8;
  if (outputs > kMaxOutputs)
    return 0;
  for (int64_t chunks = kChunks; chunks >= kMinChunks; --chunks)
    if (rows % chunks == 0 && rows / chunks >= kMinChunkRows)
      return chunks;
  return 0;
}

Object ManifestBuilder::toLayerOp(Object op) {
  StringRef kind = *op.getString("op");
  bool backward = kind.ends_with("_bwd");
  bool conv = kind.starts_with("conv2d");
  // NHWC activations, [O, KH, KW, C] weights: the GEMMs read and write the
  // activations in place (no layout copies, no `rows` scratch).
  bool channelsLast = op.getBoolean("channels_last").value_or(false);
  bool hasBias = op.getBoolean("has_bias").value_or(false);
  bool accumulate = op.getBoolean("accumulate").value_or(false);
  Array &in = *op.getArray("in");
  Array &out = *op.getArray("out");
  auto shape = [&](const llvm::json::Value &id) {
    return toInts(*tensor(*id.getAsInteger()).getArray("shape"));
  };
  // x, w and y (backward: gy) of the layer.
  SmallVector<int64_t> x = shape(in[backward ? 1 : 0]);
  SmallVector<int64_t> w = shape(in[backward ? 2 : 1]);
  const llvm::json::Value &y = backward ? in[0] : out[0];
  SmallVector<int64_t> yShape = shape(y);
  int64_t outChannels = w[0];
  // y as [rows, O, inner]: a linear layer's rows of N, an NCHW
  // convolution's images of O planes of OH * OW, an NHWC one's pixels of O.
  ChannelGeometry channels{ShapedType::getNumElements(yShape) / outChannels, outChannels, 1};
  if (conv && !channelsLast) {
    channels.inner = yShape[yShape.size() - 2] * yShape.back();
    channels.rows = ShapedType::getNumElements(yShape) / (outChannels * channels.inner);
  }
  Array launches;
  if (hasBias && !backward)
    launches.push_back(
        makeLaunch(makeBiasAddSpec(channels), Array{y, in[2]}));
  if (hasBias && backward) {
    // gb is the last gradient (gx?, gw, gb).
    launches.push_back(makeLaunch(makeBiasGradSpec(channels, accumulate),
                                  Array{y, out.back()}));
  }
  if (!launches.empty())
    op["launches"] = std::move(launches);
  if (backward && !conv) {
    // A thin weight gradient (a readout's gw [N <= 32, K] over many rows):
    // cuBLAS's one GEMM over all rows ran at 1.3 TB/s on an H200 (58.7 us
    // for the SHD readout); split over the rows into a strided batch of
    // partial gw and their sum (one more GEMM), 42.7 us
    // (bench/results/2026-12-04-H200-thin-weight-grad.md). The scratch holds
    // the partials, then the chunks' ones vector of that sum.
    int64_t rows = ShapedType::getNumElements(x) / w[1];
    if (int64_t chunks = getThinWeightGradChunks(rows, outChannels)) {
      int64_t scratch = addTensor(Object{
          {"shape", Array{chunks * outChannels * w[1] + chunks}},
          {"role", "activation"}});
      op["gw_chunks"] = chunks;
      out.push_back(scratch);
      op["scratch"] = Array{scratch};
    }
    return op;
  }
  if (!conv)
    return op;

  ConvColumnsGeometry g;
  size_t r = x.size();
  g.channelsLast = channelsLast;
  if (channelsLast) {
    g.h = x[r - 3], g.w = x[r - 2], g.channels = x[r - 1];
    g.oh = yShape[r - 3], g.ow = yShape[r - 2];
    g.kh = w[1], g.kw = w[2];
  } else {
    g.channels = x[r - 3], g.h = x[r - 2], g.w = x[r - 1];
    g.oh = yShape[r - 2], g.ow = yShape[r - 1];
    g.kh = w[2], g.kw = w[3];
  }
  SmallVector<int64_t> stride = getInts(op, "stride", {1, 1});
  SmallVector<int64_t> padding = getInts(op, "padding", {0, 0});
  SmallVector<int64_t> dilation = getInts(op, "dilation", {1, 1});
  g.sh = stride[0], g.sw = stride[1];
  g.ph = padding[0], g.pw = padding[1];
  g.dh = dilation[0], g.dw = dilation[1];
  int64_t pixels = g.oh * g.ow;
  int64_t images =
      ShapedType::getNumElements(yShape) / (outChannels * pixels);
  // The largest chunk of images that divides them and fits (every chunk
  // is whole: its kernels have compile-time sizes).
  int64_t perImage =
      (g.getColumnRows() + (channelsLast ? 0 : outChannels)) * pixels * 4;
  int64_t chunk = 1;
  for (int64_t d = 1; d <= images; ++d)
    if (images % d == 0 && d * perImage <= kMaxColumnBytes)
      chunk = d;
  g.images = chunk;
  int64_t col = addTensor(Object{
      {"shape", Array{g.getColumnElements()}}, {"role", "activation"}});
  if (channelsLast) {
    // y[images * P, O] = col wᵀ; gw (+)= gyᵀ col; col = gy w, then col2im.
    Object columns{
        {"images", chunk},
        {"col", col},
        {"im2col", chunkLaunch(makeLaunch(makeColumnsSpec(g, false), Array{}))}};
    if (backward && op.getBoolean("need_gx").value_or(true))
      columns["col2im"] = chunkLaunch(
          makeLaunch(makeColumnsSpec(g, true, accumulate), Array{}));
    op["columns"] = std::move(columns);
    out.push_back(col);
    op["scratch"] = Array{col};
    return op;
  }
  int64_t rows = addTensor(Object{
      {"shape", Array{outChannels * chunk * pixels}}, {"role", "activation"}});
  ChannelGeometry chunkChannels{chunk, outChannels, pixels};
  Object columns{
      {"images", chunk},
      {"col", col},
      {"rows", rows},
      {"im2col", chunkLaunch(makeLaunch(makeColumnsSpec(g, false), Array{}))}};
  if (backward) {
    columns["channels_first"] = chunkLaunch(
        makeLaunch(makeChannelLayoutSpec(chunkChannels, true), Array{}));
    if (op.getBoolean("need_gx").value_or(true))
      columns["col2im"] = chunkLaunch(
          makeLaunch(makeColumnsSpec(g, true, accumulate), Array{}));
  } else {
    columns["channels_last"] = chunkLaunch(
        makeLaunch(makeChannelLayoutSpec(chunkChannels, false), Array{}));
  }
  op["columns"] = std::move(columns);
  out.push_back(col);
  out.push_back(rows);
  op["scratch"] = Array{col, rows};
  return op;
}
