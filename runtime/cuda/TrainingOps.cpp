//===- TrainingOps.cpp - losses --------------------------------------------===//

#include "CudaOps.h"

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

} // namespace

bool snnrt::cuda::runTrainingOp(CudaDevice &dev, OpCall &call) {
  std::string kind = call.op.value("op", "");
  if (kind == "loss_ce_rate" || kind == "loss_ce_membrane")
    runLoss(dev, call, kLossCE);
  else if (kind == "loss_mse_rate")
    runLoss(dev, call, kLossMSE);
  else if (kind == "loss_ce_membrane_max")
    runLoss(dev, call, kLossCEMax);
  else
    return false;
  return true;
}
