//===- Loss.cu - rate/membrane losses on the time mean of y[T, B, C] ------===//
//
// One block per sample writes its gradient, loss and correctness to a
// scratch buffer; one block then sums them in a fixed order. The max-over-
// time variant reads max_t y instead of the mean, and its gradient goes to
// the first step that reaches the maximum.
//
//===----------------------------------------------------------------------===//

#include "Common.cuh"

enum { SNN_LOSS_CE, SNN_LOSS_MSE, SNN_LOSS_CE_MAX };

/// perSample[b] = loss of sample b, perSample[B + b] = 1 if correct.
/// A label outside [0, C) makes the loss NaN (the host checks labels).
extern "C" __global__ void snnrt_loss_rate(const float *y, const int *labels,
                                           float *gy, float *perSample,
                                           long long T, long long B,
                                           long long C, int kind) {
  extern __shared__ float mean[]; // C floats
  __shared__ float scratch[32];
  long long b = blockIdx.x;
  int label = labels[b];
  bool valid = label >= 0 && label < C;
  bool maxOverTime = kind == SNN_LOSS_CE_MAX;
  for (long long c = threadIdx.x; c < C; c += blockDim.x) {
    if (maxOverTime) {
      float m = y[b * C + c];
      for (long long t = 1; t < T; ++t)
        m = fmaxf(m, y[(t * B + b) * C + c]);
      mean[c] = m;
      continue;
    }
    float s = 0.0f;
    for (long long t = 0; t < T; ++t)
      s += y[(t * B + b) * C + c];
    mean[c] = s / (float)T;
  }
  __syncthreads();
  // The first maximum wins ties, as torch.argmax.
  float best = mean[0];
  long long arg = 0;
  for (long long c = 1; c < C; ++c)
    if (mean[c] > best) {
      best = mean[c];
      arg = c;
    }
  float lse = 0.0f;
  if (kind != SNN_LOSS_MSE) {
    float e = 0.0f;
    for (long long c = threadIdx.x; c < C; c += blockDim.x)
      e += expf(mean[c] - best);
    lse = best + logf(blockSum(e, scratch));
  }
  float local = 0.0f;
  for (long long c = threadIdx.x; c < C; c += blockDim.x) {
    float target = c == label ? 1.0f : 0.0f, g;
    if (kind != SNN_LOSS_MSE) {
      g = (expf(mean[c] - lse) - target) / (float)B;
      if (c == label)
        local = lse - mean[c];
    } else {
      float d = mean[c] - target;
      local += d * d;
      g = 2.0f * d / (float)(B * C);
    }
    if (maxOverTime) {
      // d max_t / d y[t]: 1 at the first step that reaches the maximum.
      bool found = false;
      for (long long t = 0; t < T; ++t) {
        bool at = !found && y[(t * B + b) * C + c] == mean[c];
        found |= at;
        gy[(t * B + b) * C + c] = at ? g : 0.0f;
      }
      continue;
    }
    g /= (float)T; // d mean_t / d y[t]
    for (long long t = 0; t < T; ++t)
      gy[(t * B + b) * C + c] = g;
  }
  float loss = blockSum(local, scratch);
  if (threadIdx.x == 0) {
    perSample[b] = valid ? loss : __int_as_float(0x7fc00000);
    perSample[B + b] = valid && arg == label ? 1.0f : 0.0f;
  }
}

/// loss = sum of per-sample losses / divisor; correct = sum of hits.
extern "C" __global__ void snnrt_loss_reduce(const float *perSample,
                                             long long B, float divisor,
                                             float *loss, float *correct) {
  __shared__ float scratch[32];
  float l = 0.0f, k = 0.0f;
  for (long long b = threadIdx.x; b < B; b += blockDim.x) {
    l += perSample[b];
    k += perSample[B + b];
  }
  l = blockSum(l, scratch);
  k = blockSum(k, scratch);
  if (threadIdx.x == 0) {
    *loss = l / divisor;
    if (correct)
      *correct = k;
  }
}
