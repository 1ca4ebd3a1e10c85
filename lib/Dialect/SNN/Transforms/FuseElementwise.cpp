//===- FuseElementwise.cpp - fold elementwise ops into neuron ops ---------===//
//
// A neuron op scales its input by a gain before charging the membrane
// (H = ... + c X; the synaptic current of cuba_lif takes c_syn X). A constant
// snn.scale on that input is the same multiplication, so it moves into the
// gain and the neuron kernel does the work of both. The gain touches only the
// input term, so firing, every reset mode and the backward pass (gX = c gH)
// are unchanged up to floating-point rounding of c * a.
//
//===----------------------------------------------------------------------===//

#include "snn/Dialect/SNN/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::snn {
#define GEN_PASS_DEF_SNNFUSEELEMENTWISEPASS
#include "snn/Dialect/SNN/Transforms/Passes.h.inc"
} // namespace mlir::snn

using namespace mlir;
using namespace mlir::snn;

namespace {

/// The name and default of the attribute that multiplies a neuron's input, or
/// nothing for neurons without one (PLIF: c = sigmoid(w) or 1).
struct InputGain {
  StringRef name;
  double defaultValue;
};

static std::optional<InputGain> getInputGain(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<InputGain>>(op)
      .Case<LIFOp, LIFStepOp, LIOp, LIStepOp>(
          [](auto) { return InputGain{"c", 0.5}; })
      .Case<IFOp, IFStepOp>([](auto) { return InputGain{"c", 1.0}; })
      .Case<CubaLIFOp, CubaLIFStepOp>(
          [](auto) { return InputGain{"c_syn", 1.0}; })
      .Default([](Operation *) { return std::nullopt; });
}

/// `param * factor` for a scalar (f64) or per-neuron (dense float) parameter,
/// computed in double and stored in the parameter's own element type.
static Attribute scaleParam(Attribute param, double factor) {
  if (auto scalar = getScalarParam(param))
    return FloatAttr::get(cast<FloatAttr>(param).getType(), *scalar * factor);
  auto dense = cast<DenseFPElementsAttr>(param);
  auto elementType = cast<FloatType>(dense.getElementType());
  SmallVector<APFloat> values;
  values.reserve(dense.getNumElements());
  for (APFloat v : dense.getValues<APFloat>()) {
    APFloat scaled(v.convertToDouble() * factor);
    bool losesInfo = false;
    scaled.convert(elementType.getFloatSemantics(),
                   APFloat::rmNearestTiesToEven, &losesInfo);
    values.push_back(scaled);
  }
  return DenseElementsAttr::get(dense.getType(), values);
}

/// neuron(scale(x, a)) -> neuron(x) with its input gain multiplied by a.
struct FoldScaleIntoNeuron : OpInterfaceRewritePattern<NeuronOpInterface> {
  FoldScaleIntoNeuron(MLIRContext *ctx, llvm::Statistic &folded)
      : OpInterfaceRewritePattern<NeuronOpInterface>(ctx), folded(folded) {}

  LogicalResult matchAndRewrite(NeuronOpInterface neuron,
                                PatternRewriter &rewriter) const override {
    Operation *op = neuron.getOperation();
    std::optional<InputGain> gain = getInputGain(op);
    if (!gain)
      return rewriter.notifyMatchFailure(op, "neuron has no input gain");
    auto scale = neuron.getInput().getDefiningOp<ScaleOp>();
    if (!scale)
      return rewriter.notifyMatchFailure(op, "input is not an snn.scale");
    // Every neuron op takes its input as operand #0.
    OpOperand &input = op->getOpOperand(0);
    assert(input.get() == neuron.getInput() && "neuron input is not operand 0");

    Attribute current = op->getAttr(gain->name);
    if (!current)
      current = rewriter.getF64FloatAttr(gain->defaultValue);
    Attribute scaled =
        scaleParam(current, scale.getScale().convertToDouble());
    rewriter.modifyOpInPlace(op, [&] {
      input.set(scale.getInput());
      op->setAttr(gain->name, scaled);
    });
    ++folded;
    return success();
  }

  llvm::Statistic &folded;
};

struct SNNFuseElementwisePass
    : snn::impl::SNNFuseElementwisePassBase<SNNFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldScaleIntoNeuron>(&getContext(), numScalesFolded);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
