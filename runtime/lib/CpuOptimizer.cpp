//===- CpuOptimizer.cpp - SGD and Adam/AdamW on the CPU -------------------===//
//
// torch.optim semantics, element by element in float like PyTorch's
// single-tensor path; the learning rate and the 1-based step come from the
// launcher (RunContext).
//
//===----------------------------------------------------------------------===//

#include "CpuOpContext.h"

#include <cmath>

namespace snnrt {
namespace cpu {
namespace {

void sgd(const Ctx &c) {
  float momentum = c.attr("momentum", 0.0f),
        dampening = c.attr("dampening", 0.0f),
        weightDecay = c.attr("weight_decay", 0.0f);
  bool nesterov = c.attr("nesterov", false);
  bool hasBuf = momentum != 0.0f;
  c.arity(hasBuf ? 3 : 2, 3, hasBuf ? 2 : 1, 2);
  if (nesterov && (momentum <= 0.0f || dampening != 0.0f))
    c.fail("Nesterov momentum requires a momentum and zero dampening");
  size_t n = c.in(0).numel();
  c.expectElements(c.in(1), n, "the gradient, like the parameter");
  if (c.op.out[0] != c.op.in[0])
    c.fail("the updated parameter must be the parameter itself (in[0])");
  float *param = c.inPtr(0);
  const float *grad = c.inPtr(1);
  float *buf = nullptr;
  if (hasBuf) {
    c.expectElements(c.in(2), n, "the momentum buffer, like the parameter");
    buf = c.inPtr(2);
  }
  float lr = c.run.learningRate;
  bool first = c.run.step <= 1; // the buffer starts as the gradient
  for (size_t i = 0; i < n; ++i) {
    float g = grad[i];
    if (weightDecay != 0.0f)
      g = g + weightDecay * param[i];
    if (buf) {
      float b = first ? g : momentum * buf[i] + (1.0f - dampening) * g;
      buf[i] = b;
      g = nesterov ? g + momentum * b : b;
    }
    param[i] = param[i] - lr * g;
  }
}

void adam(const Ctx &c) {
  c.arity(4, 4, 3, 3);
  float beta1 = c.attr("beta1", 0.9f), beta2 = c.attr("beta2", 0.999f),
        eps = c.attr("eps", 1e-8f), weightDecay = c.attr("weight_decay", 0.0f);
  bool decoupled = c.attr("decoupled", false);
  if (c.run.step < 1)
    c.fail("the optimizer step must start at 1");
  size_t n = c.in(0).numel();
  for (size_t i = 1; i < 4; ++i)
    c.expectElements(c.in(i), n, "like the parameter");
  if (c.op.out[0] != c.op.in[0])
    c.fail("the updated parameter must be the parameter itself (in[0])");
  float *param = c.inPtr(0), *m = c.inPtr(2), *v = c.inPtr(3);
  const float *grad = c.inPtr(1);
  float lr = c.run.learningRate;
  double step = static_cast<double>(c.run.step);
  float c1 = static_cast<float>(1.0 - std::pow(double(beta1), step));
  float c2 = static_cast<float>(1.0 - std::pow(double(beta2), step));
  float stepSize = lr / c1, root2 = std::sqrt(c2);
  for (size_t i = 0; i < n; ++i) {
    float p = param[i], g = grad[i];
    if (weightDecay != 0.0f) {
      if (decoupled)
        p = p * (1.0f - lr * weightDecay);
      else
        g = g + weightDecay * p;
    }
    float mi = beta1 * m[i] + (1.0f - beta1) * g;
    float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    param[i] = p - stepSize * (mi / (std::sqrt(vi) / root2 + eps));
  }
}

} // namespace

void runOptimizer(const Ctx &c) {
  if (c.op.kind == "sgd")
    return sgd(c);
  return adam(c);
}

} // namespace cpu
} // namespace snnrt
