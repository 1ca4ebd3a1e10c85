//===- CpuThreads.h - the CPU threads of the generated kernels --*- C++ -*-===//
//
// The generated CPU kernels take a range of their work items
// (docs/artifact-format.md, "CPU kernels and threads"); the runtime splits
// the items into contiguous ranges, one per thread of a small persistent
// pool, which also runs slices of the GEMMs. Items never share an output,
// so every thread count gives the same bits (the GEMMs are guaranteed to
// only at a fixed OPENBLAS_NUM_THREADS).
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CPUTHREADS_H
#define SNNRT_CPUTHREADS_H

#include <cstdint>
#include <functional>

namespace snnrt {

/// Sets the number of CPU threads (>= 1) of the generated kernels and, unless
/// OPENBLAS_NUM_THREADS is set, of the GEMMs (OpenBLAS's, or the pool's with
/// setGemmsOnPool). 1 runs every kernel on the calling thread.
void setCpuThreads(int threads);

/// With `on`, unless OPENBLAS_NUM_THREADS is set, OpenBLAS runs on one
/// thread and each GEMM is cut into tiles on the pool (splitsGemms): one set
/// of threads. For modules whose steps are mostly generated kernels or
/// small GEMMs (event-driven and convolutional ones): OpenBLAS's own
/// threads keep spinning after a call and slowed the kernels that ran next
/// (16 cores: the event-driven SHD step 14-83 ms, 16-18 with tiles; the
/// conv net 1.8x faster with tiles). Off (the default) keeps OpenBLAS's
/// threads, faster for a few large GEMMs (the Fashion-MNIST MLP on 16
/// cores: 1.8-2.2 ms, 3.0-3.5 with tiles).
void setGemmsOnPool(bool on);

/// Whether the GEMMs run as tiles on the pool (setGemmsOnPool, OpenBLAS
/// linked in, OPENBLAS_NUM_THREADS not set, more than one thread).
bool splitsGemms();

/// The number of CPU threads: setCpuThreads's, else SNN_NUM_THREADS, else
/// the cores this process may run on.
int getCpuThreads();

/// The contiguous range [begin, end) of `items` that chunk `chunk` of
/// `chunks` runs (sizes differ by at most one).
std::pair<int64_t, int64_t> getChunkRange(int64_t items, int64_t chunks,
                                          int64_t chunk);

/// Runs body(begin, end) over [0, items) in at most getCpuThreads()
/// contiguous ranges of at least `grain` items (fewer for the last), the
/// calling thread taking the first; returns when all have run. Runs on the
/// calling thread alone when the pool is busy (a concurrent or nested call).
void parallelFor(int64_t items, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &body);

} // namespace snnrt

#endif // SNNRT_CPUTHREADS_H
