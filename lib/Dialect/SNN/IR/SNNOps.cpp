//===- SNNOps.cpp - snn dialect operations --------------------------------===//
//
// Verifiers speak the user's language: which operand, which shape, what the
// layer expected, and what to change.
//
//===----------------------------------------------------------------------===//

#include "snn/Dialect/SNN/IR/SNNOps.h"
#include "DiagnosticFormat.h"
#include "EventDrivenCrossover.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>

using namespace mlir;
using namespace mlir::snn;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

static bool dimsAgree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

static bool shapesAgree(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  return a.size() == b.size() &&
         llvm::all_of(llvm::zip(a, b), [](auto p) {
           return dimsAgree(std::get<0>(p), std::get<1>(p));
         });
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// The shape of `v` in channels-first order: with `channelsLast`, its
/// [..., H, W, C] (a weight: [O, KH, KW, I]) is viewed as [..., C, H, W]
/// ([O, I, KH, KW]), so one check serves both layouts.
static SmallVector<int64_t> channelsFirstShape(Value v, bool channelsLast) {
  SmallVector<int64_t> shape(shapeOf(v));
  if (channelsLast && shape.size() >= 3)
    std::rotate(shape.end() - 3, shape.end() - 1, shape.end());
  return shape;
}

/// The inverse of channelsFirstShape, for diagnostics.
static SmallVector<int64_t> inLayout(ArrayRef<int64_t> channelsFirst,
                                     bool channelsLast) {
  SmallVector<int64_t> shape(channelsFirst);
  if (channelsLast && shape.size() >= 3)
    std::rotate(shape.end() - 3, shape.end() - 2, shape.end());
  return shape;
}

//===----------------------------------------------------------------------===//
// Neuron ops
//===----------------------------------------------------------------------===//

/// Checks what every neuron op shares: the time/batch leading dims, per-neuron
/// parameters of the feature shape, and leaks that keep the membrane stable.
static LogicalResult verifyNeuronOp(Operation *op) {
  auto neuron = cast<NeuronOpInterface>(op);
  auto type = cast<RankedTensorType>(neuron.getInput().getType());
  unsigned lead = neuron.getNumLeadingDims();
  if (type.getRank() < lead + 1) {
    if (neuron.isStepForm())
      return op->emitOpError()
             << "expects a per-step input [B, features...] (rank >= 2) but got "
             << type << "; per-step neuron ops live in an snn.time_loop body";
    return op->emitOpError()
           << "expects a time-leading input [T, B, features...] (rank >= 3) "
              "but got "
           << type << "; put time first, then batch";
  }
  ArrayRef<int64_t> features = type.getShape().drop_front(lead);

  for (NamedAttribute named : op->getAttrs()) {
    StringRef name = named.getName().getValue();
    if (auto dense = dyn_cast<DenseFPElementsAttr>(named.getValue())) {
      if (!shapesAgree(dense.getType().getShape(), features))
        return op->emitOpError()
               << "per-neuron parameter '" << name << "' has shape "
               << formatShape(dense.getType().getShape())
               << " but the layer's neurons have shape "
               << formatShape(features)
               << "; give one value per neuron or a scalar";
    }
    if (name != "k" && name != "k_syn")
      continue;
    auto inUnitRange = [](double v) { return v >= 0.0 && v <= 1.0; };
    bool ok = true;
    double bad = 0.0;
    if (auto scalar = getScalarParam(named.getValue())) {
      ok = inUnitRange(*scalar);
      bad = *scalar;
    } else if (auto dense = dyn_cast<DenseFPElementsAttr>(named.getValue())) {
      for (APFloat v : dense.getValues<APFloat>()) {
        double d = v.convertToDouble();
        if (!inUnitRange(d)) {
          ok = false;
          bad = d;
          break;
        }
      }
    }
    if (!ok)
      return op->emitOpError()
             << "leak '" << name << "' = " << formatNumber(bad)
             << " is outside [0, 1]: the discrete neuron would not decay "
                "towards v_leak (k = dt/tau; use a smaller dt or a larger tau)";
  }
  return success();
}

OperandRange mlir::snn::getInitState(Operation *neuron) {
  return llvm::TypeSwitch<Operation *, OperandRange>(neuron)
      .Case<LIFOp, IFOp, PLIFOp, LIOp, CubaLIFOp>(
          [](auto op) { return op.getInitState(); })
      .Default([](Operation *op) {
        return op->getOperands().take_back(0);
      });
}

ResultRange mlir::snn::getFinalState(Operation *neuron) {
  return llvm::TypeSwitch<Operation *, ResultRange>(neuron)
      .Case<LIFOp, IFOp, PLIFOp, LIOp, CubaLIFOp>(
          [](auto op) { return op.getFinalState(); })
      .Default([](Operation *op) { return op->getResults().take_back(0); });
}

RankedTensorType mlir::snn::getNeuronStateType(NeuronOpInterface neuron) {
  auto type = cast<RankedTensorType>(neuron.getInput().getType());
  return RankedTensorType::get(type.getShape().drop_front(),
                               type.getElementType());
}

/// The optional time-split state of a multi-step neuron: none, or one
/// [B, features...] tensor per state, in and out; `init` replaces the
/// initial-state attributes.
static LogicalResult verifySplitState(Operation *op) {
  auto neuron = cast<NeuronOpInterface>(op);
  unsigned numStates = neuron.getNumStates();
  StringRef order = numStates == 2 ? " (i, then v)" : " (v)";
  RankedTensorType stateType = getNeuronStateType(neuron);
  auto check = [&](StringRef what, TypeRange types) -> LogicalResult {
    if (types.empty())
      return success();
    if (types.size() != numStates)
      return op->emitOpError()
             << "has " << types.size() << " " << what << " tensors but the layer has "
             << numStates << " state tensor" << (numStates == 1 ? "" : "s")
             << order;
    for (Type type : types)
      if (type != stateType)
        return op->emitOpError()
               << what << " has type " << type
               << " but a state of this layer is " << stateType
               << " (the input without its time dimension)";
    return success();
  };
  if (failed(check("init", getInitState(op).getTypes())) ||
      failed(check("final state", getFinalState(op).getTypes())))
    return failure();
  if (!getInitState(op).empty())
    for (StringRef name : {"v_init", "i_init"})
      if (op->hasAttr(name))
        return op->emitOpError()
               << "has both init(...) operands and '" << name
               << "'; the operands are the initial state, drop the attribute";
  return success();
}

#define SNN_NEURON_VERIFIER(OpClass)                                           \
  LogicalResult OpClass::verify() { return verifyNeuronOp(getOperation()); }
#define SNN_MULTI_STEP_NEURON_VERIFIER(OpClass)                                \
  LogicalResult OpClass::verify() {                                            \
    if (failed(verifyNeuronOp(getOperation())))                                \
      return failure();                                                        \
    return verifySplitState(getOperation());                                   \
  }
SNN_MULTI_STEP_NEURON_VERIFIER(LIFOp)
SNN_MULTI_STEP_NEURON_VERIFIER(IFOp)
SNN_MULTI_STEP_NEURON_VERIFIER(LIOp)
SNN_MULTI_STEP_NEURON_VERIFIER(CubaLIFOp)
#undef SNN_MULTI_STEP_NEURON_VERIFIER
SNN_NEURON_VERIFIER(LIFStepOp)
SNN_NEURON_VERIFIER(IFStepOp)
SNN_NEURON_VERIFIER(LIStepOp)
SNN_NEURON_VERIFIER(CubaLIFStepOp)
#undef SNN_NEURON_VERIFIER

/// PLIF's leak parameter is one value for the layer ([1]) or one per neuron.
static LogicalResult verifyPLIF(Operation *op, Value w) {
  if (failed(verifyNeuronOp(op)))
    return failure();
  auto neuron = cast<NeuronOpInterface>(op);
  ArrayRef<int64_t> features =
      shapeOf(neuron.getInput()).drop_front(neuron.getNumLeadingDims());
  ArrayRef<int64_t> wShape = shapeOf(w);
  if (shapesAgree(wShape, {1}) || shapesAgree(wShape, features))
    return success();
  return op->emitOpError() << "leak parameter 'w' has shape "
                           << formatShape(wShape)
                           << " but must be [1] (one leak for the layer) or "
                           << formatShape(features) << " (one per neuron)";
}
LogicalResult PLIFOp::verify() {
  if (failed(verifyPLIF(*this, getW())))
    return failure();
  return verifySplitState(*this);
}
LogicalResult PLIFStepOp::verify() { return verifyPLIF(*this, getW()); }

//===----------------------------------------------------------------------===//
// Stateless ops
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeight()),
                    out = shapeOf(getOutput());
  if (in.size() < 2)
    return emitOpError() << "expects an input [..., features] with at least "
                            "one leading (batch) dim, got "
                         << formatShape(in);
  if (w.size() != 2)
    return emitOpError() << "expects a weight [out_features, in_features], got "
                         << formatShape(w);
  if (!dimsAgree(in.back(), w[1]))
    return emitOpError() << "input has " << in.back()
                         << " features but weight expects " << w[1];
  if (getBias() && !shapesAgree(shapeOf(getBias()), {w[0]}))
    return emitOpError() << "bias has shape " << formatShape(shapeOf(getBias()))
                         << " but the layer has " << w[0]
                         << " output features";
  SmallVector<int64_t> expected(in.drop_back());
  expected.push_back(w[0]);
  if (!shapesAgree(out, expected))
    return emitOpError() << "result has shape " << formatShape(out)
                         << " but input " << formatShape(in) << " and weight "
                         << formatShape(w) << " give " << formatShape(expected);
  return verifyEventDrivenCrossover(*this, getEventDriven(), "input");
}

/// Output size of a sliding window, or nullopt when the window does not fit.
/// The output size of a window over `size` padded by `padBegin` before and
/// `padEnd` after.
static std::optional<int64_t> windowOutput(int64_t size, int64_t kernel,
                                           int64_t stride, int64_t padBegin,
                                           int64_t padEnd, int64_t dilation) {
  if (ShapedType::isDynamic(size))
    return ShapedType::kDynamic;
  int64_t span = dilation * (kernel - 1) + 1;
  if (size + padBegin + padEnd < span)
    return std::nullopt;
  return (size + padBegin + padEnd - span) / stride + 1;
}

static LogicalResult checkPositivePair(Operation *op, StringRef name,
                                       ArrayRef<int64_t> v, bool allowZero) {
  for (int64_t x : v)
    if (x < 0 || (!allowZero && x == 0))
      return op->emitOpError()
             << "'" << name << "' must be " << (allowZero ? ">= 0" : "> 0")
             << ", got " << formatShape(v);
  return success();
}

LogicalResult Conv2DOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeight()),
                    out = shapeOf(getOutput());
  // NCHW: x [..., C, H, W], w [O, C/groups, KH, KW]; channels_last (NHWC):
  // x [..., H, W, C], w [O, KH, KW, C].
  bool last = getChannelsLast();
  if (in.size() < 4)
    return emitOpError() << "expects an input "
                         << (last ? "[..., H, W, C] (channels_last)"
                                  : "[..., C, H, W]")
                         << " with at least one leading (batch) dim, got "
                         << formatShape(in);
  if (w.size() != 4)
    return emitOpError() << "expects a weight "
                         << (last ? "[out_channels, KH, KW, in_channels] "
                                    "(channels_last)"
                                  : "[out_channels, in_channels / groups, "
                                    "KH, KW]")
                         << ", got " << formatShape(w);
  if (failed(checkPositivePair(*this, "stride", getStride(), false)) ||
      failed(checkPositivePair(*this, "padding", getPadding(), true)) ||
      failed(checkPositivePair(*this, "dilation", getDilation(), false)))
    return failure();
  int64_t groups = getGroups();
  if (last && groups != 1)
    return emitOpError() << "channels_last supports groups = 1 only, got "
                         << groups;
  if (failed(verifyEventDrivenCrossover(*this, getEventDriven(), "input")))
    return failure();
  if (getEventDriven() && groups != 1)
    return emitOpError() << "event_driven supports groups = 1 only, got "
                         << groups;
  size_t r = in.size();
  int64_t c = last ? in[r - 1] : in[r - 3];
  int64_t wc = last ? w[3] : w[1];
  ArrayRef<int64_t> space = last ? in.slice(r - 3, 2) : in.take_back(2);
  ArrayRef<int64_t> kernel = last ? w.slice(1, 2) : w.drop_front(2);
  if (!ShapedType::isDynamic(c) && c % groups != 0)
    return emitOpError() << "input has " << c
                         << " channels, which is not divisible by groups = "
                         << groups;
  if (!ShapedType::isDynamic(c) && !dimsAgree(c / groups, wc))
    return emitOpError() << "input has " << c << " channels (" << c / groups
                         << " per group) but weight expects " << wc
                         << " per group"
                         << (last ? " (channels_last: input [..., H, W, C], "
                                    "weight [O, KH, KW, C])"
                                  : "");
  if (w[0] % groups != 0)
    return emitOpError() << "weight has " << w[0]
                         << " output channels, not divisible by groups = "
                         << groups;
  if (getBias() && !shapesAgree(shapeOf(getBias()), {w[0]}))
    return emitOpError() << "bias has shape " << formatShape(shapeOf(getBias()))
                         << " but the layer has " << w[0]
                         << " output channels";
  SmallVector<int64_t> expected(in.drop_back(3));
  if (!last)
    expected.push_back(w[0]);
  for (int i = 0; i < 2; ++i) {
    ArrayRef<int64_t> pad = getPadding();
    auto o = windowOutput(space[i], kernel[i], getStride()[i], pad[i],
                          pad[pad.size() == 4 ? 2 + i : i], getDilation()[i]);
    if (!o)
      return emitOpError() << "kernel " << formatShape(kernel)
                           << " (dilation " << formatShape(getDilation())
                           << ") is larger than the padded input "
                           << formatShape(space);
    expected.push_back(*o);
  }
  if (last)
    expected.push_back(w[0]);
  if (!shapesAgree(out, expected))
    return emitOpError() << "result has shape " << formatShape(out)
                         << " but the convolution gives "
                         << formatShape(expected)
                         << (last ? " (channels_last: [..., OH, OW, O])" : "");
  return success();
}

template <typename PoolOp>
static LogicalResult verifyPool(PoolOp op) {
  bool last = op.getChannelsLast();
  SmallVector<int64_t> inView = channelsFirstShape(op.getInput(), last),
                       outView = channelsFirstShape(op.getOutput(), last);
  ArrayRef<int64_t> in = inView, out = outView;
  StringRef layout = last ? "[..., H, W, C]" : "[..., C, H, W]";
  if (in.size() < 4)
    return op.emitOpError() << "expects an input " << layout
                            << " with at least one leading (batch) dim, got "
                            << formatShape(shapeOf(op.getInput()));
  ArrayRef<int64_t> kernel = op.getKernelSize(), pad = op.getPadding();
  SmallVector<int64_t, 2> stride = op.getEffectiveStride();
  if (failed(checkPositivePair(op, "kernel_size", kernel, false)) ||
      failed(checkPositivePair(op, "stride", stride, false)) ||
      failed(checkPositivePair(op, "padding", pad, true)))
    return failure();
  for (int i = 0; i < 2; ++i)
    if (2 * pad[i] > kernel[i])
      return op.emitOpError()
             << "padding " << formatShape(pad) << " must be at most half of "
             << "kernel_size " << formatShape(kernel);
  SmallVector<int64_t> expected(in.drop_back(2));
  for (int i = 0; i < 2; ++i) {
    auto o = windowOutput(in[in.size() - 2 + i], kernel[i], stride[i], pad[i],
                          pad[i], 1);
    if (!o)
      return op.emitOpError() << "kernel_size " << formatShape(kernel)
                              << " is larger than the padded input "
                              << formatShape(in.take_back(2)) << " (H, W)";
    expected.push_back(*o);
  }
  if (!shapesAgree(out, expected))
    return op.emitOpError() << "result has shape "
                            << formatShape(shapeOf(op.getOutput()))
                            << " but pooling gives "
                            << formatShape(inLayout(expected, last))
                            << (last ? " (channels_last: [..., OH, OW, C])"
                                     : "");
  return success();
}
LogicalResult AvgPool2DOp::verify() { return verifyPool(*this); }
LogicalResult SumPool2DOp::verify() { return verifyPool(*this); }
LogicalResult MaxPool2DOp::verify() { return verifyPool(*this); }

LogicalResult BatchNormOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  int64_t spatial = getSpatialRank();
  if ((int64_t)in.size() < spatial + 2)
    return emitOpError() << "expects an input [..., C"
                         << (spatial == 2 ? ", H, W" : "")
                         << "] with at least one leading (batch) dim for "
                            "spatial_rank = "
                         << spatial << ", got " << formatShape(in);
  int64_t channels = in[in.size() - 1 - spatial];
  for (auto [name, v] :
       {std::pair<StringRef, Value>{"gamma", getGamma()},
        {"beta", getBeta()},
        {"running_mean", getRunningMean()},
        {"running_var", getRunningVar()}})
    if (!shapesAgree(shapeOf(v), {channels}))
      return emitOpError() << "'" << name << "' has shape "
                           << formatShape(shapeOf(v)) << " but the input has "
                           << channels << " channels (dim "
                           << (int64_t)in.size() - 1 - spatial
                           << " with spatial_rank = " << spatial << ")";
  if (getInput().getType() != getOutput().getType())
    return emitOpError() << "result type " << getOutput().getType()
                         << " differs from the input type "
                         << getInput().getType();
  if (!(getEps().convertToDouble() > 0.0))
    return emitOpError() << "eps must be > 0";
  double m = getMomentum().convertToDouble();
  if (m < 0.0 || m > 1.0)
    return emitOpError() << "momentum " << formatNumber(m) << " must be in [0, 1]";
  return success();
}

LogicalResult FlattenOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), out = shapeOf(getOutput());
  if (out.empty() || out.size() > in.size())
    return emitOpError() << "result shape " << formatShape(out)
                         << " must keep some leading dims of "
                         << formatShape(in) << " and merge the rest";
  size_t keep = out.size() - 1;
  if (!shapesAgree(in.take_front(keep), out.take_front(keep)))
    return emitOpError() << "result " << formatShape(out)
                         << " changes the leading dims of " << formatShape(in);
  int64_t merged = 1;
  for (int64_t d : in.drop_front(keep)) {
    if (ShapedType::isDynamic(d))
      return success();
    merged *= d;
  }
  if (!dimsAgree(out.back(), merged))
    return emitOpError() << "merging the trailing dims of " << formatShape(in)
                         << " gives " << merged << " elements, not "
                         << out.back();
  return success();
}

OpFoldResult FlattenOp::fold(FoldAdaptor) {
  if (getInput().getType() == getOutput().getType())
    return getInput();
  return {};
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), out = shapeOf(getOutput());
  ArrayRef<int64_t> perm = getPermutation();
  if (perm.size() != in.size() || out.size() != in.size())
    return emitOpError() << "permutation " << formatShape(perm) << " of "
                         << perm.size() << " dims for an input of rank "
                         << in.size() << " and a result of rank " << out.size()
                         << "; all three must agree";
  SmallVector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)perm.size() || seen[p])
      return emitOpError() << "permutation " << formatShape(perm)
                           << " is not a permutation of 0.."
                           << perm.size() - 1;
    seen[p] = true;
  }
  SmallVector<int64_t> expected;
  for (int64_t p : perm)
    expected.push_back(in[p]);
  if (!shapesAgree(out, expected))
    return emitOpError() << "result has shape " << formatShape(out)
                         << " but permuting " << formatShape(in) << " by "
                         << formatShape(perm) << " gives "
                         << formatShape(expected);
  if (getElementTypeOrSelf(getInput()) != getElementTypeOrSelf(getOutput()))
    return emitOpError() << "changes the element type";
  return success();
}

/// The permutation of transpose(transpose(x, inner), outer): result dim i
/// is x's dim inner[outer[i]].
static SmallVector<int64_t> composePermutations(ArrayRef<int64_t> inner,
                                                ArrayRef<int64_t> outer) {
  SmallVector<int64_t> composed;
  for (int64_t p : outer)
    composed.push_back(inner[p]);
  return composed;
}

static bool isIdentityPermutation(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (p != (int64_t)i)
      return false;
  return true;
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (isIdentityPermutation(getPermutation()))
    return getInput();
  // A transpose back: the pair cancels.
  if (auto inner = getInput().getDefiningOp<TransposeOp>())
    if (isIdentityPermutation(composePermutations(inner.getPermutation(),
                                                  getPermutation())) &&
        inner.getInput().getType() == getType())
      return inner.getInput();
  return {};
}

LogicalResult TransposeOp::canonicalize(TransposeOp op,
                                        PatternRewriter &rewriter) {
  auto inner = op.getInput().getDefiningOp<TransposeOp>();
  if (!inner)
    return failure();
  rewriter.replaceOpWithNewOp<TransposeOp>(
      op, op.getType(), inner.getInput(),
      composePermutations(inner.getPermutation(), op.getPermutation()));
  return success();
}

OpFoldResult ScaleOp::fold(FoldAdaptor) {
  if (getScale().convertToDouble() == 1.0)
    return getInput();
  return {};
}

LogicalResult DropoutOp::verify() {
  double p = getP().convertToDouble();
  if (!(p >= 0.0 && p < 1.0))
    return emitOpError() << "p = " << formatNumber(p)
                         << " must be in [0, 1) (the probability of dropping "
                            "an element)";
  return success();
}

OpFoldResult DropoutOp::fold(FoldAdaptor) {
  if (getP().convertToDouble() == 0.0)
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  auto type = cast<RankedTensorType>(getResult().getType());
  if (getName().empty())
    return emitOpError() << "needs a non-empty name (the checkpoint key, "
                            "e.g. \"fc1.weight\")";
  if (!type.hasStaticShape())
    return emitOpError() << "'" << getName() << "' must have a static shape, got "
                         << type;
  if (auto value = getValue()) {
    auto valueType = cast<ShapedType>(value->getType());
    if (valueType.getShape() != type.getShape())
      return emitOpError() << "'" << getName() << "' has value of shape "
                           << formatShape(valueType.getShape())
                           << " but is declared as " << type;
    if (!isa<FloatType>(valueType.getElementType()))
      return emitOpError() << "'" << getName()
                           << "' has a non-float value of type " << valueType;
  }
  InitKind init = getInit();
  if ((init == InitKind::Constant || init == InitKind::Uniform ||
       init == InitKind::Normal) &&
      !getInitScale())
    return emitOpError() << "'" << getName() << "': init = "
                         << stringifyInitKind(init)
                         << " needs init_scale (the value, the bound, or the "
                            "standard deviation)";
  if (init == InitKind::KaimingUniform && type.getRank() < 2)
    return emitOpError() << "'" << getName()
                         << "': kaiming_uniform needs a weight of rank >= 2 "
                            "(it takes fan_in from dims 1...), got "
                         << type;
  // One name is one tensor: a second use must agree on the type.
  auto func = (*this)->getParentOfType<FunctionOpInterface>();
  if (!func)
    return success();
  WalkResult walk = func->walk([&](ParamOp other) {
    if (other == *this || other.getName() != getName())
      return WalkResult::advance();
    if (other.getType() != getType()) {
      emitOpError() << "'" << getName() << "' is declared as " << getType()
                    << " here but as " << other.getType()
                    << " elsewhere; one name is one tensor";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// TimeLoopOp
//===----------------------------------------------------------------------===//

int64_t TimeLoopOp::getNumTimeSteps() {
  if (auto n = getNumSteps())
    return *n;
  for (Value in : getInputs())
    if (!ShapedType::isDynamic(shapeOf(in)[0]))
      return shapeOf(in)[0];
  return ShapedType::kDynamic;
}

YieldOp TimeLoopOp::getYield() {
  return cast<YieldOp>(getBodyBlock().getTerminator());
}

static RankedTensorType dropTime(Type t) {
  auto r = cast<RankedTensorType>(t);
  return RankedTensorType::get(r.getShape().drop_front(), r.getElementType());
}

LogicalResult TimeLoopOp::verify() {
  if (getInputs().empty() && !getNumSteps())
    return emitOpError() << "has no time-leading inputs, so it needs "
                            "num_steps to know how many steps to run";
  int64_t steps = getNumSteps() ? (int64_t)*getNumSteps() : ShapedType::kDynamic;
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    ArrayRef<int64_t> shape = shapeOf(in);
    if (shape.empty())
      return emitOpError() << "input #" << i << " is a scalar; inputs must be "
                              "time-leading [T, ...]";
    if (!dimsAgree(shape[0], steps))
      return emitOpError() << "input #" << i << " has " << shape[0]
                           << " time steps but the loop runs " << steps;
    if (ShapedType::isDynamic(steps))
      steps = shape[0];
  }
  if (getNumResults() < getInits().size())
    return emitOpError() << "has " << getInits().size()
                         << " loop-carried values but only " << getNumResults()
                         << " results; the final state is returned after the "
                            "stacked outputs";
  for (unsigned i = 0, e = getNumStepOutputs(); i < e; ++i) {
    ArrayRef<int64_t> shape = shapeOf(getResult(i));
    if (shape.empty() || !dimsAgree(shape[0], steps))
      return emitOpError() << "result #" << i << " " << getResult(i).getType()
                           << " must be stacked over the " << steps
                           << " time steps [T, ...]";
  }
  for (auto [i, init] : llvm::enumerate(getInits())) {
    Value res = getResult(getNumStepOutputs() + i);
    if (res.getType() != init.getType())
      return emitOpError() << "final state #" << i << " has type "
                           << res.getType() << " but its initial value has "
                           << init.getType();
  }
  return success();
}

LogicalResult TimeLoopOp::verifyRegions() {
  Block &body = getBodyBlock();
  unsigned nIn = getInputs().size(), nInit = getInits().size();
  if (body.getNumArguments() != nIn + nInit)
    return emitOpError() << "body takes " << body.getNumArguments()
                         << " arguments but the loop has " << nIn
                         << " inputs and " << nInit
                         << " loop-carried values (one argument each)";
  for (unsigned i = 0; i < nIn; ++i)
    if (body.getArgument(i).getType() != dropTime(getInputs()[i].getType()))
      return emitOpError() << "body argument #" << i << " has type "
                           << body.getArgument(i).getType()
                           << " but one step of input #" << i << " is "
                           << dropTime(getInputs()[i].getType());
  for (unsigned i = 0; i < nInit; ++i)
    if (body.getArgument(nIn + i).getType() != getInits()[i].getType())
      return emitOpError() << "body argument #" << nIn + i << " has type "
                           << body.getArgument(nIn + i).getType()
                           << " but loop-carried value #" << i << " is "
                           << getInits()[i].getType();
  YieldOp yield = getYield();
  if (yield.getValues().size() != getNumResults())
    return yield.emitOpError()
           << "yields " << yield.getValues().size() << " values but the loop "
           << "has " << getNumResults() << " results ("
           << getNumStepOutputs() << " per-step outputs, then " << nInit
           << " next-state values)";
  for (unsigned i = 0, e = getNumStepOutputs(); i < e; ++i)
    if (yield.getValues()[i].getType() != dropTime(getResult(i).getType()))
      return yield.emitOpError()
             << "per-step output #" << i << " has type "
             << yield.getValues()[i].getType() << " but the loop result is "
             << getResult(i).getType() << " (one step: "
             << dropTime(getResult(i).getType()) << ")";
  for (unsigned i = 0; i < nInit; ++i)
    if (yield.getValues()[getNumStepOutputs() + i].getType() !=
        getInits()[i].getType())
      return yield.emitOpError()
             << "next state #" << i << " has type "
             << yield.getValues()[getNumStepOutputs() + i].getType()
             << " but the loop carries " << getInits()[i].getType();
  return success();
}

#define GET_OP_CLASSES
#include "snn/Dialect/SNN/IR/SNNOps.cpp.inc"
