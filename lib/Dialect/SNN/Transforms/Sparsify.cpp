//===- Sparsify.cpp - event-driven linear layers on spike inputs ----------===//
//
// Marks `snn.linear` ops (and, for the CPU, `snn.conv2d` ops) whose input is
// spikes with `event_driven = d`; the module compiler turns them into a
// density measurement plus a dense and an event-driven path that choose
// between themselves on the device. Spikes are
// recognised structurally: result 0 of a spiking neuron op, seen through ops
// that keep zeros zero (flatten, scale, dropout). Likewise `snn.linear_bwd`
// whose output gradient is the input gradient of a neuron layer with a
// surrogate band (`grad_band`, the sparse backward): mostly exact zeros.
//
//===----------------------------------------------------------------------===//

#include "snn/Dialect/SNN/Transforms/Passes.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::snn {
#define GEN_PASS_DEF_SNNSPARSIFY
#include "snn/Dialect/SNN/Transforms/Passes.h.inc"
} // namespace mlir::snn

using namespace mlir;
using namespace mlir::snn;

namespace {

/// The CPU's is a margin below the density where the event-driven layer and
/// BLAS took equal time, about 20% (bench/results/2026-11-25-cpu-sparse.md);
/// the CUDA one below the 9-10% measured on an H100 for the SHD network's
/// hidden layers (5% for its 20-wide readout;
/// bench/results/2026-11-27-H100-sparse-lists.md). Both are only the
/// module's defaults: `snn-run MODULE calibrate` measures each layer's on a
/// device and the runtime then uses that.
constexpr double kDefaultCpuCrossover = 0.15;
constexpr double kDefaultCudaCrossover = 0.08;
/// The backward's: the density of the output gradient up to which its
/// event-driven gx and gw run (bench/results/2026-11-25-cpu2-sparse-backward.md;
/// CUDA: 16% measured for a hidden layer's backward on an H100 with the
/// weight gradient on row lists, the same page).
constexpr double kDefaultCpuBackwardCrossover = 0.15;
/// A convolution's, on the CPU: a margin below the 30-50% where the
/// event-driven kernel and im2col + BLAS took equal time on five 3x3 layers
/// in two runs (the lowest, a stride-2 one;
/// bench/results/2026-12-08-cpu2-event-conv.md). Its weight gradient takes
/// the same default (not measured on its own; `snn-run calibrate` does).
constexpr double kDefaultCpuConvCrossover = 0.25;
constexpr double kDefaultCudaBackwardCrossover = 0.10;

/// Why `value` is not known to be spikes, or an empty string when it is.
std::string whyNotSpikes(Value value, bool inputIsSpikes) {
  while (true) {
    Operation *def = value.getDefiningOp();
    if (!def)
      return inputIsSpikes ? ""
                           : "a function argument (data, not spikes; pass "
                             "input-is-spikes if it is spike data)";
    if (auto flatten = dyn_cast<FlattenOp>(def)) {
      value = flatten.getInput();
      continue;
    }
    if (auto scale = dyn_cast<ScaleOp>(def)) {
      value = scale.getInput();
      continue;
    }
    if (auto dropout = dyn_cast<DropoutOp>(def)) {
      value = dropout.getInput();
      continue;
    }
    if (isa<LIOp, LIStepOp>(def))
      return "the membrane of a non-spiking '" +
             def->getName().getStringRef().str() + "' readout";
    if (isa<NeuronOpInterface>(def)) {
      if (cast<OpResult>(value).getResultNumber() == 0)
        return "";
      return "a state result of '" + def->getName().getStringRef().str() +
             "' (a membrane or current, not its spikes)";
    }
    return "the result of '" + def->getName().getStringRef().str() +
           "' (not spikes)";
  }
}

/// Why the output gradient `gy` of a linear_bwd is not known to be banded
/// (mostly zeros), or an empty string when it is.
std::string whyNotBandedGradient(Value gy) {
  auto bwd = gy.getDefiningOp<NeuronBwdOp>();
  if (!bwd)
    return gy.getDefiningOp()
               ? "the result of '" +
                     gy.getDefiningOp()->getName().getStringRef().str() +
                     "' (not a neuron layer's input gradient)"
               : "a function argument";
  Operation *forward = bwd.getForward().getDefiningOp();
  if (isa_and_nonnull<LIOp>(forward))
    return "the input gradient of a non-spiking '" +
           forward->getName().getStringRef().str() +
           "' readout (no surrogate)";
  auto surrogate =
      forward ? forward->getAttrOfType<SurrogateAttr>("surrogate") : nullptr;
  if (!surrogate || !surrogate.getGradBand())
    return "the input gradient of a neuron layer without a surrogate band "
           "(set grad-threshold in --snn-autodiff, or grad_band on its "
           "surrogate)";
  return "";
}

struct SparsifyPass : public snn::impl::SNNSparsifyBase<SparsifyPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    if (target != "cpu" && target != "cuda")
      return emitError(UnknownLoc::get(ctx))
             << "snn-sparsify: target must be cpu or cuda, not '" << target
             << "'";
    if (!(crossover >= 0.0 && crossover <= 1.0))
      return emitError(UnknownLoc::get(ctx))
             << "snn-sparsify: crossover must be a density in (0, 1], or 0 "
                "for the target's default; got "
             << static_cast<double>(crossover);
    if (minFeatures < 1)
      return emitError(UnknownLoc::get(ctx))
             << "snn-sparsify: min-features must be at least 1, got "
             << static_cast<int64_t>(minFeatures);
    return success();
  }

  void runOnOperation() override {
    double density = crossover > 0.0 ? double(crossover)
                     : target == "cuda" ? kDefaultCudaCrossover
                                        : kDefaultCpuCrossover;
    double backwardDensity = crossover > 0.0 ? double(crossover)
                             : target == "cuda"
                                 ? kDefaultCudaBackwardCrossover
                                 : kDefaultCpuBackwardCrossover;
    getOperation().walk([&](LinearOp linear) {
      std::string why = whyNotSpikes(linear.getInput(), inputIsSpikes);
      if (!why.empty()) {
        linear.emitRemark() << "snn-sparsify: left dense: its input is "
                            << why;
        return;
      }
      int64_t features =
          cast<RankedTensorType>(linear.getWeight().getType()).getDimSize(1);
      if (features < minFeatures) {
        linear.emitRemark()
            << "snn-sparsify: left dense: its input has " << features
            << " features, fewer than min-features=" << static_cast<int64_t>(minFeatures);
        return;
      }
      linear.setEventDrivenAttr(
          FloatAttr::get(Float64Type::get(&getContext()), density));
      ++numEventDriven;
    });
    // Convolutions: event-driven on the CPU only (on a GPU cuDNN runs them
    // at a fraction of a microsecond per image; no GPU form exists).
    getOperation().walk([&](Conv2DOp conv) {
      std::string why = whyNotSpikes(conv.getInput(), inputIsSpikes);
      if (!why.empty()) {
        conv.emitRemark() << "snn-sparsify: left dense: its input is " << why;
        return;
      }
      if (target != "cpu") {
        conv.emitRemark() << "snn-sparsify: left dense: event-driven "
                             "convolutions run on the CPU only (target=cpu); "
                             "on a GPU cuDNN runs this layer";
        return;
      }
      if (conv.getGroups() != 1) {
        conv.emitRemark() << "snn-sparsify: left dense: a grouped "
                             "convolution (groups = "
                          << conv.getGroups() << ")";
        return;
      }
      conv.setEventDrivenAttr(FloatAttr::get(
          Float64Type::get(&getContext()),
          crossover > 0.0 ? double(crossover) : kDefaultCpuConvCrossover));
      ++numEventDrivenConvolutions;
    });
    // A convolution's weight gradient on spikes (after --snn-autodiff): gw
    // over the nonzero inputs, on the CPU.
    getOperation().walk([&](Conv2DBwdOp bwd) {
      std::string why = whyNotSpikes(bwd.getInput(), inputIsSpikes);
      if (!why.empty()) {
        bwd.emitRemark() << "snn-sparsify: weight gradient left dense: its "
                            "input is "
                         << why;
        return;
      }
      if (target != "cpu" || bwd.getGroups() != 1) {
        bwd.emitRemark() << "snn-sparsify: weight gradient left dense: "
                         << (target != "cpu"
                                 ? "event-driven convolutions run on the CPU "
                                   "only (target=cpu)"
                                 : "a grouped convolution");
        return;
      }
      bwd.setEventDrivenAttr(FloatAttr::get(
          Float64Type::get(&getContext()),
          crossover > 0.0 ? double(crossover) : kDefaultCpuConvCrossover));
      ++numEventDrivenConvolutionBackwards;
    });
    getOperation().walk([&](LinearBwdOp bwd) {
      std::string why = whyNotBandedGradient(bwd.getGradOutput());
      if (!why.empty()) {
        bwd.emitRemark() << "snn-sparsify: backward left dense: its output "
                            "gradient is "
                         << why;
        return;
      }
      int64_t features =
          cast<RankedTensorType>(bwd.getWeight().getType()).getDimSize(0);
      if (features < minFeatures) {
        bwd.emitRemark() << "snn-sparsify: backward left dense: its output "
                            "gradient has "
                         << features << " features, fewer than min-features="
                         << static_cast<int64_t>(minFeatures);
        return;
      }
      bwd.setEventDrivenAttr(
          FloatAttr::get(Float64Type::get(&getContext()), backwardDensity));
      ++numEventDrivenBackward;
    });
  }
};

} // namespace
