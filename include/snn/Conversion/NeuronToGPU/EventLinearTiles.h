//===- EventLinearTiles.h - event_linear over row lists, tiles shared -*- C++
//-*-===//
//
// event_linear_tiles: y [M, N] = x w^T + b for an input x [M, K] given as
// compact_rows' per-row lists of its nonzero columns (and values). The GPU
// form keeps a tile of the weight w [N, K] — C output features, all K
// inputs, stored transposed — in a block's dynamic shared memory and runs
// a block's share of the rows against it: every event (a listed input of
// a row) reads its C weights from shared memory, not from L2, and the
// weights are read from L2 once per block instead of once per event. Used
// with `--snn-compile="event-tiles=true"` (ManifestBuilder::
// emitEventLinearTiles says for which layers). The host form does the
// same with a tile on the stack, a work item per tile. Both add a row's
// listed inputs in list (input) order, then the bias: the same sums as
// event_linear's. Both read w as it is: no transpose_weight before them.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_CONVERSION_NEURONTOGPU_EVENTLINEARTILES_H
#define SNN_CONVERSION_NEURONTOGPU_EVENTLINEARTILES_H

#include "snn/Conversion/NeuronToGPU/OpKernels.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace mlir::snn {

/// The dynamic shared memory a block may opt into on every CUDA chip of
/// `chips` ("sm_80": 163 KiB, "sm_90": 227 KiB, "sm_86": 99 KiB; the CUDA
/// programming guide's table of compute capabilities), in bytes.
int64_t getSharedMemoryLimit(llvm::ArrayRef<std::string> chips);

/// The output features C of event_linear_tiles' shared tile for x [., K]
/// and w [N, K] under `sharedLimit` bytes: 32, 16 or 8, the widest whose
/// (K + 1) x C floats fit; 0 when none fits or N or K is not a multiple of
/// 4 (the tile's rows and the row lists are read 4 at a time).
int64_t getEventTileColumns(int64_t inFeatures, int64_t outFeatures,
                            int64_t sharedLimit);

/// Whether an event-driven linear layer of x [., K] and w [N, K] runs as
/// compact_rows then event_linear_tiles under `sharedLimit` bytes (0: no
/// tiles): a tile fits, and N >= 256 (narrower outputs read few weights per
/// event: the per-row kernel, which lists a row's inputs itself, is faster
/// there; a 20-wide readout on an H100: 55 us against 43 + 31 us).
bool runsAsEventTiles(int64_t inFeatures, int64_t outFeatures,
                      int64_t sharedLimit);

/// Bytes of event_linear_tiles' tile ((K + 1) x C floats: a row of zeros
/// after the weights).
int64_t getEventTileSharedBytes(const OpKernelSpec &spec);
/// Blocks: ceil(N / C) tiles times the chunks of rows each tile is split
/// into (the fewest chunks that fill a GPU of 132 SMs and keep 90% of its
/// waves' block slots busy).
int64_t getEventTileGridSize(const OpKernelSpec &spec);
/// Threads per block of event_linear_tiles.
inline constexpr int64_t kEventTileThreads = 1024;

/// Emits event_linear_tiles' GPU form at the insertion point of a kernel
/// taking `args` (getEventKernelArgTypes) launched with kEventTileThreads
/// threads per block and getEventTileSharedBytes of dynamic shared memory.
void emitEventLinearTilesGPU(OpBuilder &b, Location loc,
                             const OpKernelSpec &spec, ValueRange args,
                             Value block, Value lane);
/// Tiles of C output features: the GPU grid's tiles, the host form's work
/// items.
int64_t getEventTileCount(const OpKernelSpec &spec);
/// Emits event_linear_tiles' host form into the ranged host function `fn`
/// (a work item per tile) at the insertion point.
void emitEventLinearTilesHost(OpBuilder &b, Location loc,
                              const OpKernelSpec &spec, func::FuncOp fn,
                              ValueRange args);

} // namespace mlir::snn

#endif // SNN_CONVERSION_NEURONTOGPU_EVENTLINEARTILES_H
