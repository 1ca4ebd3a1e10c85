//===- FuseNeuronPool.cpp - select neuron layers fusable with their pooling
//-===//
//
// A spiking layer followed by an average or sum pooling writes the whole
// spike tensor [T, B, C, H, W] only for the pooling to read it back; in
// training the pooling's gradient writes the whole dL/dS only for the neuron
// backward to read it back. When the windows tile the input (kernel ==
// stride, no padding, the window divides H and W), one kernel with a thread
// per window can scan T for the window's neurons and write the pooled spikes
// only, and the neuron backward can spread the pooled gradient over the
// window itself. Max pooling is not a candidate: its backward needs the
// unpooled spikes to find each window's maximum.
//
// This pass selects those pairs and says, as a remark on each neuron layer
// followed by a pooling, whether it is fused and why not. A fused layer
// carries `snn.fused_pool = {kind = "avg" | "sum", kernel = [KH, KW]}` (with
// `channels_last` when the pooling reads [.., H, W, C] maps): the
// IR keeps both ops (and, in training, the pooling's backward), so every
// other pass reads it unchanged, and the module emitter writes the pair as
// one manifest `neuron` op whose output is the pooled tensor and, in
// training, one `neuron_bwd` that reads the pooled gradient. The neuron
// backward reads the saved membrane, not the spikes, so a training layer is
// fused when the gradient of its spikes is exactly the pooling's backward.
//
// The pass also fuses the batch norm in front of a layer into the layer's
// kernel (FuseBatchNormNeuron.cpp), in training and inference, in
// training the batch norm backward's sums into the neuron backward, and the
// input counts of event-driven layers into the neuron kernels that write
// those inputs (FuseNeuronCount.cpp), and marks the event-driven input
// gradients that a banded layer reads only in its band (FuseBandMask.cpp),
// and has the neuron backward compute a thin linear backward's input
// gradient that it alone reads (FuseLinearGrad.cpp).
//
//===----------------------------------------------------------------------===//

#include "FuseBandMask.h"
#include "FuseBatchNormNeuron.h"
#include "FuseLinearGrad.h"
#include "FuseTimeMean.h"
#include "FuseNeuronCount.h"

#include "snn/Dialect/SNN/IR/FusedPool.h"
#include "snn/Dialect/SNN/Transforms/Passes.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::snn {
#define GEN_PASS_DEF_SNNFUSEPASS
#include "snn/Dialect/SNN/Transforms/Passes.h.inc"
} // namespace mlir::snn

using namespace mlir;
using namespace mlir::snn;

namespace {

bool isPool(Operation *op) {
  return isa<AvgPool2DOp, SumPool2DOp, MaxPool2DOp>(op);
}

/// Why `pool`'s windows do not tile its input, or an empty string.
template <typename PoolOp>
std::string getTilingFailure(PoolOp pool) {
  ArrayRef<int64_t> kernel = pool.getKernelSize();
  SmallVector<int64_t, 2> stride = pool.getEffectiveStride();
  ArrayRef<int64_t> padding = pool.getPadding();
  if (padding[0] != 0 || padding[1] != 0)
    return llvm::formatv("its windows are padded ({0}x{1})", padding[0],
                         padding[1]);
  if (kernel[0] != stride[0] || kernel[1] != stride[1])
    return llvm::formatv("its windows overlap or leave gaps (kernel {0}x{1}, "
                         "stride {2}x{3})",
                         kernel[0], kernel[1], stride[0], stride[1]);
  auto type = cast<RankedTensorType>(pool.getInput().getType());
  int64_t last = type.getRank() - (pool.getChannelsLast() ? 2 : 1);
  int64_t h = type.getDimSize(last - 1);
  int64_t w = type.getDimSize(last);
  if (ShapedType::isDynamic(h) || ShapedType::isDynamic(w) ||
      h % kernel[0] != 0 || w % kernel[1] != 0)
    return llvm::formatv("its {0}x{1} windows do not tile the {2}x{3} input",
                         kernel[0], kernel[1], h, w);
  return "";
}

/// Why the neuron layer `op` and the pooling `pool` that reads its spikes
/// cannot be fused, or an empty string when they can.
std::string getFusionFailure(Operation *op, Operation *pool,
                             unsigned numOtherUsers) {
  if (isa<PLIFOp>(op))
    return "snn.plif has no generated neuron kernel to fuse into";
  if (isa<LIOp>(op))
    return "snn.li outputs its membrane, not spikes";
  if (!getInitState(op).empty() || !getFinalState(op).empty())
    return "a layer split in time (--snn-split-time) chains its state "
           "between ranks, which the pooled kernel does not";
  // Before the other users: max pooling's backward is one of them.
  if (isa<MaxPool2DOp>(pool))
    return "max pooling's backward needs the unpooled spikes to find each "
           "window's maximum";
  if (numOtherUsers > 0)
    return llvm::formatv("the spikes have {0} other user(s) besides the "
                         "pooling",
                         numOtherUsers);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (!type.getElementType().isF32())
    return "generated neuron kernels are f32 only";
  if (!type.hasStaticShape())
    return "the spike tensor has a dynamic shape";
  return TypeSwitch<Operation *, std::string>(pool)
      .Case<AvgPool2DOp, SumPool2DOp>(
          [](auto p) { return getTilingFailure(p); })
      .Default([](Operation *) { return "not a pooling op"; });
}

/// Why the gradient of the spikes that `bwd` (the layer's snn.neuron_bwd)
/// reads is not the backward of `pool` alone, or an empty string: the
/// fused backward reads the pooling's output gradient instead.
std::string getBackwardFailure(NeuronBwdOp bwd, Operation *pool) {
  if (!bwd.getGradFinalState().empty())
    return "its backward chains a final state (--snn-split-time)";
  Operation *grad = bwd.getGradOutput().getDefiningOp();
  bool matches = false;
  auto same = [&](auto p, auto g) {
    return p.getKernelSize() == g.getKernelSize() &&
           p.getEffectiveStride() == g.getEffectiveStride() &&
           p.getPadding() == g.getPadding() &&
           p.getChannelsLast() == g.getChannelsLast();
  };
  if (auto avg = dyn_cast<AvgPool2DOp>(pool))
    if (auto g = dyn_cast_or_null<AvgPool2DBwdOp>(grad))
      matches = same(avg, g);
  if (auto sum = dyn_cast<SumPool2DOp>(pool))
    if (auto g = dyn_cast_or_null<SumPool2DBwdOp>(grad))
      matches = same(sum, g);
  if (!matches)
    return "the gradient of the spikes is not the backward of that pooling";
  if (!grad->getResult(0).hasOneUse())
    return "the pooling's backward has other users besides the neuron "
           "backward";
  return "";
}

/// {kind = "avg" | "sum", kernel = [KH, KW]} of a tiling pooling, with
/// `channels_last` when it pools [.., H, W, C] maps.
DictionaryAttr getFusedPoolAttr(Operation *pool) {
  Builder b(pool->getContext());
  ArrayRef<int64_t> kernel =
      isa<AvgPool2DOp>(pool) ? cast<AvgPool2DOp>(pool).getKernelSize()
                             : cast<SumPool2DOp>(pool).getKernelSize();
  SmallVector<NamedAttribute, 3> entries{
      b.getNamedAttr("kind",
                     b.getStringAttr(isa<AvgPool2DOp>(pool) ? "avg" : "sum")),
      b.getNamedAttr("kernel", b.getDenseI64ArrayAttr(kernel))};
  if (pool->hasAttr("channels_last"))
    entries.push_back(b.getNamedAttr("channels_last", b.getUnitAttr()));
  return b.getDictionaryAttr(entries);
}

struct SNNFusePass : snn::impl::SNNFusePassBase<SNNFusePass> {
  using SNNFusePassBase::SNNFusePassBase;

  void runOnOperation() override {
    getOperation().walk([&](NeuronOpInterface neuron) {
      if (neuron.isStepForm())
        return;
      Operation *op = neuron.getOperation();
      BatchNormFusion bn = fuseBatchNorm ? fuseBatchNormIntoNeuron(op)
                                         : BatchNormFusion::NoBatchNorm;
      if (bn == BatchNormFusion::Fused)
        ++numFusedBatchNorms;
      else if (bn == BatchNormFusion::Unfused)
        ++numUnfusedBatchNorms;
      fusePoolAfter(op);
      // After the pooling: a pooled layer's backward threads differ.
      if (bn == BatchNormFusion::Fused && fuseBatchNormBackward) {
        BatchNormFusion backward = fuseBatchNormBackwardIntoNeuron(op);
        if (backward == BatchNormFusion::Fused)
          ++numFusedBatchNormBackwards;
        else if (backward == BatchNormFusion::Unfused)
          ++numUnfusedBatchNormBackwards;
      }
      if (bn == BatchNormFusion::Fused && fuseRecompute &&
          fuseRecomputeIntoNeuron(op) == BatchNormFusion::Fused)
        ++numRecomputedH;
      // Last: a pooled layer writes no per-neuron spikes, a backward that
      // sums its batch norm's gradient has threads of its own.
      if (fuseSpikeCount) {
        CountFusion counts = fuseCountsIntoNeuron(op);
        numFusedCounts += counts.fused;
        numUnfusedCounts += counts.unfused;
      }
      if (fuseTimeMean) {
        TimeMeanFusion mean = fuseTimeMeanIntoNeuron(op);
        numFusedTimeMeans += mean.mean;
        numFusedTimeBroadcasts += mean.broadcast;
      }
    });
    if (fuseBandMask)
      getOperation().walk([&](LinearBwdOp bwd) {
        if (fuseBandMaskIntoGradient(bwd))
          ++numBandMasked;
      });
    // After the pooling and batch norm fusions, which it checks.
    if (fuseLinearGrad)
      getOperation().walk([&](LinearBwdOp bwd) {
        if (fuseLinearGradIntoNeuronBackward(bwd))
          ++numFusedLinearGrads;
      });
  }

  /// Marks `op` with snn.fused_pool when its spikes go to a pooling that it
  /// can compute; a remark when there is one.
  void fusePoolAfter(Operation *op) {
    Value spikes = op->getResult(0);
    // The neuron backward reads the saved membrane, not the spikes: its
    // use stays valid when the spikes are never written.
    Operation *pool = nullptr;
    NeuronBwdOp bwd;
    unsigned numOtherUsers = 0;
    for (OpOperand &use : spikes.getUses()) {
      Operation *user = use.getOwner();
      if (auto b = dyn_cast<NeuronBwdOp>(user);
          b && !bwd && &use == &b.getForwardMutable())
        bwd = b;
      else if (!pool && isPool(user))
        pool = user;
      else
        ++numOtherUsers;
    }
    if (!pool || !fusePool)
      return;
    std::string failure = getFusionFailure(op, pool, numOtherUsers);
    if (failure.empty() && bwd)
      failure = getBackwardFailure(bwd, pool);
    if (!failure.empty()) {
      op->emitRemark() << "not fused with the following "
                       << pool->getName() << (bwd ? " (train)" : "")
                       << ": " << failure;
      ++numUnfused;
      return;
    }
    auto type = cast<RankedTensorType>(spikes.getType());
    double mib = type.getNumElements() * 4.0 / (1 << 20);
    op->setAttr(kFusedPoolAttrName, getFusedPoolAttr(pool));
    if (bwd) {
      op->emitRemark() << "fused (train) with the following "
                       << pool->getName() << ": the "
                       << llvm::formatv("{0:F1}", mib)
                       << " MiB spike tensor and its gradient are not "
                          "written";
      ++numFusedTrain;
      return;
    }
    op->emitRemark() << "fused with the following " << pool->getName()
                     << ": the " << llvm::formatv("{0:F1}", mib)
                     << " MiB spike tensor is not written";
    ++numFused;
  }
};

} // namespace
