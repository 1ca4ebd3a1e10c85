//===- OpKernels.h - generated kernels of the non-neuron ops ----*- C++ -*-===//
//
// The elementwise ops (add, accumulate, scale), dropout, pooling
// (PoolKernels.h), batch norm (BatchNormKernels.h) and the optimizer
// updates (SGD, Adam/AdamW) as compiler-generated kernels: one description
// (OpKernelSpec) gives a `gpu.func` (lowered with the neuron kernels to NVVM,
// cubin and PTX) and a host function (lowered with them through LLVM into
// the module's CPU kernel library). The runtime launches them by name
// through the manifest's `kernel` op (docs/artifact-format.md, "Generated
// op kernels"); it knows nothing of what they compute.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_CONVERSION_NEURONTOGPU_OPKERNELS_H
#define SNN_CONVERSION_NEURONTOGPU_OPKERNELS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::snn {

/// What an op kernel computes per element (docs/artifact-format.md, the op
/// of the same name).
enum class OpKernelKind {
  Add,        ///< y = a + b: `add` and `accumulate`
  Scale,      ///< y = s x (y += s x with accumulate)
  SGD,        ///< torch.optim.SGD, in place
  Adam,       ///< torch.optim.Adam / AdamW, in place
  Dropout,    ///< training dropout: x -> y, keep mask (u8)
  DropoutBwd, ///< gx = mask ? gy / (1 - p) : 0 (gx += ... with accumulate)
  Pool,       ///< avg/sum/max pooling of x[planes, H, W] (PoolKernels.cpp)
  PoolBwd,    ///< its gradient (gx += ... with accumulate)
  // Event-driven linear layers (SparseKernels.h):
  SpikeDensity,    ///< counts an input's nonzeros, decides the path
  TransposeWeight, ///< wt[K,N] = w[N,K]^T when the event-driven path runs
  EventLinear,     ///< y = x w^T + b summing only the nonzero inputs' columns
  EventLinearBits, ///< gw = gy^T x over gy's nonzeros, x read as bits
  CompactRows,     ///< per row of x: its nonzeros' columns (and values)
  CompactColumns,  ///< per column of gy and segment of rows: its nonzeros' rows
  EventLinearLists, ///< gw = gy^T x over gy's nonzeros and x's row lists
  EventLinearTiles, ///< y = x w^T + b over x's row lists, w's tiles shared
  EventLinearBand,  ///< y = x wt only where |h - v_th| <= band, else 0
  ThinWeightGradBits, ///< gw's per-segment parts over x's row bits, N <= 32
  EventConv2d, ///< y = conv(x, w) + b adding only the nonzero inputs' taps
               ///< (the CPU only: HostEventConv.cpp)
  EventConv2dWeightGrad, ///< its gwᵀ over the nonzero inputs (CPU only)
  PackBits,   ///< spikes (f32 0/1) -> 32 per u32 word (saved for backward)
  UnpackBits, ///< u32 words -> spikes (f32 0/1), before their reader
  // Batch norm of x[M, C, S] (BatchNormKernels.h): training runs three
  // kernels in turn, which share a scratch tensor. Keep these consecutive
  // (isBatchNorm).
  BatchNormStats,     ///< partial sums of x per (channel, part of M)
  BatchNormFinish,    ///< statistics, running update, the channel's affine
  BatchNormApply,     ///< y = x scale + shift
  BatchNormEval,      ///< eval: the running statistics' affine
  BatchNormBwdStats,  ///< partial sums of gy and gy xhat
  BatchNormBwdFinish, ///< ggamma, gbeta (+= with accumulate), gx's terms
  BatchNormBwdApply,  ///< gx (+= with accumulate)
  Loss, ///< a loss over y[T, B, C], its gradient and hits (LossKernels.cpp)
  // The glue of linear and convolution layers (LayerKernels.h):
  BiasAdd,       ///< y[r, c, i] += b[c]
  BiasGrad,      ///< gb[c] = sum over r, i of gy[r, c, i]
  ChannelsFirst, ///< out[c, r, i] = in[r, c, i]
  ChannelsLast,  ///< out[r, c, i] = in[c, r, i]
  Im2col,        ///< the column buffer of a convolution's input
  Col2im,        ///< the input gradient from the column buffer's gradient
  // Of a module split in time (channelGeometry: rows = the local steps L,
  // channels = the elements of one step):
  TimeSum,       ///< y[i] = scale * sum over t of x[t, i] (summed in f64)
  TimeBroadcast, ///< y[t, i] = scale * x[i]: time_sum's gradient
  Transpose,     ///< y = x with its dims permuted (TransposeKernels.h)
};

/// What a loss kernel computes of m[b, c], the time mean (CE, MSE) or
/// maximum (CEMax) of y[t, b, c].
enum class LossMode { CE, MSE, CEMax };

/// y[T, B, C] of a loss kernel.
struct LossGeometry {
  int64_t steps = 0, batch = 0, classes = 0;

  int64_t getElements() const { return steps * batch * classes; }
};

/// The reduction of a pooling window.
enum class PoolMode { Avg, Sum, Max };

/// A pooling window over planes of H x W (every dim before the last two is
/// a plane); OH = (H + 2 PH - KH) / SH + 1, likewise OW. Channels last
/// (channels > 1): x[planes, H, W, channels], a plane per leading index.
struct PoolGeometry {
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  int64_t channels = 1;

  int64_t getInputElements() const { return planes * h * w * channels; }
  int64_t getOutputElements() const { return planes * oh * ow * channels; }
  /// The windows tile the input exactly (kernel = stride, no padding): the
  /// backward runs a thread per window instead of a thread per input.
  bool isTiling() const {
    return kh == sh && kw == sw && ph == 0 && pw == 0 && oh * kh == h &&
           ow * kw == w;
  }
};

/// The kernels of an event-driven linear layer (docs/artifact-format.md,
/// "Event-driven linear layers").
inline bool isEventKernel(OpKernelKind kind) {
  return kind == OpKernelKind::SpikeDensity ||
         kind == OpKernelKind::TransposeWeight ||
         kind == OpKernelKind::EventLinear ||
         kind == OpKernelKind::EventLinearBits ||
         kind == OpKernelKind::CompactRows ||
         kind == OpKernelKind::CompactColumns ||
         kind == OpKernelKind::EventLinearLists ||
         kind == OpKernelKind::EventLinearTiles ||
         kind == OpKernelKind::EventLinearBand ||
         kind == OpKernelKind::ThinWeightGradBits ||
         kind == OpKernelKind::EventConv2d ||
         kind == OpKernelKind::EventConv2dWeightGrad;
}
/// x of a batch norm viewed as [rows, channels, spatial]; statistics per
/// channel over rows * spatial. The statistics kernels split each channel's
/// rows into `parts` parts of `rowsPerPart` rows (the last may have fewer);
/// the elementwise kernels access `width` consecutive elements at once on
/// the GPU (4 when the spatial size allows 16-byte accesses, else 1).
struct BatchNormGeometry {
  int64_t rows = 0, channels = 0, spatial = 0;
  int64_t parts = 1, rowsPerPart = 0, width = 1;
  double eps = 1e-5, momentum = 0.1;

  int64_t getElements() const { return rows * channels * spatial; }
  /// Elements per channel.
  int64_t getCount() const { return rows * spatial; }
};

/// A tensor viewed as [rows, channels, inner] (the bias and layout kernels).
struct ChannelGeometry {
  int64_t rows = 0, channels = 0, inner = 1;

  int64_t getElements() const { return rows * channels * inner; }
};

/// A convolution window over x[images, C, H, W] (im2col, col2im): output
/// OH x OW, kernel KH x KW, stride, the leading padding (top, left: the
/// trailing padding only sizes the output), dilation. `channelsLast`: x is
/// [images, H, W, C] and the column buffer is [images * OH * OW, (kh, kw,
/// c)] (a row per output pixel, in the order of an [O, KH, KW, C] weight).
struct ConvColumnsGeometry {
  int64_t images = 0, channels = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool channelsLast = false;

  int64_t getInputElements() const { return images * channels * h * w; }
  /// Rows of the NCHW column buffer, (c, kh, kw); the NHWC buffer's row
  /// length, (kh, kw, c).
  int64_t getColumnRows() const { return channels * kh * kw; }
  int64_t getColumnElements() const {
    return getColumnRows() * images * oh * ow;
  }
};

/// A permutation of x[shape]: y's dim i is x's dim permutation[i].
struct TransposeGeometry {
  SmallVector<int64_t, 6> shape, permutation;

  int64_t getElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// Threads per block of the op kernels.
inline constexpr int64_t kOpKernelBlockSize = 256;

/// Output columns of a strip of a host event_linear's transposed weight
/// (OpKernelSpec::weightStrips): a chunk's 64 sums are 8 AVX2 vectors.
inline constexpr int64_t kWeightStripColumns = 64;

/// One generated kernel: the same elementwise computation over one or more
/// segments (an optimizer kernel updates every parameter of a group in one
/// launch: one segment per parameter). Sizes are compile-time constants.
struct OpKernelSpec {
  OpKernelKind kind = OpKernelKind::Add;
  /// Elements of each segment.
  SmallVector<int64_t> sizes;
  /// Elements of the mask (dropout, one segment): the segment's size.
  // scale
  double scale = 1.0;
  bool accumulate = false;
  // sgd
  double momentum = 0.0, dampening = 0.0, weightDecay = 0.0;
  bool nesterov = false;
  // adam (weightDecay shared with sgd)
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  bool decoupled = false;
  // dropout and its backward (accumulate shared with scale)
  double p = 0.5;
  /// The op's index in its program: the kernel's random stream is
  /// (run seed * 0x100000001B3 + seedIndex), counter-based per element.
  int64_t seedIndex = 0;
  // pool and its backward (accumulate shared with scale)
  PoolMode poolMode = PoolMode::Avg;
  PoolGeometry pool;
  // batch norm and its backward (accumulate shared with scale)
  BatchNormGeometry batchNorm;
  // loss: the formula, y's shape, whether gy is written
  LossMode lossMode = LossMode::CE;
  LossGeometry loss;
  bool lossGradient = true;

  // event-driven linear: x[rows, inFeatures], w[outFeatures, inFeatures]
  int64_t rows = 0, inFeatures = 0, outFeatures = 0;
  bool hasBias = false;
  /// event_weight_grad_bits and event_weight_grad_lists (rows = N,
  /// inFeatures = M events, outFeatures = K): it also reads x's values at
  /// its nonzeros (x is not binary); compact_rows (rows = M, inFeatures =
  /// K) then lists them.
  bool xValues = false;
  /// compact_rows and event_linear: x is a spiking layer's spikes as row
  /// bits (u32 words, bit j of word w = element 32 w + j; rows of K / 32
  /// words), which its neuron kernel wrote instead of floats
  /// (kSpikeRowBitsAttrName).
  bool xBits = false;
  /// compact_rows: it also counts x's nonzeros into a decision, as
  /// spike_density would (word 0 the count, word 1 the path from a limit
  /// tensor; the decision zeroed before the launch): an always
  /// event-driven layer whose input no neuron kernel counts reads its
  /// input once, not twice.
  bool countsNonzeros = false;
  /// event_linear_tiles: the output features of a block's tile of the
  /// transposed weight in shared memory (8, 16 or 32; getEventTileColumns).
  int64_t tileColumns = 0;
  /// transpose_weight and the event_linear that reads its wt [K, N], on the
  /// CPU: wt is stored in strips of kWeightStripColumns output columns,
  /// strip s holding columns [64 s, 64 s + 64) as [K, 64], then the
  /// columns past the last whole strip as [K, N % 64]. A chunk of the host
  /// event_linear then reads one contiguous 4 K * 64-byte strip (an event's
  /// 64 weights one 256-byte run) instead of K runs 4 N bytes apart. The
  /// GPU kernels keep the plain [K, N] layout.
  bool weightStrips = false;
  /// transpose_weight on the CPU: that many [N, K] matrices one after the
  /// other, each transposed (an NCHW gradient's images, [O, OH OW] ->
  /// [OH OW, O], for an event-driven convolution's weight gradient). The
  /// GPU kernel transposes one.
  int64_t transposeBatch = 1;
  /// event_linear on the CPU: x is a spiking layer's spikes, 0 or 1, so an
  /// event adds its weights without loading x or multiplying (x w = w for
  /// x = 1: the same bits).
  bool xBinary = false;
  /// compact_columns (rows = M, inFeatures = N of gy [M, N]): the rows of a
  /// segment of each column's list. event_weight_grad_lists: nonzero when
  /// it reads gy [M, N] and those lists instead of gy^T.
  int64_t columnSegment = 0;
  /// event_conv2d (rows = images, inFeatures = C KH KW, outFeatures = O):
  /// its window, in `columns` (images: all of them).
  /// event_linear_band: the surrogate band of the neuron layer that reads
  /// y (rows = M, inFeatures = K of x [M, K], outFeatures = N of wt [K, N],
  /// h [M, N] and y): y[r, c] is computed where |h[r, c] - bandVTh| <=
  /// band in f32 (NaN included, as the neuron backward's test), else 0.
  double bandVTh = 1.0, band = 0.0;

  // bias add, bias grad, layout copies (accumulate shared with scale)
  ChannelGeometry channelGeometry;
  // im2col, col2im (accumulate shared with scale)
  ConvColumnsGeometry columns;
  // transpose
  TransposeGeometry transpose;

  // pack_bits / unpack_bits: the spike tensor's elements; `sizes` holds the
  // words, ceil(packedElements / 32), and one thread handles one word.
  int64_t packedElements = 0;

  /// Tensors per segment, in ABI order: add a, b, y; scale x, y; sgd param,
  /// grad (, momentum buffer); adam param, grad, m, v; dropout x, y, mask;
  /// dropout_bwd gy, mask, gx; spike_density x, flag; transpose_weight flag,
  /// w, wt; event_linear x, wt, b (has_bias), flag, y;
  /// event_weight_grad_bits gy^T, x's words, x (xValues), flag, gw;
  /// compact_rows x, flag, counts, columns, values (xValues);
  /// compact_columns gy, flag, rows;
  /// event_weight_grad_lists gy^T (columnSegment: gy, gy's column lists),
  /// columns, values (xValues), flag, gw; event_linear_tiles x's columns,
  /// x's values (xValues), wt, b (has_bias), flag, y; event_linear_band
  /// x, wt, h, flag, y; thin_weight_grad_bits gy, x's row bits, parts;
  /// pool x, y;
  /// pool_bwd gy (, x for max), gx; pack_bits spikes, words; unpack_bits
  /// words, spikes; batch_norm x, gamma, beta, running_mean, running_var, y,
  /// saved_mean, saved_invstd (eval: up to y); batch norm's stages as
  /// BatchNormKernels.h lists them; loss y, labels (i32), loss, gy (with
  /// lossGradient), correct; bias_add y, b; bias_grad gy, gb;
  /// channels_first / channels_last in, out; im2col x, col; col2im col, gx;
  /// transpose x, y.
  unsigned getTensorsPerSegment() const;
  /// Elements of tensor `tensor` of segment `segment`: the segment's size,
  /// except for pooling, whose tensors have the input's or the output's
  /// size (the segment's size is its number of threads), and batch norm,
  /// whose per-channel tensors have C elements.
  int64_t getTensorSize(unsigned segment, unsigned tensor) const;
  /// Which tensor of a segment is a u8 mask (-1: none): an i8 memref on the
  /// GPU, a float slot holding 0/1 in the CPU runtime's storage.
  int getMaskTensor() const {
    return kind == OpKernelKind::Dropout      ? 2
           : kind == OpKernelKind::DropoutBwd ? 1
                                              : -1;
  }
  /// The kernel reads the launcher's run values (learning rate, step, seed).
  bool usesRunValues() const {
    return kind == OpKernelKind::SGD || kind == OpKernelKind::Adam ||
           kind == OpKernelKind::Dropout;
  }
  /// "add", "scale", "sgd", "adam", "dropout", "dropout_bwd", "avg_pool",
  /// "sum_pool", "max_pool", "avg_pool_bwd", "sum_pool_bwd", "max_pool_bwd",
  /// "spike_density", "transpose_weight", "event_linear",
  /// "event_weight_grad_bits", "compact_rows", "event_weight_grad_lists",
  /// "event_linear_tiles", "event_linear_band", "thin_weight_grad_bits",
  /// "pack_bits",
  /// "unpack_bits", "batch_norm_stats", "batch_norm_finish",
  /// "batch_norm_apply", "batch_norm_eval", "batch_norm_bwd_stats",
  /// "batch_norm_bwd_finish", "batch_norm_bwd_apply", "loss_ce",
  /// "loss_mse", "loss_ce_max" (and "..._eval" without gy), "bias_add",
  /// "bias_grad", "channels_first", "channels_last", "im2col", "col2im",
  /// "time_sum", "time_broadcast", "transpose".
  StringRef getKindName() const;
  /// Equal keys compute the same thing (one kernel serves both).
  std::string getKey() const;
  /// Blocks of getBlockSize() threads: each segment starts a block; batch
  /// norm's statistics run a block per (channel, part), a loss one block.
  int64_t getGridSize() const;
  /// Threads per block: kOpKernelBlockSize, or the event kernels' own.
  int64_t getBlockSize() const;
  /// Bytes of dynamic shared memory a GPU block needs (event_linear_tiles'
  /// tile; 0 for the others, whose shared memory is static).
  int64_t getDynamicSharedBytes() const;
};

/// A spec with the name the kernel gets.
struct NamedOpKernel {
  std::string name;
  OpKernelSpec spec;
};

/// The memref argument types in ABI order: the tensors of each segment in
/// turn (static 1-d of getTensorSize(); f32, masks i8 on the GPU and f32 on
/// the host, a loss's labels i32), then
/// `memref<4xi32>` for the run values when spec.usesRunValues().
SmallVector<Type> getOpKernelArgTypes(const OpKernelSpec &spec,
                                      MLIRContext *ctx, bool host = false);

/// An empty kernel `name` taking getOpKernelArgTypes(spec), launched with
/// kOpKernelBlockSize threads per block; the insertion point is left
/// unchanged.
gpu::GPUFuncOp createOpGPUKernelFunc(OpBuilder &b, Location loc,
                                     StringRef name, const OpKernelSpec &spec);

/// Adds the kernel `name` to `gpuModule`: block b of the grid belongs to the
/// segment whose block range holds b, thread t of it to element
/// (b - first block) * 256 + t of that segment.
gpu::GPUFuncOp buildOpGPUKernel(OpBuilder &b, Location loc, StringRef name,
                                const OpKernelSpec &spec);

/// Adds at the insertion point the host function `name` over a range of its
/// work items (HostKernelRange.h): a loop over each segment's elements in
/// the range running the same per-element code (batch norm: its channels).
func::FuncOp buildOpHostKernel(OpBuilder &b, Location loc, StringRef name,
                               const OpKernelSpec &spec);

/// Names op kernels as the module compiler asks for them; equal specs share
/// one kernel.
class OpKernelRegistry {
public:
  /// The name of the kernel computing `spec` (`snn_op<N>_<kind>`).
  std::string request(const OpKernelSpec &spec);
  const std::vector<NamedOpKernel> &getKernels() const { return kernels; }
  bool empty() const { return kernels.empty(); }

private:
  llvm::StringMap<std::string> byKey;
  std::vector<NamedOpKernel> kernels;
};

} // namespace mlir::snn

#endif // SNN_CONVERSION_NEURONTOGPU_OPKERNELS_H
