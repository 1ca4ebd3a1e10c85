//===- TrainingOps.cpp - losses and optimizer updates ---------------------===//

#include "CudaOps.h"

#include <cmath>

using namespace snnrt::cuda;

namespace {
enum { kLossCE, kLossMSE, kLossCEMax }; // as in kernels/Loss.cu

void runLoss(CudaDevice &dev, OpCall &call, int kind) {
  expectArity(call, 2, 2, 2, 3);
  const DeviceTensor &y = call.in[0], &labels = call.in[1];
  const DeviceTensor &loss = call.out[0], &gy = call.out[1];
  if (y.shape.size() < 3)
    opError(call, "output " + y.name + " must be [T, B, C]");
  long long t = y.shape[0], b = labels.numel();
  if (b <= 0 || y.numel() % (t * b) != 0 || y.shape[1] != b)
    opError(call, "labels " + labels.name + " (" + std::to_string(b) +
                      ") do not match the batch of " + y.name);
  long long c = y.numel() / (t * b);
  if (c > 8192)
    opError(call, "more than 8192 classes are not supported by the CUDA "
                  "loss kernel");
  if (loss.numel() != 1 || gy.numel() != y.numel())
    opError(call, "outputs must be loss[] and a gradient shaped like " +
                      y.name);
  float *correct = call.out.size() == 3 ? call.out[2].f32() : nullptr;
  float *perSample = reinterpret_cast<float *>(
      dev.scratch("loss.samples", 2 * b * 4, call.where));
  dev.launch(dev.kernels().builtin("snnrt_loss_rate", call.where),
             static_cast<unsigned>(b), 128, static_cast<unsigned>(c * 4),
             call.where, y.f32(), reinterpret_cast<const int *>(labels.ptr),
             gy.f32(), perSample, t, b, c, kind);
  float divisor = static_cast<float>(kind == kLossMSE ? b * c : b);
  dev.launch(dev.kernels().builtin("snnrt_loss_reduce", call.where), 1, 256, 0,
             call.where, static_cast<const float *>(perSample), b, divisor,
             loss.f32(), correct);
}

void expectLike(const OpCall &call, const DeviceTensor &t,
                const DeviceTensor &param) {
  if (t.numel() != param.numel())
    opError(call, "tensor " + t.name + " has " + std::to_string(t.numel()) +
                      " elements; the parameter " + param.name + " has " +
                      std::to_string(param.numel()));
}

void runSgd(CudaDevice &dev, OpCall &call) {
  float momentum = static_cast<float>(attrNumber(call, "momentum", 0.0));
  size_t n = momentum != 0.0f ? 3 : 2;
  expectArity(call, n, n, n - 1, n - 1);
  const DeviceTensor &param = call.in[0], &grad = call.in[1];
  expectLike(call, grad, param);
  if (call.out[0].ptr != param.ptr)
    opError(call, "the updated parameter must be the parameter itself");
  float *buf = nullptr;
  if (n == 3) {
    expectLike(call, call.in[2], param);
    buf = call.in[2].f32();
  }
  dev.launchElementwise(
      "snnrt_sgd", param.numel(), call.where, param.f32(), grad.f32(), buf,
      static_cast<long long>(param.numel()), call.learningRate, momentum,
      static_cast<float>(attrNumber(call, "dampening", 0.0)),
      static_cast<float>(attrNumber(call, "weight_decay", 0.0)),
      int(attrBool(call, "nesterov", false)), int(call.step <= 1));
}

void runAdam(CudaDevice &dev, OpCall &call) {
  expectArity(call, 4, 4, 3, 3);
  const DeviceTensor &param = call.in[0], &grad = call.in[1];
  const DeviceTensor &m = call.in[2], &v = call.in[3];
  for (const DeviceTensor *t : {&grad, &m, &v})
    expectLike(call, *t, param);
  if (call.out[0].ptr != param.ptr || call.out[1].ptr != m.ptr ||
      call.out[2].ptr != v.ptr)
    opError(call, "adam updates param, m and v in place: outputs must be "
                  "its inputs 0, 2 and 3");
  if (call.step < 1)
    opError(call, "the optimizer step must start at 1");
  double beta1 = attrNumber(call, "beta1", 0.9);
  double beta2 = attrNumber(call, "beta2", 0.999);
  // Bias corrections in double on the host, as PyTorch does.
  double step = static_cast<double>(call.step);
  float c1 = static_cast<float>(1.0 - std::pow(beta1, step));
  float c2 = static_cast<float>(1.0 - std::pow(beta2, step));
  dev.launchElementwise(
      "snnrt_adam", param.numel(), call.where, param.f32(), grad.f32(),
      m.f32(), v.f32(), static_cast<long long>(param.numel()),
      call.learningRate, static_cast<float>(beta1), static_cast<float>(beta2),
      static_cast<float>(attrNumber(call, "eps", 1e-8)),
      static_cast<float>(attrNumber(call, "weight_decay", 0.0)),
      int(attrBool(call, "decoupled", false)), c1, c2);
}
} // namespace

bool snnrt::cuda::runTrainingOp(CudaDevice &dev, OpCall &call) {
  std::string kind = call.op.value("op", "");
  if (kind == "loss_ce_rate" || kind == "loss_ce_membrane")
    runLoss(dev, call, kLossCE);
  else if (kind == "loss_mse_rate")
    runLoss(dev, call, kLossMSE);
  else if (kind == "loss_ce_membrane_max")
    runLoss(dev, call, kLossCEMax);
  else if (kind == "sgd")
    runSgd(dev, call);
  else if (kind == "adam")
    runAdam(dev, call);
  else
    return false;
  return true;
}
