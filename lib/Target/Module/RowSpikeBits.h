//===- RowSpikeBits.h - spikes written as row bits --------------*- C++ -*-===//
//
// A spiking layer whose spikes, in training, only compact_rows reads (the
// event_linear_tiles forward of each event-driven linear layer it feeds,
// whose row lists the weight gradient reads again) writes them as row bits
// (kSpikeRowBitsAttrName) instead of floats: its training forward kernel
// stores T x N / 8 bytes instead of T x N floats, and compact_rows reads
// K / 32 words per row instead of K floats. The lists, and every result,
// are those of the float spikes (a thin readout's weight gradient over the
// bits sums in its own fixed order: within rounding of the dense GEMM's). In the same way a spiking layer's
// backward writes its input gradient's occupancy as row bits for
// compact_columns (writesGradRowBits).
//
//===----------------------------------------------------------------------===//

#ifndef SNN_LIB_TARGET_MODULE_ROWSPIKEBITS_H
#define SNN_LIB_TARGET_MODULE_ROWSPIKEBITS_H

#include "snn/Dialect/SNN/IR/SNNOps.h"

#include "mlir/IR/Operation.h"

namespace mlir::snn {

/// What the choice depends on among --snn-compile's options.
struct RowSpikeBitsOptions {
  /// --snn-compile row-bits (on by default).
  bool enabled = false;
  /// --snn-compile grad-bits (on by default).
  bool gradBits = false;
  /// The shared memory event_linear_tiles may use on every chip; 0 when the
  /// module runs no tiles (target=cpu, or event-tiles off).
  int64_t sharedMemoryLimit = 0;
  /// --snn-compile spike-bits: the weight gradients read pack_bits' bits.
  bool spikeBits = false;
  /// Fills dynamic batch dimensions.
  int64_t batch = 0;
};

/// Whether the multi-step neuron op `neuron` of a training function writes
/// its training spikes as row bits: a lif or if layer (no pooling, batch
/// norm or time split fused into it) whose [T, B, K] spikes (K a multiple
/// of 32) it counts itself (--snn-fuse), read only by its neuron_bwd, by
/// event-driven linear layers that always take the event path and run as
/// tiles (or, thin layers, as the per-row event_linear, which lists a row
/// from its words), and as x by their event-driven weight gradients over
/// row lists or by a thin layer's weight gradient alone
/// (readsThinWeightGradBits).
bool writesSpikeRowBits(Operation *neuron, const RowSpikeBitsOptions &options);

/// Whether the dense linear_bwd `bwd`, if its x is row bits, runs as
/// thin_weight_grad_bits + time_sum: it computes gw only (no bias; gx not
/// needed or formed by the neuron backward that reads it, --snn-fuse
/// linear-grad) of at most kMaxThinOutputs outputs, K a multiple of 32.
bool readsThinWeightGradBits(LinearBwdOp bwd);

/// Whether the backward kernel of the multi-step spiking op `neuron` also
/// writes its input gradient gx's occupancy as row bits
/// (kGradRowBitsAttrName): it counts gx for the one event-driven
/// linear_bwd that reads it (--snn-fuse), whose weight gradient lists gy's
/// nonzero rows per column (compact_columns: no spike-bits, the lists
/// kernel fits) over rows of N outputs, N a multiple of 32. compact_columns
/// then reads N / 32 words a row instead of N floats.
bool writesGradRowBits(Operation *neuron, const RowSpikeBitsOptions &options);

} // namespace mlir::snn

#endif // SNN_LIB_TARGET_MODULE_ROWSPIKEBITS_H
