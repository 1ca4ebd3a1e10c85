//===- SpikeBitsKernels.h - pack/unpack kernels of saved spikes -*- C++ -*-===//
//
// Spikes that training keeps for a weight gradient are stored as bits: a
// pack_bits kernel after the neuron layer writes 32 spikes per u32 word
// (element 32 w + j of the flattened tensor is bit j of word w), and an
// unpack_bits kernel rebuilds the 0/1 floats right before the gradient op
// that reads them (docs/artifact-format.md, "Bit-packed saved spikes").
//
//===----------------------------------------------------------------------===//

#ifndef SNN_LIB_CONVERSION_NEURONTOGPU_SPIKEBITSKERNELS_H
#define SNN_LIB_CONVERSION_NEURONTOGPU_SPIKEBITSKERNELS_H

#include "snn/Conversion/NeuronToGPU/OpKernels.h"

namespace mlir::snn {

inline bool isSpikeBitsKernel(const OpKernelSpec &spec) {
  return spec.kind == OpKernelKind::PackBits ||
         spec.kind == OpKernelKind::UnpackBits;
}

/// pack_bits: (spikes memref<E x f32>, words memref<W x i32>); unpack_bits:
/// (words, spikes). The same on the GPU and the host (the CPU runtime keeps
/// a word in a 4-byte slot).
SmallVector<Type> getSpikeBitsArgTypes(const OpKernelSpec &spec,
                                       MLIRContext *ctx);

/// The code of word `w`: packs or unpacks its (up to) 32 spikes.
void emitSpikeBitsWord(OpBuilder &b, Location loc, const OpKernelSpec &spec,
                       ValueRange args, Value w);

} // namespace mlir::snn

#endif // SNN_LIB_CONVERSION_NEURONTOGPU_SPIKEBITSKERNELS_H
