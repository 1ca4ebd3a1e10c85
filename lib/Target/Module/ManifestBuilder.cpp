//===- ManifestBuilder.cpp - manifest.json from the multi-step IR ---------===//
//
// Every func argument and op result becomes a tensor; every op becomes
// {"op", "in", "out", ...attributes} (docs/artifact-format.md). Ops with a
// documented mapping (neurons, batch norm, pools, ...) are written with their
// defaults filled in; other snn ops of the training programs (losses,
// gradients, optimizers, produced by the autodiff pass) are written
// generically: their name without "snn." and their attributes
// (TrainPrograms.cpp).
//
//===----------------------------------------------------------------------===//

#include "ManifestBuilder.h"
#include "NeuronSerialization.h"
#include "snn/Dialect/SNN/IR/FusedBatchNorm.h"
#include "snn/Dialect/SNN/IR/FusedCount.h"
#include "snn/Dialect/SNN/IR/FusedLinearGrad.h"
#include "snn/Dialect/SNN/IR/FusedPool.h"
#include "snn/Dialect/SNN/IR/FusedTimeMean.h"
#include "snn/Conversion/NeuronToGPU/LossKernels.h"
#include "snn/Conversion/NeuronToGPU/PoolKernels.h"
#include "snn/Conversion/NeuronToGPU/TransposeKernels.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::snn;
using llvm::json::Array;
using llvm::json::Object;

StringRef mlir::snn::getOpKind(Operation *op) {
  StringRef name = op->getName().getStringRef();
  name.consume_front("snn.");
  return name;
}

Array mlir::snn::toArray(ArrayRef<int64_t> values) { return Array(values); }

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>>
ManifestBuilder::resolveShape(Operation *where, Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return where->emitError() << "snn-compile needs ranked tensors, got "
                              << type;
  SmallVector<int64_t> shape(ranked.getShape());
  for (int64_t &d : shape) {
    if (!ShapedType::isDynamic(d))
      continue;
    if (batch <= 0)
      return where->emitError()
             << "dynamic dimension in " << type
             << ": the compiled module has static shapes; give the batch "
                "size with --snn-compile=\"batch=N ...\" or write static "
                "shapes";
    d = batch;
  }
  return shape;
}

int64_t ManifestBuilder::addTensor(Object tensor) {
  int64_t id = tensors.size();
  tensor["id"] = id;
  if (!tensor.get("name"))
    tensor["name"] = "%" + std::to_string(id);
  tensors.push_back(std::move(tensor));
  return id;
}

FailureOr<int64_t> ManifestBuilder::addValueTensor(Operation *where,
                                                   Value value, StringRef role,
                                                   std::string name) {
  FailureOr<SmallVector<int64_t>> shape = resolveShape(where, value.getType());
  if (failed(shape))
    return failure();
  Object tensor{{"shape", toArray(*shape)}, {"role", role}};
  if (!name.empty())
    tensor["name"] = name;
  int64_t id = addTensor(std::move(tensor));
  ids[value] = id;
  return id;
}

FailureOr<int64_t> ManifestBuilder::addRowBitsTensor(Operation *where,
                                                     Value spikes,
                                                     StringRef layer) {
  FailureOr<SmallVector<int64_t>> shape = resolveShape(where, spikes.getType());
  if (failed(shape))
    return failure();
  int64_t elements = 1;
  for (int64_t d : *shape)
    elements *= d;
  // Saved: snn-run reads the layer's density from it after train_forward.
  int64_t id = addTensor(Object{{"name", (layer + ".bits").str()},
                                {"shape", Array{elements / 32}},
                                {"dtype", "u32"},
                                {"role", "saved"}});
  ids[spikes] = id;
  rowBitsTensors.insert(id);
  return id;
}

FailureOr<Array> ManifestBuilder::addResultTensors(Operation *op,
                                                  StringRef role) {
  Array out;
  for (Value result : op->getResults()) {
    FailureOr<int64_t> id = addValueTensor(op, result, role);
    if (failed(id))
      return failure();
    out.push_back(*id);
  }
  return out;
}

FailureOr<int64_t> ManifestBuilder::lookup(Operation *user, Value value) {
  auto it = ids.find(value);
  if (it != ids.end())
    return it->second;
  return user->emitError() << "snn-compile: operand not produced by a "
                              "supported op (see the errors above)";
}

FailureOr<int64_t> ManifestBuilder::addParam(ParamOp op) {
  auto it = paramIds.find(op.getName());
  if (it != paramIds.end()) {
    // One name is one tensor across @forward and @train_step.
    auto shape = tensor(it->second).getArray("shape");
    auto type = cast<RankedTensorType>(op.getType());
    if (!shape || *shape != toArray(type.getShape()))
      return op.emitError() << "parameter '" << op.getName()
                            << "' has type " << type
                            << " here but another shape in another function";
    return it->second;
  }
  auto type = cast<RankedTensorType>(op.getType());
  Object init;
  double scale = op.getInitScale() ? op.getInitScale()->convertToDouble() : 0;
  if (std::optional<ElementsAttr> value = op.getValue()) {
    auto values = value->tryGetValues<APFloat>();
    if (!values)
      return op.emitError() << "parameter '" << op.getName()
                            << "': cannot read its value as floats";
    std::vector<float> data;
    for (APFloat v : *values) {
      bool lost;
      v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      data.push_back(v.convertToFloat());
    }
    if (!initFile.add(op.getName(), type.getShape(), std::move(data)))
      return op.emitError() << "two tensors are named '" << op.getName()
                            << "' in init.safetensors; rename one";
    init = Object{{"kind", "file"}};
  } else {
    switch (op.getInit()) {
    case InitKind::Zeros:
      init = Object{{"kind", "zeros"}};
      break;
    case InitKind::Ones:
      init = Object{{"kind", "ones"}};
      break;
    case InitKind::Constant:
      init = Object{{"kind", "constant"}, {"value", scale}};
      break;
    case InitKind::Uniform:
      init = Object{{"kind", "uniform"}, {"bound", scale}};
      break;
    case InitKind::Normal:
      init = Object{{"kind", "normal"}, {"std", scale}};
      break;
    case InitKind::KaimingUniform: {
      int64_t fanIn = 1;
      for (int64_t d : type.getShape().drop_front())
        fanIn *= d;
      init = Object{{"kind", "kaiming_uniform"}, {"fan_in", fanIn}};
      break;
    }
    }
  }
  bool trainable = op.getTrainable();
  int64_t id = addTensor(Object{{"name", op.getName()},
                                {"shape", toArray(type.getShape())},
                                {"role", trainable ? "param" : "buffer"},
                                {"init", std::move(init)},
                                {"trainable", trainable}});
  paramIds[op.getName()] = id;
  return id;
}

int64_t ManifestBuilder::addConstant(StringRef name, DenseFPElementsAttr values) {
  // The same layer in @forward and @train_step shares its constants.
  std::string unique = name.str();
  for (unsigned n = 2;; ++n) {
    auto it = constantIds.find(unique);
    if (it == constantIds.end())
      break;
    if (it->second.second == values)
      return it->second.first;
    unique = (name + "#" + Twine(n)).str();
  }
  std::vector<float> data;
  for (APFloat v : values.getValues<APFloat>()) {
    bool lost;
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    data.push_back(v.convertToFloat());
  }
  ArrayRef<int64_t> shape = values.getType().getShape();
  (void)initFile.add(unique, shape, std::move(data));
  int64_t id = addTensor(Object{{"name", unique},
                                {"shape", toArray(shape)},
                                {"role", "constant"},
                                {"init", Object{{"kind", "file"}}}});
  constantIds[unique] = {id, values};
  return id;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

FailureOr<llvm::json::Value>
ManifestBuilder::convertAttribute(Operation *op, StringRef name,
                                  Attribute attr) {
  // An I32 enum is an IntegerAttr: before the integers.
  if (auto peer = dyn_cast<PeerAttr>(attr))
    return llvm::json::Value(stringifyPeer(peer.getValue()));
  if (auto b = dyn_cast<BoolAttr>(attr))
    return llvm::json::Value(b.getValue());
  if (auto f = dyn_cast<FloatAttr>(attr))
    return llvm::json::Value(f.getValueAsDouble());
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    if (i.getType().isInteger(1))
      return llvm::json::Value(i.getValue().getBoolValue());
    return llvm::json::Value(i.getValue().getSExtValue());
  }
  if (isa<UnitAttr>(attr))
    return llvm::json::Value(true);
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
    return llvm::json::Value(toArray(a.asArrayRef()));
  if (auto s = dyn_cast<StringAttr>(attr))
    return llvm::json::Value(s.getValue());
  if (auto r = dyn_cast<ResetModeAttr>(attr))
    return llvm::json::Value(stringifyResetMode(r.getValue()));
  if (auto k = dyn_cast<InitKindAttr>(attr))
    return llvm::json::Value(stringifyInitKind(k.getValue()));
  if (auto s = dyn_cast<SurrogateAttr>(attr))
    return llvm::json::Value(serializeSurrogate(s));
  if (auto dense = dyn_cast<DenseFPElementsAttr>(attr)) {
    std::string layer = getLayerName(op, getOpKind(op));
    return llvm::json::Value(
        Object{{"tensor", addConstant(layer + "." + name.str(), dense)}});
  }
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    Array out;
    for (Attribute element : array) {
      FailureOr<llvm::json::Value> v = convertAttribute(op, name, element);
      if (failed(v))
        return failure();
      out.push_back(std::move(*v));
    }
    return llvm::json::Value(std::move(out));
  }
  return op->emitError() << "snn-compile cannot write attribute '" << name
                         << "' = " << attr
                         << " into the manifest (supported: numbers, bools, "
                            "strings, i64 arrays, enums, surrogates, dense "
                            "float tensors)";
}

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

void ManifestBuilder::emit(Phase phase, Object op) {
  if (bodyTarget) {
    bodyTarget->push_back(std::move(op));
    return;
  }
  llvm::json::Array *programs[] = {&infer, &trainForward, &backward, &update};
  programs[static_cast<int>(phase)]->push_back(std::move(op));
}

std::string ManifestBuilder::getLayerName(Operation *op, StringRef model) {
  if (auto name = op->getAttrOfType<StringAttr>("snn.name"))
    return name.str();
  // Numbered per function and model, so the same layer of @forward and
  // @train_step gets the same name.
  return (model + Twine(layerCounters[model]++)).str();
}

LogicalResult ManifestBuilder::beginFunction(func::FuncOp func, bool training) {
  ids.clear();
  neurons.clear();
  savedState.clear();
  forwardActivations.clear();
  trainForwardRowLists.clear();
  packedSpikes.clear();
  bitsOnlySpikes.clear();
  occupancyBits.clear();
  layerCounters.clear();
  savedStepH.clear();
  StringRef what = training ? "@train_step" : "@forward";
  if (func.isExternal())
    return func.emitError() << what << " has no body";
  if (func.getNumArguments() == 0)
    return func.emitError()
           << what << " needs the input [T, B, features...] as its first "
                      "argument";
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    bool isLabel = type && isa<IntegerType>(type.getElementType());
    if (arg.getArgNumber() == 0) {
      FailureOr<SmallVector<int64_t>> shape = resolveShape(func, arg.getType());
      if (failed(shape))
        return failure();
      if (isLabel || shape->size() < 3)
        return func.emitError()
               << what << ": the input must be a float tensor [T, B, "
                          "features...], got "
               << arg.getType();
      // A rank of a time split reads its steps of the whole input.
      SmallVector<int64_t> whole(*shape);
      if (splitSteps)
        whole[0] = splitSteps;
      Phase phase = training ? Phase::TrainForward : Phase::Infer;
      if (inputId) {
        if (tensor(*inputId).getArray("shape") &&
            *tensor(*inputId).getArray("shape") != toArray(whole))
          return func.emitError()
                 << what << ": the input " << arg.getType()
                 << " has another shape than in the other entry point";
      } else {
        timeSteps = whole[0];
        batchSize = whole[1];
        localSteps = (*shape)[0];
        inputId = addTensor(Object{{"name", "input"},
                                   {"shape", toArray(whole)},
                                   {"role", "input"}});
      }
      if (!splitSteps) {
        ids[arg] = *inputId;
        continue;
      }
      if (failed(addLocalInput(func, arg, *shape, phase)))
        return failure();
      continue;
    }
    if (training && isLabel && !labelsId) {
      FailureOr<SmallVector<int64_t>> shape = resolveShape(func, arg.getType());
      if (failed(shape))
        return failure();
      if (shape->size() != 1 || (*shape)[0] != batchSize)
        return func.emitError()
               << "@train_step: the labels must be [B] = [" << batchSize
               << "] class indices, got " << arg.getType();
      labelsId = addTensor(Object{{"name", "labels"},
                                  {"shape", toArray(*shape)},
                                  {"role", "label"},
                                  {"dtype", "i32"}});
      ids[arg] = *labelsId;
      continue;
    }
    return func.emitError()
           << what << ": argument #" << arg.getArgNumber() << " of type "
           << arg.getType()
           << " is not supported; the entry point takes the input [T, B, "
              "...]"
           << (training ? " and the integer labels [B]" : "")
           << "; make weights snn.param ops";
  }
  return success();
}

FailureOr<int64_t> ManifestBuilder::addLocalInput(func::FuncOp func,
                                                  BlockArgument arg,
                                                  ArrayRef<int64_t> localShape,
                                                  Phase phase) {
  if (localShape[0] != localSteps)
    return func.emitError() << "takes " << localShape[0]
                            << " time steps but the other entry point of "
                               "this rank takes "
                            << localSteps;
  // One tensor for both entry points, as the input.
  std::optional<int64_t> id = localInputId;
  if (!id) {
    FailureOr<int64_t> added =
        addValueTensor(func, arg, "activation", "input.local");
    if (failed(added))
      return failure();
    id = localInputId = *added;
  }
  ids[arg] = *id;
  forwardActivations.insert(*id);
  emit(phase, Object{{"op", "time_range"},
                     {"in", Array{*inputId}},
                     {"out", Array{*id}}});
  return *id;
}

LogicalResult ManifestBuilder::addInferProgram(func::FuncOp forward) {
  if (failed(beginFunction(forward, /*training=*/false)))
    return failure();
  for (Operation &op : forward.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (ret.getNumOperands() != 1)
        return ret.emitError() << "@forward must return one tensor (the "
                                  "output [T, B, classes]), not "
                               << ret.getNumOperands();
      FailureOr<int64_t> id = lookup(ret, ret.getOperand(0));
      if (failed(id))
        return failure();
      outputId = *id;
      if (splitSteps) {
        // Every rank gets the output of all steps.
        Array shape = *tensor(*id).getArray("shape");
        shape[0] = splitSteps;
        outputId = addTensor(Object{{"name", "output"},
                                    {"shape", std::move(shape)},
                                    {"role", "activation"}});
        emit(Phase::Infer, Object{{"op", "gather_time"},
                                  {"in", Array{*id}},
                                  {"out", Array{*outputId}}});
      }
      continue;
    }
    if (failed(serializeOp(&op, Phase::Infer)))
      return failure();
  }
  return success();
}

LogicalResult ManifestBuilder::serializeOp(Operation *op, Phase phase) {
  bool forwardPhase = phase == Phase::Infer || phase == Phase::TrainForward;
  if (auto param = dyn_cast<ParamOp>(op)) {
    FailureOr<int64_t> id = addParam(param);
    if (failed(id))
      return failure();
    ids[param.getResult()] = *id;
    paramOfValue[param.getResult()] = *id;
    return success();
  }
  // Reshapes and eval-mode dropout share the storage of their input.
  bool isAlias = isa<FlattenOp, ReshapeOp>(op) ||
                 (isa<DropoutOp>(op) && phase == Phase::Infer);
  if (isAlias) {
    FailureOr<int64_t> in = lookup(op, op->getOperand(0));
    if (failed(in))
      return failure();
    int64_t root = *in;
    if (const llvm::json::Value *of = tensor(root).get("alias_of"))
      root = *of->getAsInteger();
    FailureOr<int64_t> id = addValueTensor(op, op->getResult(0), "activation");
    if (failed(id))
      return failure();
    tensor(*id)["alias_of"] = root;
    if (forwardPhase)
      forwardActivations.insert(*id);
    return success();
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return serializeConstant(constant);
  if (auto loop = dyn_cast<TimeLoopOp>(op))
    return serializeTimeLoop(loop, phase);
  if (auto neuron = dyn_cast<NeuronOpInterface>(op);
      neuron && neuron.isStepForm()) {
    if (!forwardPhase)
      return op->emitError() << "forward neuron op in the backward program";
    return serializeNeuronStep(op, phase);
  }
  if (isa<NeuronStepBwdOp, CubaLIFStepBwdOp, PLIFStepBwdOp>(op))
    return serializeNeuronStepBackward(op);
  if (isa<NeuronOpInterface>(op)) {
    if (!forwardPhase)
      return op->emitError() << "forward neuron op in the backward program";
    return serializeNeuron(op, phase);
  }
  if (isNeuronBackwardOp(op))
    return serializeNeuronBackward(op);

  if (auto linear = dyn_cast<LinearOp>(op);
      linear && linear.getEventDriven() && forwardPhase)
    return serializeEventLinear(linear, phase);
  if (auto conv = dyn_cast<Conv2DOp>(op);
      conv && conv.getEventDriven() && forwardPhase)
    return serializeEventConv(conv, phase);
  if (auto bwd = dyn_cast<LinearBwdOp>(op); bwd && bwd.getEventDriven())
    return serializeEventLinearBackward(bwd);
  if (auto bwd = dyn_cast<LinearBwdOp>(op); bwd && !forwardPhase) {
    FailureOr<int64_t> x = lookup(op, bwd.getInput());
    if (failed(x))
      return failure();
    if (rowBitsTensors.contains(*x))
      return serializeThinWeightGradBits(bwd, *x);
  }
  // An inference batch norm that the neuron layer after it applies
  // (--snn-fuse) is nothing: the layer reads x and the running statistics.
  if (isa<BatchNormOp>(op) && phase == Phase::Infer && getFusingNeuron(op))
    return success();
  // The pooling of a fused layer is computed by its neuron op, the
  // pooling's backward by its neuron_bwd (which reads the pooled gradient).
  if (isa<AvgPool2DOp, SumPool2DOp>(op))
    if (Operation *neuron = op->getOperand(0).getDefiningOp();
        neuron && neuron->hasAttr(kFusedPoolAttrName))
      return success();
  if (isFusedPoolBackward(op))
    return success();
  // A time mean that the layer's forward computes, and a broadcast that
  // its backward reads (--snn-fuse), are nothing of their own.
  if (auto sum = dyn_cast<TimeSumOp>(op);
      sum && sum->hasAttr(kTimeSumInNeuronAttrName)) {
    Operation *neuron = sum.getInput().getDefiningOp();
    if (!neuron || !neuron->hasAttr(kFusedTimeMeanAttrName))
      return op->emitError()
             << "'" << kTimeSumInNeuronAttrName
             << "' needs a neuron layer marked '" << kFusedTimeMeanAttrName
             << "' as the input; rerun --snn-fuse";
    return success();
  }
  if (auto broadcast = dyn_cast<TimeBroadcastOp>(op);
      broadcast && broadcast->hasAttr(kTimeBroadcastInNeuronAttrName))
    return success();

  bool known = isa<LinearOp, Conv2DOp, AvgPool2DOp, SumPool2DOp, MaxPool2DOp,
                   BatchNormOp, AddOp, ScaleOp, DropoutOp, TransposeOp,
                   TimeSliceOp,
                   TimeStackOp, RecvOp, SendOp, AllReduceSumOp, TimeSumOp,
                   TimeBroadcastOp>(op);
  if (!known && (forwardPhase || op->getName().getDialectNamespace() != "snn"))
    return op->emitError()
           << "'" << op->getName()
           << "' is not supported by snn-compile: a compiled module runs "
              "the snn ops of docs/artifact-format.md (linear, conv2d, pools, "
              "batch_norm, add, scale, dropout, flatten, transpose, neurons, "
              "param)";
  return serializeGeneric(op, phase);
}

/// Operands in order, then results as new tensors; attributes per op.
LogicalResult ManifestBuilder::serializeGeneric(Operation *op, Phase phase) {
  bool forwardPhase = phase == Phase::Infer || phase == Phase::TrainForward;
  Object json{{"op", getOpKind(op)}};
  Array in;
  // batch_norm_bwd and dropout_bwd name the forward op's result; they read
  // what it saved (the batch statistics, the mask), not the result itself.
  Value forwardResult;
  if (auto bn = dyn_cast<BatchNormBwdOp>(op)) {
    forwardResult = bn.getForward();
    // The layout of x is the forward's.
    if (auto forward = bn.getForward().getDefiningOp<BatchNormOp>())
      json["spatial_rank"] = forward.getSpatialRank();
  }
  if (auto dropout = dyn_cast<DropoutBwdOp>(op)) {
    forwardResult = dropout.getForward();
    json["p"] = dropout.getForward().getDefiningOp<DropoutOp>().getP().convertToDouble();
  }
  for (Value operand : op->getOperands()) {
    if (operand == forwardResult) {
      auto saved = savedState.find(operand.getDefiningOp());
      if (saved == savedState.end())
        return op->emitError() << "the forward op of '" << op->getName()
                               << "' did not run in training mode before it";
      for (int64_t id : saved->second)
        in.push_back(id);
      continue;
    }
    FailureOr<int64_t> id = lookup(op, operand);
    if (failed(id))
      return failure();
    if (isa<LinearBwdOp, Conv2DBwdOp>(op) && operand == op->getOperand(1))
      *id = unpackSpikesFor(op, operand, *id);
    in.push_back(*id);
    if (!forwardPhase && forwardActivations.contains(*id))
      tensor(*id)["role"] = "saved";
  }
  // A training batch norm whose neuron layer applies it writes no y.
  bool appliedByNeuron =
      isa<BatchNormOp>(op) && phase != Phase::Infer && getFusingNeuron(op);
  // A thin linear backward whose gx the neuron backward reading it forms
  // (--snn-fuse) computes its weight (and bias) gradient only.
  bool gxInNeuron =
      isa<LinearBwdOp>(op) && op->hasAttr(kGxInNeuronBwdAttrName);
  Array out;
  if (appliedByNeuron) {
    json["applied_by_neuron"] = true;
  } else if (gxInNeuron) {
    for (Value grad : op->getResults().drop_front()) {
      FailureOr<int64_t> id = addValueTensor(op, grad, "grad");
      if (failed(id))
        return failure();
      out.push_back(*id);
    }
  } else {
    FailureOr<Array> results =
        addResultTensors(op, forwardPhase ? "activation" : "grad");
    if (failed(results))
      return failure();
    out = std::move(*results);
  }
  if (forwardPhase)
    for (const llvm::json::Value &id : out)
      forwardActivations.insert(*id.getAsInteger());

  // Attributes as the IR has them; documented ops get their defaults too.
  for (NamedAttribute attr : op->getAttrs()) {
    if (attr.getName() == "snn.name" ||
        attr.getName() == "operandSegmentSizes" ||
        attr.getName() == kGxInNeuronBwdAttrName)
      continue;
    FailureOr<llvm::json::Value> value =
        convertAttribute(op, attr.getName(), attr.getValue());
    if (failed(value))
      return failure();
    json[attr.getName().getValue()] = std::move(*value);
  }
  if (gxInNeuron)
    json["need_gx"] = false;
  bool training = phase != Phase::Infer;
  llvm::TypeSwitch<Operation *>(op)
      .Case<LinearOp>([&](LinearOp linear) {
        json["has_bias"] = static_cast<bool>(linear.getBias());
      })
      .Case<Conv2DOp>([&](Conv2DOp conv) {
        json["has_bias"] = static_cast<bool>(conv.getBias());
        json["stride"] = toArray(conv.getStride());
        json["padding"] = toArray(conv.getPadding());
        json["dilation"] = toArray(conv.getDilation());
        json["groups"] = conv.getGroups();
      })
      .Case<Conv2DBwdOp>([&](Conv2DBwdOp conv) {
        json["stride"] = toArray(conv.getStride());
        json["padding"] = toArray(conv.getPadding());
        json["dilation"] = toArray(conv.getDilation());
        json["groups"] = conv.getGroups();
      })
      .Case<AvgPool2DOp, SumPool2DOp, MaxPool2DOp, AvgPool2DBwdOp,
            SumPool2DBwdOp, MaxPool2DBwdOp>([&](auto pool) {
        json.erase("kernel_size");
        json["kernel"] = toArray(pool.getKernelSize());
        json["stride"] = toArray(pool.getEffectiveStride());
        json["padding"] = toArray(pool.getPadding());
      })
      .Case<BatchNormOp>([&](BatchNormOp bn) {
        json["eps"] = bn.getEps().convertToDouble();
        json["momentum"] = bn.getMomentum().convertToDouble();
        json["spatial_rank"] = bn.getSpatialRank();
        json["training"] = training;
      })
      .Case<DropoutOp>([&](DropoutOp dropout) {
        json["training"] = training;
        json["shared_across_time"] = dropout.getSharedAcrossTime();
      });

  // Training batch norm saves its statistics, dropout its mask.
  if (auto bn = dyn_cast<BatchNormOp>(op); bn && training) {
    int64_t channels = cast<RankedTensorType>(bn.getGamma().getType()).getDimSize(0);
    for (int i = 0; i < 2; ++i) { // saved_mean, saved_invstd
      int64_t id = addTensor(Object{{"shape", Array{channels}}, {"role", "saved"}});
      out.push_back(id);
      savedState[op].push_back(id);
    }
  }
  if (auto dropout = dyn_cast<DropoutOp>(op); dropout && training) {
    Array shape = *tensor(out[0].getAsInteger().value()).getArray("shape");
    if (dropout.getSharedAcrossTime())
      shape.erase(shape.begin());
    int64_t mask = addTensor(Object{{"shape", std::move(shape)},
                                    {"role", "saved"},
                                    {"dtype", "u8"}});
    out.push_back(mask);
    savedState[op].push_back(mask);
  }
  json["in"] = std::move(in);
  json["out"] = std::move(out);
  if (auto dropout = dyn_cast<DropoutOp>(op);
      dropout && training && dropout.getSharedAcrossTime())
    return op->emitError()
           << "snn-compile does not support training dropout with "
              "shared_across_time yet (no generated kernel draws one mask "
              "for all steps)";
  if (isa<BatchNormOp, BatchNormBwdOp>(op)) {
    std::optional<std::pair<int64_t, int64_t>> sums;
    if (auto bwd = dyn_cast<BatchNormBwdOp>(op)) {
      auto it = fusedBatchNormSums.find(bwd.getForward().getDefiningOp());
      if (it != fusedBatchNormSums.end())
        sums = it->second;
    }
    json = toBatchNormKernelOp(std::move(json), sums);
    if (appliedByNeuron)
      fusedBatchNormScratch[op] = *(*json.getArray("scratch"))[0].getAsInteger();
  } else if (isa<LinearOp, LinearBwdOp, Conv2DOp, Conv2DBwdOp>(op)) {
    if (auto bwd = dyn_cast<Conv2DBwdOp>(op); bwd && bwd.getEventDriven())
      addEventConvWeightGrad(bwd, json);
    json = toLayerOp(std::move(json));
  } else if (isa<AddOp, AccumulateOp, ScaleOp, DropoutBwdOp, AvgPool2DOp,
                 SumPool2DOp, MaxPool2DOp, AvgPool2DBwdOp, SumPool2DBwdOp,
                 MaxPool2DBwdOp, TimeSumOp, TimeBroadcastOp, TransposeOp>(op) ||
           (isa<DropoutOp>(op) && training))
    json = toKernelOp(std::move(json), nextOpIndex(phase));
  emit(phase, std::move(json));
  return success();
}

Object ManifestBuilder::makeLaunch(const OpKernelSpec &spec, Array args) {
  Object json{{"kernel", opKernels.request(spec)},
              {"args", std::move(args)},
              {"grid", spec.getGridSize()},
              {"block", spec.getBlockSize()}};
  if (spec.usesRunValues())
    json["run_values"] = true;
  if (int64_t bytes = spec.getDynamicSharedBytes())
    json["shared_bytes"] = bytes;
  return json;
}

Object ManifestBuilder::makeKernelOp(const OpKernelSpec &spec, Array args,
                                     Array in, Array out, Array of) {
  Object json = makeLaunch(spec, std::move(args));
  json["op"] = "kernel";
  json["in"] = std::move(in);
  json["out"] = std::move(out);
  json["of"] = std::move(of);
  return json;
}

int64_t ManifestBuilder::nextOpIndex(Phase phase) const {
  if (bodyTarget)
    return bodyTarget->size();
  const llvm::json::Array *programs[] = {&infer, &trainForward, &backward,
                                         &update};
  return programs[static_cast<int>(phase)]->size();
}

/// The dims of a json array of integers.
SmallVector<int64_t> mlir::snn::toInts(const Array &array) {
  SmallVector<int64_t> ints;
  for (const llvm::json::Value &d : array)
    ints.push_back(*d.getAsInteger());
  return ints;
}

/// The pooling kernel of a pooling op (or its gradient) of the manifest:
/// `input` and `output` are the forward's (the backward's gx and gy).
static OpKernelSpec getPoolKernelSpec(const Object &op, StringRef kind,
                                      ArrayRef<int64_t> input,
                                      ArrayRef<int64_t> output) {
  PoolMode mode = kind.starts_with("avg")   ? PoolMode::Avg
                  : kind.starts_with("sum") ? PoolMode::Sum
                                            : PoolMode::Max;
  return makePoolKernelSpec(mode, kind.ends_with("_bwd"), input, output,
                            toInts(*op.getArray("kernel")),
                            toInts(*op.getArray("stride")),
                            toInts(*op.getArray("padding")),
                            op.getBoolean("accumulate").value_or(false),
                            op.getBoolean("channels_last").value_or(false));
}

Object ManifestBuilder::toKernelOp(Object op, int64_t index) {
  StringRef kind = *op.getString("op");
  const Array &in = *op.getArray("in");
  const Array &out = *op.getArray("out");
  auto shape = [&](const llvm::json::Value &id) {
    return toInts(*tensor(*id.getAsInteger()).getArray("shape"));
  };
  OpKernelSpec spec;
  if (kind.ends_with("_pool2d")) {
    spec = getPoolKernelSpec(op, kind, shape(in[0]), shape(out[0]));
  } else if (kind.ends_with("_pool2d_bwd")) {
    spec = getPoolKernelSpec(op, kind, shape(out[0]), shape(in[0]));
  } else if (kind == "transpose") {
    spec = makeTransposeKernelSpec(shape(in[0]),
                                   toInts(*op.getArray("permutation")));
  } else if (kind == "time_sum" || kind == "time_broadcast") {
    // [L, ...] <-> [1, ...]: L steps of one step's elements.
    bool sum = kind == "time_sum";
    SmallVector<int64_t> many = shape(sum ? in[0] : out[0]);
    spec.kind = sum ? OpKernelKind::TimeSum : OpKernelKind::TimeBroadcast;
    spec.scale = op.getNumber("scale").value_or(1.0);
    spec.channelGeometry.rows = many.front();
    spec.channelGeometry.channels =
        ShapedType::getNumElements(many) / many.front();
    spec.sizes = {sum ? spec.channelGeometry.channels
                      : spec.channelGeometry.getElements()};
  } else if (std::optional<OpKernelSpec> loss = makeLossKernelSpec(
                 kind, shape(in[0]), /*gradient=*/true)) {
    spec = *loss;
  } else {
    spec.kind = kind == "scale"         ? OpKernelKind::Scale
                : kind == "dropout"     ? OpKernelKind::Dropout
                : kind == "dropout_bwd" ? OpKernelKind::DropoutBwd
                                        : OpKernelKind::Add;
    spec.scale = op.getNumber("scale").value_or(1.0);
    spec.accumulate = op.getBoolean("accumulate").value_or(false);
    if (spec.kind == OpKernelKind::Dropout ||
        spec.kind == OpKernelKind::DropoutBwd)
      spec.p = op.getNumber("p").value_or(0.5);
    if (spec.kind == OpKernelKind::Dropout)
      spec.seedIndex = index;
    spec.sizes = {ShapedType::getNumElements(shape(out[0]))};
  }
  // The tensors in ABI order: the inputs, then the outputs.
  Array args = in;
  for (const llvm::json::Value &id : out)
    args.push_back(id);
  return makeKernelOp(spec, std::move(args), Array(in), Array(out),
                      Array{std::move(op)});
}

/// Whether the pooling op (or pooling backward op) `p` has the tiling
/// windows of `pool`.
template <typename PoolOp>
static bool hasWindows(PoolOp p, const FusedPool &pool) {
  ArrayRef<int64_t> kernel = p.getKernelSize();
  SmallVector<int64_t, 2> stride = p.getEffectiveStride();
  return kernel[0] == pool.kh && kernel[1] == pool.kw &&
         stride[0] == pool.kh && stride[1] == pool.kw &&
         p.getPadding()[0] == 0 && p.getPadding()[1] == 0 &&
         p.getChannelsLast() == pool.channelsLast;
}

/// Whether the gradient `grad` of a fused layer's spikes is the backward of
/// its pooling `pool` alone (what the fused neuron backward replaces).
static bool isPoolBackward(Value grad, const FusedPool &pool) {
  Operation *def = grad.getDefiningOp();
  if (!def || !grad.hasOneUse())
    return false;
  return llvm::TypeSwitch<Operation *, bool>(def)
      .Case<AvgPool2DBwdOp, SumPool2DBwdOp>([&](auto g) {
        return isa<AvgPool2DBwdOp>(def) == pool.average &&
               hasWindows(g, pool);
      })
      .Default([](Operation *) { return false; });
}

/// The pooling that the neuron layer `op` computes (snn.fused_pool), null
/// when it has none; fails, with an error, on an attribute that does not
/// describe the one tiling average or sum pooling of the layer's spikes (in
/// training: whose backward alone gives the gradient of the spikes).
static FailureOr<Operation *> getFusedPoolOp(Operation *op) {
  if (!op->hasAttr(kFusedPoolAttrName))
    return static_cast<Operation *>(nullptr);
  std::optional<FusedPool> pool = getFusedPool(op);
  // The neuron backward reads the saved H, not the spikes.
  Operation *user = nullptr;
  NeuronBwdOp bwd;
  unsigned others = 0;
  for (OpOperand &use : op->getResult(0).getUses()) {
    auto b = dyn_cast<NeuronBwdOp>(use.getOwner());
    if (b && !bwd && &use == &b.getForwardMutable())
      bwd = b;
    else if (!user)
      user = use.getOwner();
    else
      ++others;
  }
  bool matches = false;
  if (pool && user && !others)
    llvm::TypeSwitch<Operation *>(user).Case<AvgPool2DOp, SumPool2DOp>(
        [&](auto p) {
          matches = isa<AvgPool2DOp>(user) == pool->average &&
                    hasWindows(p, *pool);
        });
  if (matches && bwd)
    matches = bwd.getGradFinalState().empty() &&
              isPoolBackward(bwd.getGradOutput(), *pool);
  if (!matches)
    return op->emitError()
           << "'" << kFusedPoolAttrName
           << "' must be {kind = \"avg\" | \"sum\", kernel = array<i64: KH, "
              "KW>[, channels_last]} and name the one tiling pooling that "
              "reads the spikes (in training: whose backward alone gives the "
              "spikes' gradient); let --snn-fuse set it";
  return user;
}

bool ManifestBuilder::isFusedPoolBackward(Operation *op) {
  if (!isa<AvgPool2DBwdOp, SumPool2DBwdOp>(op) ||
      !op->getResult(0).hasOneUse())
    return false;
  auto bwd = dyn_cast<NeuronBwdOp>(*op->getResult(0).getUsers().begin());
  if (!bwd || bwd.getGradOutput() != op->getResult(0))
    return false;
  Operation *layer = bwd.getForward().getDefiningOp();
  return layer && layer->hasAttr(kFusedPoolAttrName);
}

LogicalResult ManifestBuilder::serializeNeuron(Operation *op, Phase phase) {
  auto neuron = cast<NeuronOpInterface>(op);
  StringRef model = getNeuronModelName(op);
  std::string layer = getLayerName(op, model);
  if (!layerNames.insert(layer).second && phase == Phase::Infer)
    return op->emitError() << "two neuron layers are named '" << layer
                           << "'; make their snn.name attributes unique";
  NeuronRecord record;
  record.op = op;
  serializeNeuronAttributes(op, record.attrs, record.paramInputs,
                            [&](StringRef param, DenseFPElementsAttr values) {
                              return addConstant(layer + "." + param.str(),
                                                 values);
                            });
  // A layer that applies the batch norm in front of it (--snn-fuse) reads
  // the batch norm's input and what its affine needs.
  FailureOr<Operation *> fusedBatchNorm = getFusedBatchNormOp(op);
  if (failed(fusedBatchNorm))
    return failure();
  Object bnJson;
  Array in;
  FailureOr<int64_t> x =
      lookup(op, *fusedBatchNorm ? (*fusedBatchNorm)->getOperand(0)
                                 : neuron.getInput());
  if (failed(x))
    return failure();
  in.push_back(*x);
  if (*fusedBatchNorm &&
      failed(addFusedBatchNormInputs(op, *fusedBatchNorm, phase, in, bnJson)))
    return failure();
  if (*fusedBatchNorm && phase == Phase::TrainForward &&
      getFusedBatchNorm(op)->backward) {
    record.batchNormBackward = *fusedBatchNorm;
    record.batchNormInput = *x;
  }
  if (auto plif = dyn_cast<PLIFOp>(op)) {
    FailureOr<int64_t> w = lookup(op, plif.getW());
    if (failed(w))
      return failure();
    record.plifWeight = *w;
    record.attrs["plif_w"] = Object{{"tensor", *w}};
    in.push_back(*w);
  }
  for (int64_t id : record.paramInputs)
    in.push_back(id);
  // A time split's initial state comes last (its final state too, in out).
  OperandRange initState = getInitState(op);
  for (Value state : initState) {
    FailureOr<int64_t> id = lookup(op, state);
    if (failed(id))
      return failure();
    in.push_back(*id);
  }

  // A layer fused with its pooling (--snn-fuse) writes the pooled spikes:
  // its output is the pooling's result, and the pooling writes nothing.
  Value spikes = op->getResult(0);
  FailureOr<Operation *> fusedPool = getFusedPoolOp(op);
  if (failed(fusedPool))
    return failure();
  bool saveH = phase == Phase::TrainForward;
  // What the backward reads is per neuron: the shape of the spikes, which
  // a fused layer does not write.
  FailureOr<SmallVector<int64_t>> neuronShape =
      resolveShape(op, spikes.getType());
  if (failed(neuronShape))
    return failure();
  if (*fusedPool) {
    spikes = (*fusedPool)->getResult(0);
    std::optional<FusedPool> pool = getFusedPool(op);
    Object poolJson{{"kind", pool->average ? "avg" : "sum"},
                    {"kernel", Array{pool->kh, pool->kw}}};
    if (pool->channelsLast)
      poolJson["channels_last"] = true;
    record.attrs["pool"] = std::move(poolJson);
  }
  bool rowBits = phase == Phase::TrainForward && !*fusedPool &&
                 writesSpikeRowBits(op, rowBitsOptions);
  FailureOr<int64_t> s =
      rowBits ? addRowBitsTensor(op, spikes, layer)
              : addValueTensor(op, spikes, "activation",
                               phase == Phase::Infer ? layer : "");
  if (failed(s))
    return failure();
  Array out{*s};
  int64_t chunk = getRecomputeChunk(op, recomputeChunk);
  if (saveH && chunk > 0 && isa<LIFOp, IFOp>(op)) {
    // The backward recomputes H from the input: only the membrane before
    // steps C, 2C, ... is saved (at least one row, so never empty).
    Array shape = toArray(*neuronShape);
    int64_t steps = *shape[0].getAsInteger();
    int64_t chunks = (steps + chunk - 1) / chunk;
    shape[0] = std::max<int64_t>(chunks - 1, 1);
    record.savedH = addTensor(Object{{"name", layer + ".ckpt"},
                                     {"shape", std::move(shape)},
                                     {"role", "saved"}});
    record.input = *x;
    record.attrs["recompute_chunk"] = chunk;
    record.recomputedBatchNorm = *fusedBatchNorm;
    out.push_back(record.savedH);
  } else if (saveH) {
    Array shape = toArray(*neuronShape);
    Object h{{"name", layer + ".h"}, {"shape", Array(shape)}, {"role", "saved"}};
    if (savedHBf16)
      h["dtype"] = "bf16";
    record.savedH = addTensor(std::move(h));
    out.push_back(record.savedH);
    if (isa<CubaLIFOp>(op)) {
      record.savedI = addTensor(
          Object{{"name", layer + ".i"}, {"shape", Array(shape)}, {"role", "saved"}});
      out.push_back(record.savedI);
    }
  }
  for (Value state : getFinalState(op)) {
    FailureOr<int64_t> id = addValueTensor(op, state, "activation");
    if (failed(id))
      return failure();
    out.push_back(*id);
  }
  // The training forward also writes the time mean of its output
  // (--snn-fuse): the snn.time_sum's result, which writes nothing.
  Object meanJson;
  if (std::optional<double> scale =
          getFusedTimeScale(op, kFusedTimeMeanAttrName)) {
    TimeSumOp sum = getFusedTimeSum(op);
    if (!sum || !saveH)
      return op->emitError()
             << "'" << kFusedTimeMeanAttrName
             << "' needs the layer in @train_step and the snn.time_sum of "
                "its output marked '"
             << kTimeSumInNeuronAttrName << "'; rerun --snn-fuse";
    FailureOr<int64_t> id = addValueTensor(op, sum.getResult(), "activation");
    if (failed(id))
      return failure();
    out.push_back(*id);
    meanJson["time_mean"] = Object{{"tensor", *id}, {"scale", *scale}};
  }
  forwardActivations.insert(*s);
  // The mean of an average pooling's output is the layer's spike rate; a
  // sum pooling's is not.
  bool ratesSpikes = !*fusedPool || isa<AvgPool2DOp>(*fusedPool);
  if (phase == Phase::Infer && model != "li" && ratesSpikes)
    spikeLayers.push_back(Object{{"name", layer}, {"tensor", *s}});

  // The layer's kernels count its spikes for the event-driven linear that
  // reads them (--snn-fuse): no spike_density op re-reads them.
  Object countJson;
  if (op->hasAttr(kFusedSpikeCountAttrName)) {
    SmallVector<LinearOp> readers = getEventLinearReaders(op->getResult(0));
    if (readers.size() != 1)
      return op->emitError()
             << "'" << kFusedSpikeCountAttrName
             << "' needs one event-driven snn.linear reading the spikes; "
                "run --snn-fuse after --snn-sparsify";
    if (failed(addFusedCount(op, readers.front(), phase, *s, in, out,
                             countJson)))
      return failure();
  }
  Object json{{"op", "neuron"}, {"in", std::move(in)}, {"out", std::move(out)}};
  for (const auto &kv : countJson)
    json[kv.first] = kv.second;
  for (const auto &kv : meanJson)
    json[kv.first] = kv.second;
  for (const auto &kv : record.attrs)
    json[kv.first] = kv.second;
  for (const auto &kv : bnJson)
    json[kv.first] = kv.second;
  json["save_h"] = saveH;
  if (rowBits)
    json["spike_bits"] = "rows";
  if (!initState.empty())
    json["chained_states"] = static_cast<int64_t>(initState.size());
  // snn-run --record finds the layer by this name.
  if (phase == Phase::Infer)
    json["layer"] = layer;
  auto kernel = kernels.find(op);
  if (kernel != kernels.end()) {
    Object ref{{"fwd", saveH ? kernel->second.fwd : kernel->second.fwdInfer},
               {"block", kernel->second.block},
               {"grid", kernel->second.grid}};
    if (saveH)
      ref["h_dtype"] = kernel->second.hDType;
    else if (!kernel->second.fwdRecord.empty())
      ref["fwd_record"] = kernel->second.fwdRecord;
    json["kernel"] = std::move(ref);
  }
  emit(phase, std::move(json));
  if (phase == Phase::TrainForward &&
      (savesSpikesAsBits(op) || feedsEventWeightGrad(op)))
    emitPackSpikes(*s, savesSpikesAsBits(op));
  if (phase == Phase::TrainForward && model != "li") {
    auto bits = packedSpikes.find(*s);
    trainSpikes[layer] = {*s, rowBits                      ? *s
                              : bits == packedSpikes.end() ? -1
                                                           : bits->second};
  }
  neurons[op] = std::move(record);
  return success();
}

void ManifestBuilder::addEvaluateProgram() {
  if (!outputId)
    return;
  SmallVector<int64_t> shape = toInts(*tensor(*outputId).getArray("shape"));
  // Without a loss op the kernel counts the argmax hits of the time mean.
  StringRef kind = lossKind.empty() ? StringRef("loss_ce_rate") : lossKind;
  std::optional<OpKernelSpec> spec =
      makeLossKernelSpec(kind, shape, /*gradient=*/false);
  if (!spec)
    return;
  auto scalar = [&](StringRef name) {
    return addTensor(Object{{"name", name}, {"shape", Array{}},
                            {"role", "metric"}});
  };
  int64_t labels = labelsId ? *labelsId
                            : addTensor(Object{{"name", "eval.labels"},
                                               {"shape", Array{shape[1]}},
                                               {"role", "label"},
                                               {"dtype", "i32"}});
  int64_t loss = lossId ? *lossId : scalar("eval.loss");
  int64_t correct = correctId ? *correctId : scalar("eval.correct");
  Array in{*outputId, labels}, out{loss, correct};
  Array args{*outputId, labels, loss, correct};
  Object of{{"op", kind}, {"in", Array(in)}, {"out", Array(out)}};
  evaluate.push_back(makeKernelOp(*spec, std::move(args), std::move(in),
                                  std::move(out), Array{std::move(of)}));
  evaluateIds = Object{{"labels", labels}, {"loss", loss}, {"correct", correct}};
}

Object ManifestBuilder::finish(
    const std::map<std::string, std::string> &kernelFiles) {
  // The spike tensors of a rank hold its steps only; the host's spike
  // rates would be the rank's, so a split lists no layers.
  if (splitSteps)
    spikeLayers = Array();
  addTrainSpikeTensors(); // reads the tensors' roles: before they move
  Array tensorArray;
  for (Object &t : tensors)
    tensorArray.push_back(std::move(t));
  Object programs{{"infer", std::move(infer)}};
  if (!evaluate.empty())
    programs["evaluate"] = std::move(evaluate);
  if (!trainForward.empty() || !backward.empty()) {
    programs["train_forward"] = std::move(trainForward);
    programs["backward"] = std::move(backward);
    programs["update"] = std::move(update);
  }
  Object manifest{{"format", "snn-module"},
                  {"version", 1},
                  {"time_steps", timeSteps},
                  {"batch", batchSize},
                  {"tensors", std::move(tensorArray)},
                  {"spike_layers", std::move(spikeLayers)},
                  {"programs", std::move(programs)}};
  if (splitSteps)
    manifest["local_steps"] = localSteps;
  if (!eventLayers.empty())
    manifest["event_layers"] = std::move(eventLayers);
  if (inputId)
    manifest["input"] = *inputId;
  if (outputId)
    manifest["output"] = *outputId;
  if (labelsId)
    manifest["labels"] = *labelsId;
  if (lossId)
    manifest["loss"] = *lossId;
  if (correctId)
    manifest["correct"] = *correctId;
  if (evaluateIds)
    manifest["evaluate"] = std::move(*evaluateIds);
  if (optimizer)
    manifest["optimizer"] = std::move(*optimizer);
  if (!kernelFiles.empty()) {
    Object files;
    for (const auto &[key, file] : kernelFiles)
      files[key] = file;
    manifest["kernels"] = std::move(files);
  }
  return manifest;
}
