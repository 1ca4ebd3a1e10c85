//===- SNNTrainingOps.cpp - losses, gradients and optimizers --------------===//
//
// Verifiers of the training ops. Gradients must have the types of the values
// they are gradients of, and the ops that read saved forward state
// (neuron_bwd, batch_norm_bwd, dropout_bwd) must name the forward op's result.
//
//===----------------------------------------------------------------------===//

#include "snn/Dialect/SNN/IR/SNNOps.h"
#include "DiagnosticFormat.h"
#include "EventDrivenCrossover.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::snn;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// "gw has type X but must have the type of the weight, Y".
static LogicalResult expectType(Operation *op, StringRef what, Value value,
                                StringRef of, Type expected) {
  if (value.getType() == expected)
    return success();
  return op->emitOpError() << what << " has type " << value.getType()
                           << " but must have the type of " << of << ", "
                           << expected;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

template <typename LossOp>
static LogicalResult verifyLoss(LossOp op) {
  ArrayRef<int64_t> out = shapeOf(op.getOutput()),
                    labels = shapeOf(op.getLabels());
  if (out.size() != 3)
    return op.emitOpError() << "expects the network output [T, B, classes], "
                               "got rank "
                            << out.size()
                            << "; flatten the output layer's features";
  if (labels.size() != 1 ||
      (!ShapedType::isDynamic(labels[0]) && !ShapedType::isDynamic(out[1]) &&
       labels[0] != out[1]))
    return op.emitOpError() << "expects labels [B] with B = " << out[1]
                            << " (the output's batch), got "
                            << op.getLabels().getType();
  return success();
}

LogicalResult LossCERateOp::verify() { return verifyLoss(*this); }
LogicalResult LossMSERateOp::verify() { return verifyLoss(*this); }
LogicalResult LossCEMembraneOp::verify() { return verifyLoss(*this); }
LogicalResult LossCEMembraneMaxOp::verify() { return verifyLoss(*this); }

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

/// On a time split: the gradients of the forward layer's final state (in)
/// and of its init state (out), one per state tensor, or none.
static LogicalResult verifySplitStateGrads(NeuronBwdOp op,
                                           NeuronOpInterface neuron) {
  unsigned numStates = neuron.getNumStates();
  RankedTensorType stateType = getNeuronStateType(neuron);
  auto check = [&](StringRef what, TypeRange types) -> LogicalResult {
    if (types.empty())
      return success();
    if (types.size() != numStates)
      return op.emitOpError() << "has " << types.size() << " " << what
                              << " gradients but the forward layer has "
                              << numStates << " state tensor"
                              << (numStates == 1 ? "" : "s");
    for (Type type : types)
      if (type != stateType)
        return op.emitOpError() << "a gradient of the " << what << " has type "
                                << type << " but the layer's state is "
                                << stateType;
    return success();
  };
  if (failed(check("final state", op.getGradFinalState().getTypes())) ||
      failed(check("initial state", op.getGradInitState().getTypes())))
    return failure();
  if (!op.getGradInitState().empty() &&
      getInitState(neuron.getOperation()).empty())
    return op.emitOpError()
           << "returns gradients of the initial state but the forward layer "
              "has no init(...) operands to differentiate";
  return success();
}

LogicalResult NeuronBwdOp::verify() {
  Operation *def = getForward().getDefiningOp();
  auto neuron = dyn_cast_or_null<NeuronOpInterface>(def);
  if (!neuron || neuron.isStepForm())
    return emitOpError() << "'forward' must be the result of a multi-step "
                            "neuron op (snn.lif, snn.if, snn.plif, snn.li, "
                            "snn.cuba_lif); step-form layers are trained "
                            "after --snn-temporal-fusion";
  auto plif = dyn_cast<PLIFOp>(def);
  if (plif && !getGradW())
    return emitOpError() << "of an snn.plif layer needs a second result, the "
                            "gradient of its 'w' ("
                         << plif.getW().getType() << ")";
  if (!plif && getGradW())
    return emitOpError() << "has a gradient of 'w' but the forward layer is '"
                         << def->getName() << "', not snn.plif";
  if (plif && failed(expectType(*this, "the gradient of 'w'", getGradW(),
                                 "'w'", plif.getW().getType())))
    return failure();
  return verifySplitStateGrads(*this, neuron);
}

LogicalResult NeuronStepBwdOp::verify() {
  Operation *def = getForward().getDefiningOp();
  if (!isa_and_nonnull<LIFStepOp, IFStepOp, LIStepOp>(def))
    return emitOpError() << "'forward' must be the first result of "
                            "snn.lif_step, snn.if_step or snn.li_step "
                            "(snn.cuba_lif_step has snn.cuba_lif_step_bwd, "
                            "snn.plif_step snn.plif_step_bwd)";
  if (getForward() != def->getResult(0))
    return emitOpError() << "'forward' must be the first result of its step "
                            "op (the spikes, or li's membrane)";
  return success();
}

LogicalResult PLIFStepBwdOp::verify() {
  auto step = getForward().getDefiningOp<PLIFStepOp>();
  if (!step || getForward() != step.getSpikes())
    return emitOpError() << "'forward' must be the spikes of an snn.plif_step";
  if (getState() != step.getV())
    return emitOpError() << "'state' must be the membrane operand of its "
                            "snn.plif_step (the dH/dk of the weight gradient "
                            "reads V before the step)";
  if (getW() != step.getW())
    return emitOpError() << "'w' must be the weight of its snn.plif_step";
  return success();
}

LogicalResult CubaLIFStepBwdOp::verify() {
  auto step = getForward().getDefiningOp<CubaLIFStepOp>();
  if (!step || getForward() != step.getSpikes())
    return emitOpError() << "'forward' must be the spikes of an "
                            "snn.cuba_lif_step";
  return success();
}

LogicalResult TimeSliceOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (in.getRank() < 1 || in.isDynamicDim(0) ||
      in.getShape().drop_front() != out.getShape() ||
      in.getElementType() != out.getElementType())
    return emitOpError() << "takes [T, ...] to [...], got " << in << " -> "
                         << out;
  if (getIndex() >= in.getDimSize(0))
    return emitOpError() << "index " << getIndex() << " is outside the "
                         << in.getDimSize(0) << " steps of " << in;
  return success();
}

LogicalResult TimeStackOp::verify() {
  if (getSteps().empty())
    return emitOpError() << "needs at least one step";
  auto step = cast<RankedTensorType>(getSteps().front().getType());
  SmallVector<int64_t> shape{int64_t(getSteps().size())};
  llvm::append_range(shape, step.getShape());
  auto out = cast<RankedTensorType>(getOutput().getType());
  if (out.getShape() != ArrayRef<int64_t>(shape) ||
      out.getElementType() != step.getElementType())
    return emitOpError() << "stacks " << getSteps().size() << " x " << step
                         << " into " << out << "; expected "
                         << RankedTensorType::get(shape, step.getElementType());
  return success();
}

/// The results of linear_bwd / conv2d_bwd: gx?, gw, gb?.
template <typename BwdOp>
static LogicalResult verifyWeightGrads(BwdOp op) {
  bool needGx = op.getNeedGx(), hasBias = op.getHasBias();
  size_t expected = size_t(needGx) + 1 + size_t(hasBias);
  if (op.getGrads().size() != expected)
    return op.emitOpError() << "has " << op.getGrads().size()
                            << " results but need_gx = " << needGx
                            << " and has_bias = " << hasBias << " give "
                            << expected << " (gx?, gw, gb?)";
  unsigned i = 0;
  if (needGx && failed(expectType(op, "gx", op.getGrads()[i++], "the input",
                                  op.getInput().getType())))
    return failure();
  if (failed(expectType(op, "gw", op.getGrads()[i++], "the weight",
                        op.getWeight().getType())))
    return failure();
  if (hasBias) {
    ArrayRef<int64_t> gb = shapeOf(op.getGrads()[i]);
    int64_t channels = shapeOf(op.getWeight())[0];
    if (gb.size() != 1 || gb[0] != channels)
      return op.emitOpError() << "gb has type " << op.getGrads()[i].getType()
                              << " but the layer has " << channels
                              << " output channels";
  }
  return success();
}

LogicalResult LinearBwdOp::verify() {
  if (shapeOf(getWeight()).size() != 2)
    return emitOpError() << "expects a weight [out, in], got "
                         << getWeight().getType();
  ArrayRef<int64_t> gy = shapeOf(getGradOutput()), x = shapeOf(getInput());
  if (gy.size() != x.size() || gy.drop_back() != x.drop_back() ||
      gy.back() != shapeOf(getWeight())[0])
    return emitOpError() << "grad_output " << getGradOutput().getType()
                         << " is not the output of input "
                         << getInput().getType() << " and weight "
                         << getWeight().getType();
  if (failed(verifyEventDrivenCrossover(*this, getEventDriven(),
                                        "grad_output")))
    return failure();
  return verifyWeightGrads(*this);
}

LogicalResult Conv2DBwdOp::verify() {
  if (shapeOf(getWeight()).size() != 4 || shapeOf(getInput()).size() < 4)
    return emitOpError() << "expects an input [..., C, H, W] and a weight "
                            "[O, C/groups, KH, KW], got "
                         << getInput().getType() << " and "
                         << getWeight().getType();
  if (shapeOf(getGradOutput()).size() != shapeOf(getInput()).size())
    return emitOpError() << "grad_output " << getGradOutput().getType()
                         << " must have the rank of the input "
                         << getInput().getType();
  if (failed(verifyEventDrivenCrossover(*this, getEventDriven(), "input")))
    return failure();
  if (getEventDriven() && getGroups() != 1)
    return emitOpError() << "event_driven supports groups = 1 only, got "
                         << getGroups();
  if (getChannelsLast()) {
    // NHWC: x [..., H, W, C], w [O, KH, KW, C], gy [..., OH, OW, O].
    ArrayRef<int64_t> x = shapeOf(getInput()), w = shapeOf(getWeight()),
                      gy = shapeOf(getGradOutput());
    if (getGroups() != 1)
      return emitOpError() << "channels_last supports groups = 1 only, got "
                           << getGroups();
    if (x.back() != w[3] || gy.back() != w[0])
      return emitOpError()
             << "channels_last expects an input [..., H, W, C], a weight [O, "
                "KH, KW, C] and a grad_output [..., OH, OW, O], got "
             << getInput().getType() << ", " << getWeight().getType()
             << " and " << getGradOutput().getType();
  }
  return verifyWeightGrads(*this);
}

template <typename PoolBwdOp>
static LogicalResult verifyPoolBwd(PoolBwdOp op) {
  bool last = op.getChannelsLast();
  SmallVector<int64_t> gyView(shapeOf(op.getGradOutput())),
      gxView(shapeOf(op.getGradInput()));
  // Channels last: [..., H, W, C] checked as [..., C, H, W].
  for (SmallVector<int64_t> *shape : {&gyView, &gxView})
    if (last && shape->size() >= 3)
      std::rotate(shape->end() - 3, shape->end() - 1, shape->end());
  ArrayRef<int64_t> gy = gyView, gx = gxView;
  if (gx.size() < 4 || gy.size() != gx.size() ||
      gy.drop_back(2) != gx.drop_back(2))
    return op.emitOpError() << "grad_output " << op.getGradOutput().getType()
                            << " and grad_input " << op.getGradInput().getType()
                            << " must be "
                            << (last ? "[..., OH, OW, C] and [..., H, W, C]"
                                     : "[..., C, OH, OW] and [..., C, H, W]");
  ArrayRef<int64_t> kernel = op.getKernelSize(), pad = op.getPadding();
  SmallVector<int64_t, 2> stride = op.getEffectiveStride();
  for (int i = 0; i < 2; ++i) {
    int64_t size = gx[gx.size() - 2 + i];
    if (kernel[i] <= 0 || stride[i] <= 0 || pad[i] < 0 ||
        size + 2 * pad[i] < kernel[i] ||
        (size + 2 * pad[i] - kernel[i]) / stride[i] + 1 != gy[gy.size() - 2 + i])
      return op.emitOpError()
             << "the window (kernel_size, stride, padding) does not map the "
                "input "
             << op.getGradInput().getType() << " to "
             << op.getGradOutput().getType();
  }
  return success();
}

LogicalResult AvgPool2DBwdOp::verify() { return verifyPoolBwd(*this); }
LogicalResult SumPool2DBwdOp::verify() { return verifyPoolBwd(*this); }
LogicalResult MaxPool2DBwdOp::verify() {
  if (getInput().getType() != getGradInput().getType())
    return emitOpError() << "input " << getInput().getType()
                         << " and grad_input " << getGradInput().getType()
                         << " must have the same type";
  return verifyPoolBwd(*this);
}

LogicalResult BatchNormBwdOp::verify() {
  auto bn = getForward().getDefiningOp<BatchNormOp>();
  if (!bn)
    return emitOpError() << "'forward' must be the result of the "
                            "snn.batch_norm whose statistics it reads";
  if (bn.getInput() != getInput() || bn.getGamma() != getGamma())
    return emitOpError() << "'input' and 'gamma' must be the operands of the "
                            "forward snn.batch_norm";
  return success();
}

LogicalResult DropoutBwdOp::verify() {
  if (!getForward().getDefiningOp<DropoutOp>())
    return emitOpError() << "'forward' must be the result of the snn.dropout "
                            "whose mask it reads";
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType()),
       out = cast<RankedTensorType>(getOutput().getType());
  if (!in.hasStaticShape() || !out.hasStaticShape() ||
      in.getNumElements() != out.getNumElements() ||
      in.getElementType() != out.getElementType())
    return emitOpError() << "needs static types with the same element type "
                            "and number of elements, got "
                         << in << " -> " << out;
  return success();
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

LogicalResult SGDOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  if (operands.size() < 2)
    return failure();
  inferred.push_back(operands[0].getType());
  for (Value state : operands.drop_front(2))
    inferred.push_back(state.getType());
  return success();
}

LogicalResult AdamOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  if (operands.size() != 4)
    return failure();
  inferred.push_back(operands[0].getType());
  inferred.push_back(operands[2].getType());
  inferred.push_back(operands[3].getType());
  return success();
}

/// The gradient and every state tensor have the parameter's type.
static LogicalResult verifyOptimizer(Operation *op, Value param, Value grad,
                                     ValueRange state, double lr) {
  if (failed(expectType(op, "the gradient", grad, "the parameter",
                        param.getType())))
    return failure();
  for (Value s : state)
    if (failed(expectType(op, "optimizer state", s, "the parameter",
                          param.getType())))
      return failure();
  if (!(lr > 0.0))
    return op->emitOpError() << "learning rate must be positive, got "
                             << formatNumber(lr);
  return success();
}

LogicalResult SGDOp::verify() {
  if (getState().size() > 1)
    return emitOpError() << "takes at most one state tensor (the momentum "
                            "buffer), got "
                         << getState().size();
  bool momentum = getMomentum().convertToDouble() != 0.0;
  if (momentum != (getState().size() == 1))
    return emitOpError() << (momentum ? "with momentum needs" : "without momentum takes no")
                         << " momentum buffer operand";
  if (getNesterov() && !momentum)
    return emitOpError() << "nesterov needs momentum > 0";
  return verifyOptimizer(*this, getParam(), getGrad(), getState(),
                         getLr().convertToDouble());
}

LogicalResult AdamOp::verify() {
  double b1 = getBeta1().convertToDouble(), b2 = getBeta2().convertToDouble();
  if (!(b1 >= 0 && b1 < 1 && b2 >= 0 && b2 < 1))
    return emitOpError() << "betas must be in [0, 1), got ("
                         << formatNumber(b1) << ", " << formatNumber(b2) << ")";
  return verifyOptimizer(*this, getParam(), getGrad(), {getM(), getV()},
                         getLr().convertToDouble());
}
