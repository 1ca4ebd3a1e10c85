//===- TimeSplit.cu - the sum of the ranks of one process -----------------===//
//
// Not op math: the threads backend (P ranks of a time split as virtual
// devices of one GPU) adds one rank's part of a sum over the ranks into
// another's buffer, in rank order, as the CPU backend does.

#include "Common.cuh"

/// y[i] += x[i]: one rank's part of a sum over the ranks.
extern "C" __global__ void snnrt_accumulate(float *y, const float *x,
                                            long long n) {
  SNNRT_GRID_LOOP(i, n) y[i] += x[i];
}
