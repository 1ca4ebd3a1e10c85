//===- Autodiff.cpp - @train_step from a multi-step @forward --------------===//
//
// Reverse-mode differentiation of the multi-step form. Every op there works
// on whole [T, B, ...] tensors, so the adjoint of each op is one op too: the
// BPTT of a neuron layer is a single reverse-time scan (snn.neuron_bwd), the
// weight gradient of a linear/conv layer one GEMM/convolution over all T*B
// rows. The backward ops follow the forward ops in reverse order, and the
// optimizer ops come last, which is the order the compiled module's
// backward and update programs run in.
//
// A recurrent layer (an snn.time_loop that temporal fusion kept) is unrolled
// into one copy of its body per step (snn.time_slice / snn.time_stack at the
// edges), and each step neuron gets an snn.neuron_step_bwd: BPTT through the
// recurrence, step by step.
//
//===----------------------------------------------------------------------===//

#include "snn/Dialect/SNN/Transforms/Passes.h"
#include "snn/Dialect/SNN/Transforms/GradBand.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::snn {
#define GEN_PASS_DEF_SNNAUTODIFF
#include "snn/Dialect/SNN/Transforms/Passes.h.inc"
} // namespace mlir::snn

using namespace mlir;
using namespace mlir::snn;

namespace {

/// Gradients of the values of @train_step, built op by op in reverse.
class GradientBuilder {
public:
  GradientBuilder(OpBuilder &b, const DenseSet<Value> &requiresGrad)
      : b(b), requiresGrad(requiresGrad) {}

  void seed(Value v, Value grad) { grads[v] = grad; }
  /// The gradient of `v` (null: none). Slices of `v` taken by an unrolled
  /// loop hand their gradients in per step; they are stacked here, once all
  /// of `v`'s users are differentiated.
  Value gradOf(Value v) {
    auto it = sliceGrads.find(v);
    if (it != sliceGrads.end()) {
      auto type = cast<RankedTensorType>(v.getType());
      auto stepType = RankedTensorType::get(type.getShape().drop_front(),
                                            type.getElementType());
      SmallVector<Value> steps(type.getDimSize(0));
      for (auto [index, grad] : it->second)
        steps[index] = steps[index]
                           ? AccumulateOp::create(b, v.getLoc(), steps[index], grad)
                           : grad;
      for (Value &step : steps)
        if (!step)
          step = zeros(v.getLoc(), stepType);
      sliceGrads.erase(it);
      accumulate(v, TimeStackOp::create(b, v.getLoc(), type, steps));
    }
    return grads.lookup(v);
  }
  bool needs(Value v) const { return v && requiresGrad.contains(v); }

  /// Adds the adjoint ops of `op`, given the gradients of its results.
  LogicalResult differentiate(Operation *op);

private:
  /// Fan-out: a value used twice gets the sum of both gradients.
  void accumulate(Value v, Value grad) {
    if (!needs(v))
      return;
    auto [it, inserted] = grads.try_emplace(v, grad);
    if (!inserted)
      it->second = AccumulateOp::create(b, grad.getLoc(), it->second, grad);
  }

  template <typename WeightOp, typename BwdOp>
  void weightLayer(WeightOp op, Value gy, ArrayRef<NamedAttribute> geometry);

  Value zeros(Location loc, Type type) {
    auto ranked = cast<RankedTensorType>(type);
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(ranked, b.getFloatAttr(
                                                   ranked.getElementType(), 0.0)));
  }

  /// One step of a recurrent neuron layer.
  LogicalResult stepNeuron(Operation *op);

  /// Average and sum pooling: the gradient depends on the window only.
  template <typename BwdOp, typename PoolOp>
  LogicalResult windowPool(PoolOp pool, Value gy) {
    if (needs(pool.getInput()))
      accumulate(pool.getInput(),
                 BwdOp::create(b, pool.getLoc(), pool.getInput().getType(), gy,
                               pool.getKernelSizeAttr(), pool.getStrideAttr(),
                               pool.getPaddingAttr(),
                               pool.getChannelsLastAttr()));
    return success();
  }

  OpBuilder &b;
  const DenseSet<Value> &requiresGrad;
  DenseMap<Value, Value> grads;
  /// Per sliced value: (step, gradient of that step's slice).
  llvm::MapVector<Value, SmallVector<std::pair<int64_t, Value>>> sliceGrads;
};

template <typename WeightOp, typename BwdOp>
void GradientBuilder::weightLayer(WeightOp op, Value gy,
                                  ArrayRef<NamedAttribute> geometry) {
  bool needGx = needs(op.getInput());
  // A frozen bias gets no gradient (has_bias means "compute gb").
  Value bias = needs(op.getBias()) ? op.getBias() : Value();
  bool needParams = needs(op.getWeight()) || bias;
  if (!needGx && !needParams)
    return;
  SmallVector<Type> types;
  if (needGx)
    types.push_back(op.getInput().getType());
  types.push_back(op.getWeight().getType());
  if (bias)
    types.push_back(bias.getType());
  SmallVector<NamedAttribute> attrs{
      b.getNamedAttr("has_bias", b.getBoolAttr(static_cast<bool>(bias))),
      b.getNamedAttr("need_gx", b.getBoolAttr(needGx))};
  attrs.append(geometry.begin(), geometry.end());
  auto bwd = BwdOp::create(b, op.getLoc(), types,
                           ValueRange{gy, op.getInput(), op.getWeight()}, attrs);
  unsigned i = 0;
  if (needGx)
    accumulate(op.getInput(), bwd.getGrads()[i++]);
  accumulate(op.getWeight(), bwd.getGrads()[i++]);
  if (bias)
    accumulate(bias, bwd.getGrads()[i]);
}

LogicalResult GradientBuilder::stepNeuron(Operation *op) {
  if (auto cuba = dyn_cast<CubaLIFStepOp>(op)) {
    // (spikes, i_next, v_next) from (input, i, v).
    Value gs = gradOf(cuba.getSpikes()), gi = gradOf(cuba.getINext()),
          gv = gradOf(cuba.getVNext());
    if ((!gs && !gi && !gv) ||
        (!needs(cuba.getInput()) && !needs(cuba.getI()) && !needs(cuba.getV())))
      return success();
    Type type = cuba.getInput().getType();
    Location loc = op->getLoc();
    auto orZeros = [&](Value g) { return g ? g : zeros(loc, type); };
    auto bwd = CubaLIFStepBwdOp::create(b, loc, type, type, type, orZeros(gs),
                                        orZeros(gi), orZeros(gv),
                                        cuba.getSpikes());
    accumulate(cuba.getInput(), bwd.getGradInput());
    accumulate(cuba.getI(), bwd.getGradPrevCurrent());
    accumulate(cuba.getV(), bwd.getGradPrevState());
    return success();
  }
  if (auto plif = dyn_cast<PLIFStepOp>(op)) {
    Value gs = gradOf(plif.getSpikes()), gv = gradOf(plif.getVNext());
    if ((!gs && !gv) || (!needs(plif.getInput()) && !needs(plif.getV()) &&
                         !needs(plif.getW())))
      return success();
    Type type = plif.getInput().getType();
    Location loc = op->getLoc();
    auto bwd = PLIFStepBwdOp::create(
        b, loc, type, type, plif.getW().getType(), gs ? gs : zeros(loc, type),
        gv ? gv : zeros(loc, type), plif.getSpikes(), plif.getV(),
        plif.getW());
    accumulate(plif.getInput(), bwd.getGradInput());
    accumulate(plif.getV(), bwd.getGradPrevState());
    accumulate(plif.getW(), bwd.getGradW());
    return success();
  }
  // lif_step / if_step: (spikes, v_next); li_step: (v_next), which is both.
  Value gs = gradOf(op->getResult(0));
  Value gv = op->getNumResults() > 1 ? gradOf(op->getResult(1)) : Value();
  Value input = op->getOperand(0), state = op->getOperand(1);
  if ((!gs && !gv) || (!needs(input) && !needs(state)))
    return success();
  Type type = input.getType();
  Location loc = op->getLoc();
  auto bwd = NeuronStepBwdOp::create(b, loc, type, type,
                                     gs ? gs : zeros(loc, type),
                                     gv ? gv : zeros(loc, type),
                                     op->getResult(0));
  accumulate(input, bwd.getGradInput());
  accumulate(state, bwd.getGradPrevState());
  return success();
}

LogicalResult GradientBuilder::differentiate(Operation *op) {
  if (isa<ParamOp>(op) || op->getNumResults() == 0)
    return success();
  if (isa<LIFStepOp, IFStepOp, LIStepOp, CubaLIFStepOp, PLIFStepOp>(op))
    return stepNeuron(op);
  Value gy = gradOf(op->getResult(0));
  if (!gy)
    return success(); // not on a path to the loss
  Location loc = op->getLoc();

  if (auto neuron = dyn_cast<NeuronOpInterface>(op)) {
    auto plif = dyn_cast<PLIFOp>(op);
    if (!needs(neuron.getInput()) && !(plif && needs(plif.getW())))
      return success();
    Type gwType = plif ? plif.getW().getType() : Type();
    auto bwd = NeuronBwdOp::create(b, loc, neuron.getInput().getType(), gwType,
                                   TypeRange(), gy, op->getResult(0),
                                   ValueRange());
    accumulate(neuron.getInput(), bwd.getGradInput());
    if (plif)
      accumulate(plif.getW(), bwd.getGradW());
    return success();
  }

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<LinearOp>([&](LinearOp linear) {
        weightLayer<LinearOp, LinearBwdOp>(linear, gy, {});
        return success();
      })
      .Case<Conv2DOp>([&](Conv2DOp conv) {
        SmallVector<NamedAttribute> geometry{
            b.getNamedAttr("stride", conv.getStrideAttr()),
            b.getNamedAttr("padding", conv.getPaddingAttr()),
            b.getNamedAttr("dilation", conv.getDilationAttr()),
            b.getNamedAttr("groups", conv.getGroupsAttr())};
        // The backward runs in the forward's layout.
        if (conv.getChannelsLast())
          geometry.push_back(
              b.getNamedAttr("channels_last", conv.getChannelsLastAttr()));
        weightLayer<Conv2DOp, Conv2DBwdOp>(conv, gy, geometry);
        return success();
      })
      .Case<AvgPool2DOp>([&](AvgPool2DOp pool) {
        return windowPool<AvgPool2DBwdOp>(pool, gy);
      })
      .Case<SumPool2DOp>([&](SumPool2DOp pool) {
        return windowPool<SumPool2DBwdOp>(pool, gy);
      })
      .Case<MaxPool2DOp>([&](MaxPool2DOp pool) {
        if (needs(pool.getInput()))
          accumulate(pool.getInput(),
                     MaxPool2DBwdOp::create(b, loc, pool.getInput().getType(),
                                            gy, pool.getInput(),
                                            pool.getKernelSizeAttr(),
                                            pool.getStrideAttr(),
                                            pool.getPaddingAttr(),
                                            pool.getChannelsLastAttr()));
        return success();
      })
      .Case<BatchNormOp>([&](BatchNormOp bn) {
        if (!needs(bn.getInput()) && !needs(bn.getGamma()) &&
            !needs(bn.getBeta()))
          return success();
        auto bwd = BatchNormBwdOp::create(b, loc, bn.getInput().getType(),
                                          bn.getGamma().getType(),
                                          bn.getGamma().getType(), gy,
                                          bn.getInput(), bn.getGamma(),
                                          bn.getResult());
        accumulate(bn.getInput(), bwd.getGradInput());
        accumulate(bn.getGamma(), bwd.getGradGamma());
        accumulate(bn.getBeta(), bwd.getGradBeta());
        return success();
      })
      .Case<FlattenOp>([&](FlattenOp flatten) {
        if (needs(flatten.getInput()))
          accumulate(flatten.getInput(),
                     ReshapeOp::create(b, loc, flatten.getInput().getType(), gy));
        return success();
      })
      .Case<TimeSliceOp>([&](TimeSliceOp slice) {
        if (needs(slice.getInput()))
          sliceGrads[slice.getInput()].push_back({slice.getIndex(), gy});
        return success();
      })
      .Case<TimeStackOp>([&](TimeStackOp stack) {
        for (auto [index, step] : llvm::enumerate(stack.getSteps()))
          if (needs(step))
            accumulate(step, TimeSliceOp::create(b, loc, step.getType(), gy,
                                                 int64_t(index)));
        return success();
      })
      .Case<TransposeOp>([&](TransposeOp transpose) {
        // gx = gy permuted back: gx dim perm[i] is gy dim i.
        if (!needs(transpose.getInput()))
          return success();
        ArrayRef<int64_t> perm = transpose.getPermutation();
        SmallVector<int64_t> inverse(perm.size());
        for (auto [i, p] : llvm::enumerate(perm))
          inverse[p] = i;
        accumulate(transpose.getInput(),
                   TransposeOp::create(b, loc, transpose.getInput().getType(),
                                       gy, inverse));
        return success();
      })
      .Case<ReshapeOp>([&](ReshapeOp reshape) {
        if (needs(reshape.getInput()))
          accumulate(reshape.getInput(),
                     ReshapeOp::create(b, loc, reshape.getInput().getType(), gy));
        return success();
      })
      .Case<AddOp>([&](AddOp add) {
        accumulate(add.getLhs(), gy);
        accumulate(add.getRhs(), gy);
        return success();
      })
      .Case<ScaleOp>([&](ScaleOp scale) {
        if (needs(scale.getInput()))
          accumulate(scale.getInput(),
                     ScaleOp::create(b, loc, gy, scale.getScaleAttr()));
        return success();
      })
      .Case<DropoutOp>([&](DropoutOp dropout) {
        if (needs(dropout.getInput()))
          accumulate(dropout.getInput(),
                     DropoutBwdOp::create(b, loc, gy, dropout.getResult()));
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitError()
               << "--snn-autodiff cannot differentiate '" << other->getName()
               << "'; differentiable ops: the multi-step neuron ops, linear, "
                  "conv2d, pools, batch_norm, flatten, reshape, transpose, add, "
                  "scale, dropout, "
                  "and in recurrent loops lif_step, if_step, li_step, "
                  "cuba_lif_step";
      });
}

/// Clones `loop` step by step at `b`: the step t body reads slice t of each
/// input and the state of step t-1; the results are the stacked step outputs
/// and the last state. `record` sees every new op in order.
static void unrollTimeLoop(OpBuilder &b, TimeLoopOp loop, IRMapping &mapping,
                           function_ref<void(Operation *)> record) {
  Location loc = loop.getLoc();
  Block &body = loop.getBodyBlock();
  unsigned numInputs = loop.getInputs().size();
  unsigned numOutputs = loop.getNumStepOutputs();
  SmallVector<Value> state;
  for (Value init : loop.getInits())
    state.push_back(mapping.lookupOrDefault(init));
  SmallVector<SmallVector<Value>> stacked(numOutputs);
  for (int64_t t = 0, e = loop.getNumTimeSteps(); t < e; ++t) {
    for (auto [i, input] : llvm::enumerate(loop.getInputs())) {
      BlockArgument arg = body.getArgument(i);
      auto slice = TimeSliceOp::create(b, loc, arg.getType(),
                                       mapping.lookupOrDefault(input), t);
      record(slice);
      mapping.map(arg, slice.getResult());
    }
    for (auto [j, value] : llvm::enumerate(state))
      mapping.map(body.getArgument(numInputs + j), value);
    for (Operation &op : body.without_terminator())
      record(b.clone(op, mapping));
    SmallVector<Value> yielded;
    for (Value v : loop.getYield().getValues())
      yielded.push_back(mapping.lookupOrDefault(v));
    for (unsigned k = 0; k < numOutputs; ++k)
      stacked[k].push_back(yielded[k]);
    state.assign(yielded.begin() + numOutputs, yielded.end());
  }
  for (unsigned k = 0; k < numOutputs; ++k) {
    auto stack = TimeStackOp::create(b, loc, loop.getResult(k).getType(),
                                     stacked[k]);
    record(stack);
    mapping.map(loop.getResult(k), stack.getResult());
  }
  for (auto [j, value] : llvm::enumerate(state))
    mapping.map(loop.getResult(numOutputs + j), value);
}

/// Whether @forward returns a membrane rather than spikes: an snn.li
/// readout, or the per-step state (a membrane, a synaptic current) of a
/// step neuron that a time loop returns.
static bool isMembraneOutput(Value output) {
  if (output.getDefiningOp<LIOp>())
    return true;
  auto loop = output.getDefiningOp<TimeLoopOp>();
  if (!loop)
    return false;
  Value step = loop.getYield().getValues()[cast<OpResult>(output)
                                                .getResultNumber()];
  auto neuron = step.getDefiningOp<NeuronOpInterface>();
  if (!neuron || !neuron.isStepForm())
    return false;
  unsigned firstState = neuron->getNumResults() - neuron.getNumStates();
  return isa<LIStepOp>(neuron) ||
         cast<OpResult>(step).getResultNumber() >= firstState;
}

/// Why `op` cannot be part of a training step, or empty.
static std::string unsupportedReason(Operation *op) {
  if (auto neuron = dyn_cast<NeuronOpInterface>(op); neuron && neuron.isStepForm())
    return "a step-form neuron op outside a time loop: run "
           "--snn-temporal-fusion first";
  if (auto dropout = dyn_cast<DropoutOp>(op); dropout && dropout.getSharedAcrossTime())
    return "dropout with shared_across_time: its backward is not implemented "
           "yet; drop the attribute to draw a mask per step";
  return "";
}

struct SNNAutodiffPass : public mlir::snn::impl::SNNAutodiffBase<SNNAutodiffPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  FailureOr<func::FuncOp> buildTrainStep(func::FuncOp forward);
  /// The loss op on `output` and the gradient it seeds (d loss / d output).
  std::pair<Operation *, Value> createLoss(OpBuilder &b, Location loc,
                                           Value output, Value labels,
                                           bool membrane);
  void createOptimizers(OpBuilder &b,
                        llvm::MapVector<StringRef, std::pair<ParamOp, Value>> &params);
};

void SNNAutodiffPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fail = [&](const Twine &message) {
    module.emitError() << "--snn-autodiff: " << message;
    signalPassFailure();
  };
  if (!llvm::is_contained({"auto", "ce_rate", "mse_rate", "ce_membrane",
                           "ce_membrane_max"},
                          StringRef(loss)))
    return fail("unknown loss '" + loss +
                "'; use ce_rate, mse_rate, ce_membrane, ce_membrane_max or "
                "auto");
  if (!llvm::is_contained({"sgd", "adam", "adamw"}, StringRef(optimizer)))
    return fail("unknown optimizer '" + optimizer + "'; use sgd, adam or adamw");
  if (!(lr > 0.0))
    return fail("the learning rate must be positive, got lr=" + std::to_string(double(lr)));
  if (momentum < 0.0 || weightDecay < 0.0)
    return fail("momentum and weight-decay must be >= 0");
  std::optional<double> band;
  if (!gradThreshold.empty()) {
    std::string why;
    if (!(band = parseGradThreshold(gradThreshold, why)))
      return fail(why);
  }
  auto forward = module.lookupSymbol<func::FuncOp>(entry);
  if (!forward)
    return fail("no function @" + entry +
                " to train; name the model's entry point with entry=NAME");
  if (module.lookupSymbol("train_step"))
    return fail("the module already has a @train_step");
  FailureOr<func::FuncOp> trainStep = buildTrainStep(forward);
  if (failed(trainStep))
    return signalPassFailure();
  if (band)
    numBandedLayers += setGradBand(*trainStep, *band);
}

FailureOr<func::FuncOp> SNNAutodiffPass::buildTrainStep(func::FuncOp forward) {
  if (forward.isExternal() || !forward.getBody().hasOneBlock())
    return forward.emitError() << "--snn-autodiff needs a body of one block";
  auto ret = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
  auto outputType = ret.getNumOperands() == 1
                        ? dyn_cast<RankedTensorType>(ret.getOperand(0).getType())
                        : RankedTensorType();
  if (forward.getNumArguments() != 1 || !outputType || outputType.getRank() != 3)
    return forward.emitError()
           << "--snn-autodiff trains a function (input [T, B, ...]) -> "
              "output [T, B, classes]; @"
           << forward.getName() << " has type " << forward.getFunctionType();
  for (Operation &op : forward.getBody().front().without_terminator()) {
    std::string reason = unsupportedReason(&op);
    if (!reason.empty())
      return op.emitError() << "cannot train through " << reason;
  }

  MLIRContext *ctx = &getContext();
  Location loc = forward.getLoc();
  OpBuilder b(ctx);
  b.setInsertionPointAfter(forward);
  auto labelsType = RankedTensorType::get({outputType.getDimSize(1)},
                                          IntegerType::get(ctx, 32));
  auto lossType = RankedTensorType::get({}, b.getF32Type());
  auto trainStep = func::FuncOp::create(
      b, loc, "train_step",
      b.getFunctionType({forward.getArgumentTypes()[0], labelsType}, {lossType}));
  Block *body = trainStep.addEntryBlock();
  b.setInsertionPointToStart(body);

  // The forward ops, and which values depend on a trainable parameter.
  IRMapping mapping;
  mapping.map(forward.getArgument(0), body->getArgument(0));
  DenseSet<Value> requiresGrad;
  SmallVector<Operation *> forwardOps;
  llvm::MapVector<StringRef, std::pair<ParamOp, Value>> params;
  auto record = [&](Operation *clone) {
    forwardOps.push_back(clone);
    bool needs = llvm::any_of(clone->getOperands(), [&](Value v) {
      return requiresGrad.contains(v);
    });
    if (auto param = dyn_cast<ParamOp>(clone); param && param.getTrainable()) {
      needs = true;
      params.insert({param.getName(), {param, Value()}});
    }
    if (needs)
      for (Value result : clone->getResults())
        requiresGrad.insert(result);
  };
  for (Operation &op : forward.getBody().front().without_terminator()) {
    if (auto loop = dyn_cast<TimeLoopOp>(op)) {
      unrollTimeLoop(b, loop, mapping, record);
      ++numLoopsUnrolled;
      continue;
    }
    record(b.clone(op, mapping));
  }
  Value output = mapping.lookup(ret.getOperand(0));
  if (!requiresGrad.contains(output))
    return forward.emitError() << "--snn-autodiff: the output of @"
                               << forward.getName()
                               << " depends on no trainable snn.param";

  auto [lossOp, outputGrad] = createLoss(b, loc, output, body->getArgument(1),
                                         isMembraneOutput(ret.getOperand(0)));
  if (!lossOp)
    return failure();
  GradientBuilder grads(b, requiresGrad);
  grads.seed(output, outputGrad);
  for (Operation *op : llvm::reverse(forwardOps)) {
    if (isa<NeuronOpInterface>(op) && grads.gradOf(op->getResult(0)))
      ++numNeuronGrads;
    if (failed(grads.differentiate(op)))
      return failure();
  }

  // Parameters used under one name in several places share one update.
  for (auto &[name, entry] : params) {
    for (Operation *op : forwardOps) {
      auto param = dyn_cast<ParamOp>(op);
      Value g = param ? grads.gradOf(param.getResult()) : Value();
      if (!g || param.getName() != name)
        continue;
      entry.second = entry.second
                         ? AccumulateOp::create(b, loc, entry.second, g)
                         : g;
    }
  }
  createOptimizers(b, params);
  func::ReturnOp::create(b, loc, lossOp->getResult(0));
  return trainStep;
}

/// From this many steps on, a loss on the time mean takes the mean first.
/// The loss kernels recompute each class's time mean where they need it
/// (3 C + 1 passes over T per sample, one thread per sample): cheap for a few
/// steps, 1.45 ms of a 12.8 ms H200 step at T = 1024. `snn.time_sum` and
/// `snn.time_broadcast` are parallel over B x C instead, and are what a time
/// split runs anyway (--snn-split-time).
constexpr int64_t kTimeMeanFirstSteps = 32;

std::pair<Operation *, Value>
SNNAutodiffPass::createLoss(OpBuilder &b, Location loc, Value output,
                            Value labels, bool membrane) {
  std::string kind = loss;
  if (kind == "auto")
    kind = membrane ? "ce_membrane" : "ce_rate";
  Type lossType = RankedTensorType::get({}, b.getF32Type());
  auto outputType = cast<RankedTensorType>(output.getType());
  if (kind == "ce_membrane_max") {
    Operation *op = LossCEMembraneMaxOp::create(
        b, loc, TypeRange{lossType, outputType, lossType}, output, labels);
    return {op, op->getResult(1)};
  }
  // The loss of the time mean m = sum_t output[t] / T; its gradient d/dm,
  // spread over the steps, divided by T.
  int64_t steps = outputType.getDimSize(0);
  Value input = output;
  double scale = 1.0 / static_cast<double>(steps);
  bool meanFirst = steps >= kTimeMeanFirstSteps;
  if (meanFirst) {
    SmallVector<int64_t> shape(outputType.getShape());
    shape[0] = 1;
    input = TimeSumOp::create(b, loc, outputType.clone(shape), output,
                              b.getF64FloatAttr(scale));
  }
  TypeRange types{lossType, input.getType(), lossType};
  Operation *op;
  if (kind == "ce_rate")
    op = LossCERateOp::create(b, loc, types, input, labels);
  else if (kind == "mse_rate")
    op = LossMSERateOp::create(b, loc, types, input, labels);
  else
    op = LossCEMembraneOp::create(b, loc, types, input, labels);
  Value grad = op->getResult(1);
  if (meanFirst)
    grad = TimeBroadcastOp::create(b, loc, outputType, grad,
                                   b.getF64FloatAttr(scale));
  return {op, grad};
}

void SNNAutodiffPass::createOptimizers(
    OpBuilder &b, llvm::MapVector<StringRef, std::pair<ParamOp, Value>> &params) {
  // State tensors first: the update program holds optimizer ops only.
  auto stateParam = [&](ParamOp param, StringRef suffix) {
    return ParamOp::create(
        b, param.getLoc(), param.getType(),
        b.getStringAttr("opt:" + param.getName() + ":" + suffix),
        InitKindAttr::get(b.getContext(), InitKind::Zeros),
        /*init_scale=*/FloatAttr(), /*value=*/ElementsAttr(),
        b.getBoolAttr(false));
  };
  SmallVector<std::pair<std::pair<ParamOp, Value>, SmallVector<Value, 2>>> updates;
  for (auto &[name, entry] : params) {
    if (!entry.second)
      continue; // not on a path to the loss
    SmallVector<Value, 2> state;
    if (optimizer == "sgd" && momentum != 0.0)
      state.push_back(stateParam(entry.first, "momentum"));
    if (optimizer != "sgd") {
      state.push_back(stateParam(entry.first, "m"));
      state.push_back(stateParam(entry.first, "v"));
    }
    updates.push_back({entry, state});
  }
  for (auto &[entry, state] : updates) {
    auto [param, grad] = entry;
    Location loc = param.getLoc();
    SmallVector<Value> operands{param.getResult(), grad};
    operands.append(state.begin(), state.end());
    SmallVector<NamedAttribute> attrs{
        b.getNamedAttr("lr", b.getF64FloatAttr(lr)),
        b.getNamedAttr("weight_decay", b.getF64FloatAttr(weightDecay))};
    if (optimizer == "sgd") {
      attrs.push_back(b.getNamedAttr("momentum", b.getF64FloatAttr(momentum)));
      if (nesterov)
        attrs.push_back(b.getNamedAttr("nesterov", b.getBoolAttr(true)));
      SGDOp::create(b, loc, ValueRange(operands), attrs);
    } else {
      attrs.append({b.getNamedAttr("beta1", b.getF64FloatAttr(beta1)),
                    b.getNamedAttr("beta2", b.getF64FloatAttr(beta2)),
                    b.getNamedAttr("eps", b.getF64FloatAttr(eps)),
                    b.getNamedAttr("decoupled",
                                   b.getBoolAttr(optimizer == "adamw"))});
      AdamOp::create(b, loc, ValueRange(operands), attrs);
    }
    ++numParamsUpdated;
  }
}

} // namespace
