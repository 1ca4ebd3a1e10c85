//===- Sparsify.cpp - event-driven linear layers on spike inputs ----------===//
//
// Marks `snn.linear` ops whose input is spikes with `event_driven = d`; the
// module compiler turns them into a density measurement plus a dense and an
// event-driven path that choose between themselves on the device. Spikes are
// recognised structurally: result 0 of a spiking neuron op, seen through ops
// that keep zeros zero (flatten, scale, dropout).
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
/// the CUDA one is provisional until bench/gpu-sparse.sh measures it per GPU.
constexpr double kDefaultCpuCrossover = 0.15;
constexpr double kDefaultCudaCrossover = 0.05;

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
  }
};

} // namespace
