//===- LayerKernels.h - the glue kernels of linear and conv layers -*- C++ -*-===//
//
// What a linear or convolution layer computes around its GEMM (cuBLAS,
// cuDNN, CPU BLAS), as op kernels (OpKernels.h): the bias add, the bias
// gradient, the layout copies between [images, O, P] and [O, images * P],
// and im2col / col2im for the convolutions that run as GEMMs over column
// buffers (docs/artifact-format.md, "Layer ops: library calls and their
// kernels"). Every kernel but the bias gradient is one thread per element;
// the bias gradient sums in a fixed order (a block per channel on the GPU,
// float64 over a block of channels on the host), so it is deterministic.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_CONVERSION_NEURONTOGPU_LAYERKERNELS_H
#define SNN_CONVERSION_NEURONTOGPU_LAYERKERNELS_H

#include "snn/Conversion/NeuronToGPU/OpKernels.h"

namespace mlir::snn {

inline bool isLayerKernel(OpKernelKind kind) {
  return kind == OpKernelKind::BiasAdd || kind == OpKernelKind::BiasGrad ||
         kind == OpKernelKind::ChannelsFirst ||
         kind == OpKernelKind::ChannelsLast || kind == OpKernelKind::Im2col ||
         kind == OpKernelKind::Col2im;
}

/// y[rows, channels, inner] += b[channels] (inner = 1: a linear layer's
/// per-feature bias; inner = OH * OW: a convolution's per-channel bias).
OpKernelSpec makeBiasAddSpec(const ChannelGeometry &g);
/// gb[c] (+= with accumulate) the sum over rows and inner of gy[r, c, i].
OpKernelSpec makeBiasGradSpec(const ChannelGeometry &g, bool accumulate);
/// out[c, r * inner + i] = in[r, c, i] (first = true) or the inverse.
OpKernelSpec makeChannelLayoutSpec(const ChannelGeometry &g, bool first);
/// im2col: col[k, m * P + p] of x[images, C, H, W], k = (c, kh, kw) over
/// all C channels (group g's rows are the g-th C/groups * KH * KW); with
/// channelsLast, col[m * P + p, (kh, kw, c)] of x[images, H, W, C]; col2im:
/// gx (+= with accumulate) the sum of the column entries that read it.
OpKernelSpec makeColumnsSpec(const ConvColumnsGeometry &g, bool col2im,
                             bool accumulate = false);

/// Emits, at the insertion point, the code of element `i` of an
/// elementwise layer kernel (all but the bias gradient).
void emitLayerElement(OpBuilder &b, Location loc, const OpKernelSpec &spec,
                      ValueRange args, Value i);

/// Threads of an elementwise layer kernel.
int64_t getLayerKernelThreads(const OpKernelSpec &spec);

/// The host form of the elementwise layer kernels works on rows of
/// contiguous elements (no index division per element): the elements of
/// one work item (1: an element per item, as on the GPU).
int64_t getLayerHostRowLength(const OpKernelSpec &spec);
/// Emits, at the insertion point, host work item `item` (a row).
void emitLayerHostRow(OpBuilder &b, Location loc, const OpKernelSpec &spec,
                      ValueRange args, Value item);

/// The bias gradient on the GPU: block `channel` sums its channel; `scratch`
/// is workgroup memory of kOpKernelBlockSize f32.
MemRefType getBiasGradScratchType(MLIRContext *ctx);
void emitBiasGradGPUBlock(OpBuilder &b, Location loc, const OpKernelSpec &spec,
                          ValueRange args, Value scratch, Value channel,
                          Value lane);
/// On the host: work item `item` sums getBiasGradChannelsPerItem channels
/// in float64 (row by row, so that a linear layer's rows are read in order).
int64_t getBiasGradHostItems(const OpKernelSpec &spec);
void emitBiasGradHostItem(OpBuilder &b, Location loc, const OpKernelSpec &spec,
                          ValueRange args, Value item);

} // namespace mlir::snn

#endif // SNN_CONVERSION_NEURONTOGPU_LAYERKERNELS_H
