//===- TestKernels.cpp - a stand-in for a module's CPU kernel library -----===//
//
// The runtime's tests build without the compiler, so their hand-written
// modules cannot carry compiler-generated kernels. This library exports a
// kernel with the ABI of the generated ones (docs/artifact-format.md,
// "Generated op kernels": `void NAME(void **args, int64_t begin, int64_t
// end)`, one pointer per tensor of the op's `args`, then the run values;
// `NAME_range` = {items, grain}), so that those modules train and
// the runtime's generic launch path is tested. It is test code: the runtime
// itself computes nothing of an op.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cmath>
#include <cstring>

namespace {
float scalar(void *tensor) { return *static_cast<const float *>(tensor); }
} // namespace

/// torch.optim.SGD with momentum (no dampening, not Nesterov) over several
/// parameters. args: segments [1], momentum [1], weight_decay [1], then per
/// parameter its size [1] (the element count), param, grad, momentum buffer;
/// then the run values (word 0: learning rate, word 1: 1-based step). One
/// work item (its sizes are data, not compile-time constants).
extern "C" const int64_t snnrt_test_sgd_momentum_range[2] = {1, 1};
extern "C" void snnrt_test_sgd_momentum(void **args, int64_t begin,
                                        int64_t end) {
  if (begin > 0 || end < 1)
    return;
  int segments = static_cast<int>(scalar(args[0]));
  float momentum = scalar(args[1]), weightDecay = scalar(args[2]);
  const uint32_t *run = static_cast<const uint32_t *>(args[3 + 4 * segments]);
  float lr;
  std::memcpy(&lr, &run[0], sizeof lr);
  bool first = run[1] <= 1;
  for (int s = 0; s < segments; ++s) {
    void **seg = args + 3 + 4 * s;
    long n = static_cast<long>(scalar(seg[0]));
    float *param = static_cast<float *>(seg[1]);
    const float *grad = static_cast<const float *>(seg[2]);
    float *buf = static_cast<float *>(seg[3]);
    for (long i = 0; i < n; ++i) {
      float g = grad[i] + weightDecay * param[i];
      buf[i] = first ? g : momentum * buf[i] + g;
      param[i] = param[i] - lr * buf[i];
    }
  }
}

/// Cross-entropy of softmax(mean_t y) for y[T, B, C] and labels [B] (i32),
/// as the generated loss kernels compute it. args: T [1], B [1], C [1],
/// gradient [1] (0 or 1), y, labels, loss, gy (when gradient), correct.
/// Without the gradient (evaluation), samples labeled -1 are skipped and
/// the loss is the mean over the others.
extern "C" void snnrt_test_loss_ce(void **args) {
  long T = static_cast<long>(scalar(args[0]));
  long B = static_cast<long>(scalar(args[1]));
  long C = static_cast<long>(scalar(args[2]));
  bool gradient = scalar(args[3]) != 0.0f;
  const float *y = static_cast<const float *>(args[4]);
  const int32_t *labels = static_cast<const int32_t *>(args[5]);
  float *loss = static_cast<float *>(args[6]);
  float *gy = gradient ? static_cast<float *>(args[7]) : nullptr;
  float *correct = static_cast<float *>(args[gradient ? 8 : 7]);
  double total = 0.0, hits = 0.0, counted = 0.0;
  for (long b = 0; b < B; ++b) {
    if (!gradient && labels[b] == -1)
      continue;
    counted += 1.0;
    double m[64], best = -1e300, sum = 0.0;
    long arg = 0;
    for (long c = 0; c < C; ++c) {
      m[c] = 0.0;
      for (long t = 0; t < T; ++t)
        m[c] += y[(t * B + b) * C + c];
      m[c] /= double(T);
      if (m[c] > best)
        best = m[c], arg = c;
    }
    for (long c = 0; c < C; ++c)
      sum += std::exp(m[c] - best);
    total += std::log(sum) + best - m[labels[b]];
    hits += arg == labels[b];
    for (long c = 0; gy && c < C; ++c) {
      double g = std::exp(m[c] - best) / sum - (c == labels[b]);
      for (long t = 0; t < T; ++t)
        gy[(t * B + b) * C + c] = static_cast<float>(g / double(B * T));
    }
  }
  *loss = static_cast<float>(total / (gradient ? double(B) : counted));
  *correct = static_cast<float>(hits);
}

/// A linear layer's bias, y[r, c] += b[c]. args: rows [1], channels [1], y,
/// b. One work item.
extern "C" const int64_t snnrt_test_bias_add_range[2] = {1, 1};
extern "C" void snnrt_test_bias_add(void **args, int64_t begin, int64_t end) {
  if (begin > 0 || end < 1)
    return;
  long rows = static_cast<long>(scalar(args[0]));
  long channels = static_cast<long>(scalar(args[1]));
  float *y = static_cast<float *>(args[2]);
  const float *b = static_cast<const float *>(args[3]);
  for (long r = 0; r < rows; ++r)
    for (long c = 0; c < channels; ++c)
      y[r * channels + c] += b[c];
}

/// Its gradient, gb[c] = the sum over r of gy[r, c] (float64, rows in
/// order). args: rows [1], channels [1], gy, gb. One work item.
extern "C" const int64_t snnrt_test_bias_grad_range[2] = {1, 1};
extern "C" void snnrt_test_bias_grad(void **args, int64_t begin,
                                     int64_t end) {
  if (begin > 0 || end < 1)
    return;
  long rows = static_cast<long>(scalar(args[0]));
  long channels = static_cast<long>(scalar(args[1]));
  const float *gy = static_cast<const float *>(args[2]);
  float *gb = static_cast<float *>(args[3]);
  for (long c = 0; c < channels; ++c) {
    double sum = 0.0;
    for (long r = 0; r < rows; ++r)
      sum += gy[r * channels + c];
    gb[c] = static_cast<float>(sum);
  }
}
