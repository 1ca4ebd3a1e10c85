//===- TimeSplit.cu - the sums of a module split in time ------------------===//
//
// Not op math: what the CPU runtime's TimeSplitOps.cpp does in loops, for
// the ranks of a time split on a GPU (the loss's time mean, its gradient,
// and the sums of the ranks of one process). Each rounds as the CPU does,
// so that results agree bit for bit.

#include "Common.cuh"

/// y[i] = scale * sum over t of x[t, i], summed in double in step order.
extern "C" __global__ void snnrt_time_sum(const float *x, float *y,
                                          long long steps, long long row,
                                          double scale) {
  SNNRT_GRID_LOOP(i, row) {
    double sum = 0.0;
    for (long long t = 0; t < steps; ++t)
      sum += x[t * row + i];
    y[i] = static_cast<float>(scale * sum);
  }
}

/// y[t, i] = scale * x[i] for every step t.
extern "C" __global__ void snnrt_time_broadcast(const float *x, float *y,
                                                long long steps, long long row,
                                                double scale) {
  SNNRT_GRID_LOOP(i, steps * row) y[i] = static_cast<float>(scale * x[i % row]);
}

/// y[i] += x[i]: one rank's part of a sum over the ranks.
extern "C" __global__ void snnrt_accumulate(float *y, const float *x,
                                            long long n) {
  SNNRT_GRID_LOOP(i, n) y[i] += x[i];
}
