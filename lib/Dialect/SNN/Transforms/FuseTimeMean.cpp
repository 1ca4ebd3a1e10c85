//===- FuseTimeMean.cpp - a loss's time mean in the neuron scans ----------===//
//
// A time-mean loss reads snn.time_sum of a layer's output and sends its
// gradient back through snn.time_broadcast: two kernels of their own over
// [T, B, F]. The layer's forward and backward scans hold every step of
// every neuron, so they add the mean up and read the broadcast gradient
// themselves (FusedTimeMean.h). This selects those layers.
//
//===----------------------------------------------------------------------===//

#include "FuseTimeMean.h"
#include "FusionRemarks.h"

#include "snn/Dialect/SNN/IR/FusedCount.h"
#include "snn/Dialect/SNN/IR/FusedPool.h"
#include "snn/Dialect/SNN/IR/FusedTimeMean.h"

using namespace mlir;
using namespace mlir::snn;

/// Why the scans of `neuron` cannot compute its time mean (empty when they
/// can).
static std::string whyNotFused(Operation *neuron) {
  if (!isa<LIFOp, IFOp, PLIFOp, LIOp, CubaLIFOp>(neuron))
    return "the layer is not a multi-step neuron layer with a generated "
           "kernel";
  auto type = cast<RankedTensorType>(neuron->getResult(0).getType());
  if (!type.getElementType().isF32())
    return "its output is not f32";
  if (!type.hasStaticShape())
    return "its output's shape is not static";
  if (neuron->hasAttr(kFusedPoolAttrName))
    return "the layer is fused with its pooling";
  if (!getInitState(neuron).empty() || !getFinalState(neuron).empty())
    return "the layer is split in time";
  return "";
}

TimeMeanFusion mlir::snn::fuseTimeMeanIntoNeuron(Operation *neuron) {
  TimeMeanFusion fused;
  Value output = neuron->getResult(0);
  TimeSumOp sum;
  for (Operation *user : output.getUsers())
    if (auto s = dyn_cast<TimeSumOp>(user); s && !sum)
      sum = s;
  // Only the training forward saves H and runs the kernel that adds up.
  NeuronBwdOp bwd = getNeuronBackward(neuron);
  if (!sum || !bwd)
    return fused;
  std::string why = whyNotFused(neuron);
  if (!why.empty()) {
    neuron->emitRemark() << "time mean not computed in the scan of "
                     << describeForRemark(neuron) << ": " << why;
    return fused;
  }
  OpBuilder b(neuron);
  neuron->setAttr(kFusedTimeMeanAttrName, sum.getScaleAttr());
  sum->setAttr(kTimeSumInNeuronAttrName, b.getUnitAttr());
  fused.mean = true;
  auto type = cast<RankedTensorType>(output.getType());
  double kib = type.getNumElements() * 4.0 / 1024;
  neuron->emitRemark() << "time mean computed in the forward scan of "
                   << describeForRemark(neuron) << ": the " << int64_t(kib)
                   << " KiB output is not read again";
  // The gradient of the mean, broadcast over the steps, when the backward
  // reads nothing else as its output's gradient.
  auto broadcast = bwd.getGradOutput().getDefiningOp<TimeBroadcastOp>();
  if (!broadcast)
    return fused;
  if (!broadcast.getOutput().hasOneUse()) {
    neuron->emitRemark() << "time broadcast not read in the backward scan "
                              "of "
                           << describeForRemark(neuron)
                           << ": other ops read its output";
    return fused;
  }
  neuron->setAttr(kFusedTimeBroadcastAttrName, broadcast.getScaleAttr());
  broadcast->setAttr(kTimeBroadcastInNeuronAttrName, b.getUnitAttr());
  fused.broadcast = true;
  neuron->emitRemark() << "time broadcast read in the backward scan of "
                         << describeForRemark(neuron) << ": the " << int64_t(kib)
                         << " KiB gradient is not written";
  return fused;
}
