//===- SplitTime.cpp - time ranges across ranks ---------------------------===//
//
// Rank p of P owns the time steps [floor(p T / P), floor((p + 1) T / P)).
// Stateless layers already work on any number of steps, so on a rank they
// simply see fewer; what crosses the rank boundary is the state of each
// neuron layer (forward: its final state goes to the next rank, which starts
// from it; backward: the gradient of that state comes back), the time mean a
// loss takes (summed over the ranks), and the weight gradients (each rank's
// share of the sum over T*B rows). Ranks with the same local length run the
// same function, so there is one function per entry point and distinct
// length: at most two of each.
//
//===----------------------------------------------------------------------===//

#include "snn/Dialect/SNN/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::snn {
#define GEN_PASS_DEF_SNNSPLITTIME
#include "snn/Dialect/SNN/Transforms/Passes.h.inc"
} // namespace mlir::snn

using namespace mlir;
using namespace mlir::snn;

namespace {

/// The entry points a compiled module runs; each is split.
constexpr StringLiteral kEntryPoints[] = {"forward", "train_step"};

/// `type` with `steps` as its leading (time) dimension.
RankedTensorType withSteps(Type type, int64_t steps) {
  auto ranked = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(ranked.getShape());
  shape[0] = steps;
  return RankedTensorType::get(shape, ranked.getElementType(),
                               ranked.getEncoding());
}

/// Why `op` of `func` cannot be split, or nothing.
std::optional<std::string> whyNotSplittable(Operation *op, bool training) {
  if (isa<TimeLoopOp, TimeSliceOp, TimeStackOp, NeuronStepBwdOp,
          PLIFStepBwdOp, CubaLIFStepBwdOp>(op))
    return std::string(
        "is part of a recurrent layer, which runs step by step with each "
        "step depending on the previous step's output through its weights; "
        "--snn-split-time does not split recurrent layers: run this model on "
        "one device (drop --snn-split-time)");
  if (isa<LossCEMembraneMaxOp>(op))
    return std::string("takes the maximum over time, which --snn-split-time "
                       "does not reduce across ranks; use loss=ce_membrane "
                       "(the time mean) or run on one device");
  if (training && isa<BatchNormOp>(op))
    return std::string("takes its training statistics over all T*B samples, "
                       "which --snn-split-time does not reduce across ranks; "
                       "fold the batch norm or run on one device");
  if (training && isa<DropoutOp>(op))
    return std::string("would draw a different mask on each rank; drop the "
                       "dropout or run on one device");
  if (auto neuron = dyn_cast<NeuronOpInterface>(op);
      neuron && !neuron.isStepForm() &&
      !getNeuronStateType(neuron).hasStaticShape())
    return std::string("has a dynamic batch or feature size; the state it "
                       "hands to the next rank needs static sizes");
  if (!getInitState(op).empty() || isa<RecvOp, SendOp, AllReduceSumOp>(op))
    return std::string("already belongs to a time split; run "
                       "--snn-split-time once");
  if (isa<NeuronOpInterface, ParamOp, arith::ConstantOp, func::ReturnOp,
          LinearOp, Conv2DOp, AvgPool2DOp, SumPool2DOp, MaxPool2DOp,
          BatchNormOp, FlattenOp, AddOp, ScaleOp, DropoutOp, LossCERateOp,
          LossMSERateOp, LossCEMembraneOp, NeuronBwdOp, LinearBwdOp,
          Conv2DBwdOp, AvgPool2DBwdOp, SumPool2DBwdOp, MaxPool2DBwdOp,
          DropoutBwdOp, AccumulateOp, ReshapeOp, SGDOp, AdamOp, TimeSumOp,
          TimeBroadcastOp>(op))
    return std::nullopt;
  return "has no time-split rule in --snn-split-time";
}

/// Values of a neuron parameter: one double per neuron of `features`
/// elements (a scalar repeats).
SmallVector<double> paramValues(Attribute attr, int64_t features,
                                double absent) {
  SmallVector<double> values;
  if (auto dense = dyn_cast_or_null<DenseFPElementsAttr>(attr)) {
    for (APFloat v : dense.getValues<APFloat>())
      values.push_back(v.convertToDouble());
    return values;
  }
  return SmallVector<double>(features,
                             attr ? getScalarParam(attr).value_or(absent)
                                  : absent);
}

/// The initial state of a neuron as one process would start it, as a
/// constant [B, features...]: `v_init`/`i_init`, else the default (v_reset
/// for a hard reset, 0 for a soft reset, a readout or the current).
Value initialState(OpBuilder &b, Operation *neuron, unsigned state,
                   RankedTensorType type) {
  bool current = isa<CubaLIFOp>(neuron) && state == 0;
  StringRef name = current ? "i_init" : "v_init";
  int64_t features = 1;
  for (int64_t d : type.getShape().drop_front())
    features *= d;
  SmallVector<double> perNeuron;
  if (Attribute init = neuron->getAttr(name)) {
    perNeuron = paramValues(init, features, 0.0);
  } else {
    auto reset = neuron->getAttrOfType<ResetModeAttr>("reset");
    bool fromReset = !current && !isa<LIOp>(neuron) &&
                     !(reset && reset.getValue() == ResetMode::Soft);
    perNeuron = fromReset ? paramValues(neuron->getAttr("v_reset"), features, 0.0)
                          : SmallVector<double>(features, 0.0);
  }
  auto floatType = cast<FloatType>(type.getElementType());
  SmallVector<APFloat> values;
  values.reserve(type.getNumElements());
  for (int64_t row = 0, rows = type.getDimSize(0); row < rows; ++row)
    for (double v : perNeuron) {
      APFloat value(v);
      bool lost;
      value.convert(floatType.getFloatSemantics(),
                    APFloat::rmNearestTiesToEven, &lost);
      values.push_back(value);
    }
  return arith::ConstantOp::create(b, neuron->getLoc(),
                                   DenseElementsAttr::get(type, values));
}

Value zeros(OpBuilder &b, Location loc, RankedTensorType type) {
  return arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), 0.0)));
}

/// Rewrites one clone of an entry point for a local length of `steps`.
class RankProgramBuilder {
public:
  RankProgramBuilder(func::FuncOp func, int64_t totalSteps, int64_t steps,
                     llvm::Statistic &chained, llvm::Statistic &allReduces)
      : func(func), totalSteps(totalSteps), steps(steps), chained(chained),
        allReduces(allReduces) {}

  LogicalResult run();

private:
  /// A result that depends on the time steps gets the local length.
  void localize(Value v) {
    v.setType(withSteps(v.getType(), steps));
    local.insert(v);
  }
  bool isLocal(Value v) const { return local.contains(v); }
  Value sumOverRanks(OpBuilder &b, Value v) {
    ++allReduces;
    return AllReduceSumOp::create(b, v.getLoc(), v);
  }
  /// A weight gradient is each rank's sum over its T*B rows: the update
  /// needs the sum over the ranks. Summing right before the optimizer, after
  /// the whole backward, keeps the backward a wavefront too (a collective
  /// between two layers would make every rank wait for the slowest).
  template <typename OptimizerOp>
  void sumGradOverRanks(OptimizerOp update) {
    OpBuilder b(update);
    update.getGradMutable().assign(sumOverRanks(b, update.getGrad()));
  }
  LogicalResult chainNeuron(Operation *neuron);
  LogicalResult chainNeuronBwd(NeuronBwdOp bwd);
  template <typename LossOp>
  LogicalResult meanOverRanks(LossOp loss);

  func::FuncOp func;
  int64_t totalSteps, steps;
  llvm::Statistic &chained, &allReduces;
  DenseSet<Value> local;
  /// Time means summed over the ranks (snn.time_sum + snn.all_reduce_sum).
  DenseSet<Value> meansOverRanks;
  /// The first tag of each chained neuron layer: its state tensors are
  /// numbered in program order, so every transfer has its own tag.
  DenseMap<Operation *, int64_t> neuronTags;
  int64_t nextTag = 0;
};

LogicalResult RankProgramBuilder::chainNeuron(Operation *neuron) {
  auto iface = cast<NeuronOpInterface>(neuron);
  RankedTensorType stateType = getNeuronStateType(iface);
  int64_t tag = nextTag;
  nextTag += iface.getNumStates();
  OpBuilder b(neuron);
  Location loc = neuron->getLoc();

  SmallVector<Value> operands(neuron->getOperands());
  for (unsigned s = 0, e = iface.getNumStates(); s < e; ++s)
    operands.push_back(RecvOp::create(b, loc, Peer::Prev, tag + s,
                                      initialState(b, neuron, s, stateType)));
  OperationState state(loc, neuron->getName());
  state.addOperands(operands);
  state.addTypes(neuron->getResult(0).getType());
  state.addTypes(SmallVector<Type>(iface.getNumStates(), stateType));
  for (NamedAttribute attr : neuron->getAttrs())
    if (attr.getName() != "v_init" && attr.getName() != "i_init")
      state.addAttribute(attr.getName(), attr.getValue());
  Operation *split = b.create(state);
  for (auto [s, final] : llvm::enumerate(getFinalState(split)))
    SendOp::create(b, loc, final, Peer::Next, tag + s);
  neuron->getResult(0).replaceAllUsesWith(split->getResult(0));
  neuron->erase();
  local.insert(split->getResult(0));
  neuronTags[split] = tag;
  ++chained;
  return success();
}

LogicalResult RankProgramBuilder::chainNeuronBwd(NeuronBwdOp bwd) {
  Operation *neuron = bwd.getForward().getDefiningOp();
  auto tag = neuronTags.find(neuron);
  if (tag == neuronTags.end())
    return bwd.emitOpError("differentiates a neuron layer that "
                           "--snn-split-time did not chain");
  auto iface = cast<NeuronOpInterface>(neuron);
  RankedTensorType stateType = getNeuronStateType(iface);
  OpBuilder b(bwd);
  Location loc = bwd.getLoc();
  SmallVector<Value> gradFinal;
  for (unsigned s = 0, e = iface.getNumStates(); s < e; ++s)
    gradFinal.push_back(RecvOp::create(b, loc, Peer::Next, tag->second + s,
                                       zeros(b, loc, stateType)));
  Type gwType = bwd.getGradW() ? bwd.getGradW().getType() : Type();
  auto split = NeuronBwdOp::create(
      b, loc, bwd.getGradInput().getType(), gwType,
      SmallVector<Type>(iface.getNumStates(), stateType), bwd.getGradOutput(),
      bwd.getForward(), gradFinal);
  split->setDiscardableAttrs(bwd->getDiscardableAttrDictionary());
  for (auto [s, gradInit] : llvm::enumerate(split.getGradInitState()))
    SendOp::create(b, loc, gradInit, Peer::Prev, tag->second + s);
  bwd.getGradInput().replaceAllUsesWith(split.getGradInput());
  if (bwd.getGradW())
    bwd.getGradW().replaceAllUsesWith(split.getGradW());
  bwd.erase();
  localize(split.getGradInput());
  return success();
}

/// The loss of the time mean over all ranks: each rank sums its steps (scaled
/// by 1/T), the ranks add their sums, and the loss of that mean is the same
/// on every rank; its gradient, spread evenly over the T steps, is the
/// gradient of each local step.
template <typename LossOp>
LogicalResult RankProgramBuilder::meanOverRanks(LossOp loss) {
  OpBuilder b(loss);
  Location loc = loss.getLoc();
  double scale = 1.0 / static_cast<double>(totalSteps);
  Type oneStep = withSteps(loss.getOutput().getType(), 1);
  Value partial = TimeSumOp::create(b, loc, oneStep, loss.getOutput(),
                                    b.getF64FloatAttr(scale));
  Value mean = sumOverRanks(b, partial);
  auto global = LossOp::create(b, loc, loss.getLoss().getType(), oneStep,
                               loss.getCorrect().getType(), mean,
                               loss.getLabels());
  Value grad = TimeBroadcastOp::create(b, loc, loss.getOutput().getType(),
                                       global.getGrad(),
                                       b.getF64FloatAttr(scale));
  loss.getLoss().replaceAllUsesWith(global.getLoss());
  loss.getCorrect().replaceAllUsesWith(global.getCorrect());
  loss.getGrad().replaceAllUsesWith(grad);
  loss.erase();
  local.insert(grad);
  return success();
}

LogicalResult RankProgramBuilder::run() {
  Block &body = func.getBody().front();
  localize(body.getArgument(0));
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);

  for (Operation *op : ops) {
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(op)
            .Case<LossCERateOp, LossMSERateOp, LossCEMembraneOp>(
                [&](auto loss) -> LogicalResult {
                  // --snn-autodiff took the time mean first (long T):
                  // the time_sum case below already summed it over the
                  // ranks.
                  if (meansOverRanks.contains(loss.getOutput()))
                    return success();
                  if (!isLocal(loss.getOutput()))
                    return loss.emitOpError(
                        "takes an output that does not depend on the "
                        "input's time steps");
                  return meanOverRanks(loss);
                })
            .Case<TimeSumOp>([&](TimeSumOp sum) -> LogicalResult {
              // A rank's share of a time mean: the mean is the sum of the
              // shares over the ranks.
              if (!isLocal(sum.getInput()))
                return success();
              OpBuilder b(sum->getBlock(), std::next(sum->getIterator()));
              Value total = sumOverRanks(b, sum.getOutput());
              sum.getOutput().replaceAllUsesExcept(total,
                                                   total.getDefiningOp());
              meansOverRanks.insert(total);
              return success();
            })
            .Case<TimeBroadcastOp>([&](TimeBroadcastOp spread) {
              // Its gradient reaches every step: this rank's steps.
              localize(spread.getOutput());
              return success();
            })
            .Case<NeuronBwdOp>(
                [&](NeuronBwdOp bwd) { return chainNeuronBwd(bwd); })
            .Case<LinearBwdOp, Conv2DBwdOp>([&](auto bwd) -> LogicalResult {
              if (bwd.getNeedGx())
                localize(bwd.getGrads().front());
              return success();
            })
            .Case<SGDOp, AdamOp>([&](auto update) -> LogicalResult {
              sumGradOverRanks(update);
              return success();
            })
            .Case<func::ReturnOp, ParamOp, arith::ConstantOp>(
                [](Operation *) { return success(); })
            .Default([&](Operation *other) -> LogicalResult {
              if (!llvm::any_of(other->getOperands(),
                                [&](Value v) { return isLocal(v); }))
                return success();
              for (Value result : other->getResults()) {
                auto type = cast<RankedTensorType>(result.getType());
                if (type.getRank() < 1 || type.getDimSize(0) != totalSteps)
                  return other->emitOpError()
                         << "has a result " << type
                         << " that is not time-leading [T = " << totalSteps
                         << ", ...] although its operands are; "
                            "--snn-split-time cannot split it";
                localize(result);
              }
              if (isa<NeuronOpInterface>(other))
                return chainNeuron(other);
              return success();
            });
    if (failed(result))
      return failure();
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  func.setType(FunctionType::get(func.getContext(), body.getArgumentTypes(),
                                 ret.getOperandTypes()));
  return success();
}

class SplitTimePass : public snn::impl::SNNSplitTimeBase<SplitTimePass> {
public:
  using Base::Base;
  void runOnOperation() override;
};

void SplitTimePass::runOnOperation() {
  ModuleOp module = getOperation();
  if (module->hasAttr("snn.split_time")) {
    module.emitError("the module is already split across ranks "
                     "(snn.split_time); run --snn-split-time once");
    return signalPassFailure();
  }
  SmallVector<func::FuncOp> entries;
  for (StringRef name : kEntryPoints)
    if (auto func = module.lookupSymbol<func::FuncOp>(name))
      entries.push_back(func);
  if (entries.empty()) {
    module.emitError("--snn-split-time needs func.func @forward (and "
                     "@train_step after --snn-autodiff) to split");
    return signalPassFailure();
  }

  // The whole sequence: the leading dimension of every entry's input.
  int64_t totalSteps = ShapedType::kDynamic;
  for (func::FuncOp func : entries) {
    auto input = func.getNumArguments() == 0
                     ? RankedTensorType()
                     : dyn_cast<RankedTensorType>(func.getArgumentTypes()[0]);
    if (!input || input.getRank() < 3 || input.isDynamicDim(0)) {
      func.emitError() << "--snn-split-time needs a first argument [T, B, "
                          "...] with a static T, got "
                       << (input ? Type(input) : Type());
      return signalPassFailure();
    }
    if (totalSteps != ShapedType::kDynamic &&
        input.getDimSize(0) != totalSteps) {
      func.emitError() << "has " << input.getDimSize(0)
                       << " time steps but @forward has " << totalSteps;
      return signalPassFailure();
    }
    totalSteps = input.getDimSize(0);
  }
  int64_t numParts = parts;
  if (numParts < 1 || numParts > totalSteps) {
    module.emitError() << "--snn-split-time parts=" << numParts
                       << " must be between 1 and the number of time steps, "
                       << totalSteps;
    return signalPassFailure();
  }

  // One error, on the first op that cannot be split (an unrolled recurrent
  // layer alone has one op per step). Entry points are flat.
  for (func::FuncOp func : entries) {
    bool training = func.getSymName() == "train_step";
    for (Operation &op : func.getBody().front())
      if (auto why = whyNotSplittable(&op, training)) {
        op.emitOpError() << *why;
        return signalPassFailure();
      }
  }

  // Ranks by local length, shortest first.
  std::map<int64_t, SmallVector<int64_t>> ranksByLength;
  for (int64_t p = 0; p < numParts; ++p)
    ranksByLength[(p + 1) * totalSteps / numParts - p * totalSteps / numParts]
        .push_back(p);

  OpBuilder b(module.getContext());
  for (func::FuncOp func : entries) {
    b.setInsertionPoint(func);
    for (auto &[length, ranks] : ranksByLength) {
      auto clone = cast<func::FuncOp>(b.clone(*func.getOperation()));
      clone.setSymName((func.getSymName() + "_t" + Twine(length)).str());
      clone->setAttr("snn.time_length", b.getI64IntegerAttr(length));
      clone->setAttr("snn.ranks", b.getDenseI64ArrayAttr(ranks));
      RankProgramBuilder builder(clone, totalSteps, length, numNeuronsChained,
                                 numAllReduces);
      if (failed(builder.run()))
        return signalPassFailure();
      ++numPrograms;
    }
    func.erase();
  }
  module->setAttr("snn.split_time",
                  b.getDictionaryAttr(
                      {b.getNamedAttr("parts", b.getI64IntegerAttr(numParts)),
                       b.getNamedAttr("steps",
                                      b.getI64IntegerAttr(totalSteps))}));
}

} // namespace
