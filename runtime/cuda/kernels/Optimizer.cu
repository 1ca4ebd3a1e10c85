//===- Optimizer.cu - SGD and Adam/AdamW, PyTorch semantics ---------------===//

#include "Common.cuh"

/// torch.optim.SGD; `first` is the first step (the momentum buffer starts
/// as the gradient).
extern "C" __global__ void snnrt_sgd(float *param, const float *grad,
                                     float *buf, long long n, float lr,
                                     float momentum, float dampening,
                                     float weightDecay, int nesterov,
                                     int first) {
  SNNRT_GRID_LOOP(i, n) {
    float g = grad[i];
    if (weightDecay != 0.0f)
      g = g + weightDecay * param[i];
    if (momentum != 0.0f) {
      float b = first ? g : momentum * buf[i] + (1.0f - dampening) * g;
      buf[i] = b;
      g = nesterov ? g + momentum * b : b;
    }
    param[i] = param[i] - lr * g;
  }
}

/// torch.optim.Adam / AdamW (decoupled); the bias corrections 1 - beta^step
/// come from the host.
extern "C" __global__ void snnrt_adam(float *param, const float *grad,
                                      float *m, float *v, long long n, float lr,
                                      float beta1, float beta2, float eps,
                                      float weightDecay, int decoupled,
                                      float correction1, float correction2) {
  float stepSize = lr / correction1;
  float root2 = sqrtf(correction2);
  SNNRT_GRID_LOOP(i, n) {
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
    float denom = sqrtf(vi) / root2 + eps;
    param[i] = p - stepSize * (mi / denom);
  }
}
