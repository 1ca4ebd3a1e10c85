//===- TrainPrograms.cpp - train_forward, backward, update ----------------===//
//
// @train_step as three programs: the ops before the loss op (train_forward,
// neurons save H), the loss and gradient ops (backward), the optimizer ops
// (update, in place). Gradient ops other than the neuron BPTT are written
// generically, so the autodiff pass and the runtime agree through
// docs/artifact-format.md alone.
//
//===----------------------------------------------------------------------===//

#include "ManifestBuilder.h"
#include "RowSpikeBits.h"

#include "snn/Dialect/SNN/IR/FusedCount.h"
#include "snn/Dialect/SNN/IR/FusedLinearGrad.h"
#include "snn/Dialect/SNN/IR/FusedTimeMean.h"

using namespace mlir;
using namespace mlir::snn;
using llvm::json::Array;
using llvm::json::Object;

/// Optimizer ops update their first operand (the parameter) and their state
/// operands in place.
static bool isOptimizerOp(Operation *op) {
  return op->getName().getDialectNamespace() == "snn" &&
         llvm::is_contained({"sgd", "adam", "adamw"}, getOpKind(op));
}

static bool isLossOp(Operation *op) {
  return op->getName().getDialectNamespace() == "snn" &&
         getOpKind(op).starts_with("loss_");
}

bool mlir::snn::isNeuronBackwardOp(Operation *op) {
  StringRef kind = getOpKind(op);
  return op->getName().getDialectNamespace() == "snn" &&
         llvm::is_contained({"neuron_bwd", "lif_bwd", "if_bwd", "plif_bwd",
                             "li_bwd", "cuba_lif_bwd"},
                            kind);
}

LogicalResult ManifestBuilder::addTrainPrograms(func::FuncOp trainStep) {
  if (failed(beginFunction(trainStep, /*training=*/true)))
    return failure();
  if (!labelsId)
    return trainStep.emitError()
           << "@train_step needs the labels [B] (an integer tensor) as its "
              "second argument";
  Phase phase = Phase::TrainForward;
  for (Operation &op : trainStep.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      continue;
    if (isLossOp(&op)) {
      if (phase != Phase::TrainForward)
        return op.emitError() << "@train_step has a second loss op; "
                                 "snn-compile supports one loss";
      phase = Phase::Backward;
      if (failed(serializeLoss(&op)))
        return failure();
      continue;
    }
    if (isOptimizerOp(&op)) {
      if (phase == Phase::TrainForward)
        return op.emitError() << "optimizer op before the loss op in "
                                 "@train_step: update after the backward pass";
      phase = Phase::Update;
      if (failed(serializeOptimizer(&op)))
        return failure();
      continue;
    }
    // A time split sums each weight gradient over the ranks right before
    // its optimizer op: at the end of the backward program, so that the
    // gradients it leaves are the whole sequence's.
    if (isa<AllReduceSumOp>(op) && phase == Phase::Update) {
      if (failed(serializeOp(&op, Phase::Backward)))
        return failure();
      continue;
    }
    if (phase == Phase::Update)
      return op.emitError() << "'" << op.getName()
                            << "' after an optimizer op in @train_step: "
                               "the update program holds optimizer ops only";
    if (failed(serializeOp(&op, phase)))
      return failure();
  }
  if (phase == Phase::TrainForward)
    return trainStep.emitError()
           << "@train_step has no loss op (snn.loss_*); run --snn-autodiff "
              "to produce the training step";
  flushOptimizerOps();
  return success();
}

void ManifestBuilder::flushOptimizerOps() {
  // Groups in the order of their first op; parameters in op order.
  std::vector<OpKernelSpec> specs;
  std::vector<Array> args, ins, outs, ofs;
  llvm::StringMap<size_t> groupOf;
  for (auto &[op, spec] : pendingUpdates) {
    OpKernelSpec hyper = spec;
    hyper.sizes.clear();
    auto [it, inserted] = groupOf.try_emplace(hyper.getKey(), specs.size());
    if (inserted) {
      specs.push_back(hyper);
      args.emplace_back();
      ins.emplace_back();
      outs.emplace_back();
      ofs.emplace_back();
    }
    size_t g = it->second;
    specs[g].sizes.push_back(spec.sizes.front());
    for (const llvm::json::Value &id : *op.getArray("in")) {
      args[g].push_back(id);
      ins[g].push_back(id);
    }
    for (const llvm::json::Value &id : *op.getArray("out"))
      outs[g].push_back(id);
    ofs[g].push_back(std::move(op));
  }
  pendingUpdates.clear();
  for (size_t g = 0; g < specs.size(); ++g)
    emit(Phase::Update,
         makeKernelOp(specs[g], std::move(args[g]), std::move(ins[g]),
                      std::move(outs[g]), std::move(ofs[g])));
}

LogicalResult ManifestBuilder::serializeNeuronBackward(Operation *op) {
  // The forward layer is the one whose result (the spikes) is an operand;
  // the other operand is the gradient of those spikes.
  NeuronRecord *record = nullptr;
  Value gs;
  // A time split's gradient of the final state is not the spikes'.
  auto chained = dyn_cast<NeuronBwdOp>(op);
  OperandRange gradFinal =
      chained ? chained.getGradFinalState()
              : OperandRange(op->operand_end(), op->operand_end());
  for (Value operand : op->getOperands().drop_back(gradFinal.size())) {
    Operation *def = operand.getDefiningOp();
    auto it = def ? neurons.find(def) : neurons.end();
    if (!record && it != neurons.end())
      record = &it->second;
    else if (!gs)
      gs = operand;
  }
  if (!record || !gs)
    return op->emitError()
           << "'" << op->getName()
           << "' needs the gradient of the spikes and the forward neuron "
              "layer's output as operands";
  // A layer fused with its pooling reads the pooled gradient: the
  // pooling's backward (validated with the forward) writes nothing.
  if (Operation *def = gs.getDefiningOp(); def && isFusedPoolBackward(def))
    gs = def->getOperand(0);
  // A layer that forms gx of the thin linear after it (--snn-fuse) reads
  // that linear's gy, and its weight after the parameters (the kernel ABI).
  LinearBwdOp linearGrad = getFusedLinearGradSource(op);
  int64_t linearOutputs = getFusedLinearGradOutputs(record->op);
  if (static_cast<bool>(linearGrad) != (linearOutputs > 0))
    return op->emitError()
           << "'" << kFusedLinearGradAttrName << "' on the layer and '"
           << kGxInNeuronBwdAttrName
           << "' on the snn.linear_bwd whose input gradient its backward "
              "reads go together; rerun --snn-fuse";
  if (linearGrad)
    gs = linearGrad.getGradOutput();
  // A layer that reads the gradient of its time mean (--snn-fuse) reads
  // the broadcast's input, [1, ...].
  TimeBroadcastOp broadcast;
  if (auto bwd = dyn_cast<NeuronBwdOp>(op))
    broadcast = getFusedTimeBroadcast(bwd);
  std::optional<double> broadcastScale =
      getFusedTimeScale(record->op, kFusedTimeBroadcastAttrName);
  if (static_cast<bool>(broadcast) != broadcastScale.has_value())
    return op->emitError()
           << "'" << kFusedTimeBroadcastAttrName << "' on the layer and '"
           << kTimeBroadcastInNeuronAttrName
           << "' on the snn.time_broadcast whose output its backward reads "
              "go together; rerun --snn-fuse";
  if (broadcast)
    gs = broadcast.getInput();
  FailureOr<int64_t> gsId = lookup(op, gs);
  if (failed(gsId))
    return failure();
  // With recompute: the layer's input and its membrane checkpoints.
  Array in{*gsId};
  if (record->input >= 0)
    in.push_back(record->input);
  in.push_back(record->savedH);
  if (record->savedI >= 0)
    in.push_back(record->savedI);
  if (record->plifWeight)
    in.push_back(*record->plifWeight);
  // The batch norm backward's sums: their inputs before the parameters (the
  // kernel ABI), their scratch after gx.
  Array sumsOut;
  Object sumsJson;
  if (failed(addRecomputedBatchNormInputs(*record, in, sumsJson)))
    return failure();
  if (record->batchNormBackward &&
      failed(addBatchNormBackwardSums(op, *record, in, sumsOut, sumsJson)))
    return failure();
  for (int64_t id : record->paramInputs)
    in.push_back(id);
  for (Value state : gradFinal) {
    FailureOr<int64_t> id = lookup(op, state);
    if (failed(id))
      return failure();
    in.push_back(*id);
  }
  if (linearGrad) {
    FailureOr<int64_t> weight = lookup(op, linearGrad.getWeight());
    if (failed(weight))
      return failure();
    in.push_back(*weight);
  }
  FailureOr<Array> out = addResultTensors(op, "grad");
  if (failed(out))
    return failure();
  for (llvm::json::Value &id : sumsOut)
    out->push_back(std::move(id));
  Object json{{"op", "neuron_bwd"}};
  // The backward kernel counts gx for the event-driven linear backward
  // that reads it (--snn-fuse).
  if (record->op->hasAttr(kFusedGradCountAttrName)) {
    SmallVector<LinearBwdOp> readers =
        getEventLinearBwdReaders(op->getResult(0));
    if (readers.size() != 1 || !isa<NeuronBwdOp>(op))
      return op->emitError()
             << "'" << kFusedGradCountAttrName
             << "' on its layer needs one event-driven snn.linear_bwd "
                "reading the input gradient; run --snn-fuse after "
                "--snn-sparsify";
    int64_t gx = *(*out)[0].getAsInteger();
    if (failed(addFusedCount(op, readers.front(), Phase::Backward, gx, in, *out,
                             json)))
      return failure();
    // The reader's compact_columns reads gx's occupancy as row bits, which
    // the kernel writes too (an output after the decision; in the kernel's
    // arguments, before the limit).
    if (writesGradRowBits(record->op, rowBitsOptions)) {
      int64_t bits =
          addTensor(Object{{"name", tensorName(gx) + ".bits"},
                           {"shape", Array{getValueElements(gx) / 32}},
                           {"dtype", "u32"},
                           {"role", "grad"}});
      out->push_back(bits);
      (*json.getObject("spike_count"))["bits"] = bits;
      gradRowBits[gx] = bits;
    }
  }
  for (const auto &kv : record->attrs)
    json[kv.first] = kv.second;
  for (const auto &kv : sumsJson)
    json[kv.first] = kv.second;
  if (linearGrad)
    json["linear_grad"] = Object{{"outputs", linearOutputs}};
  if (broadcastScale)
    json["grad_broadcast"] = Object{{"scale", *broadcastScale}};
  json["in"] = std::move(in);
  json["out"] = std::move(*out);
  if (!gradFinal.empty())
    json["chained_states"] = static_cast<int64_t>(gradFinal.size());
  auto kernel = kernels.find(record->op);
  if (kernel != kernels.end())
    json["kernel"] = Object{{"bwd", kernel->second.bwd},
                            {"block", kernel->second.block},
                            {"grid", kernel->second.bwdGrid
                                         ? kernel->second.bwdGrid
                                         : kernel->second.grid},
                            {"h_dtype", kernel->second.hDType}};
  emit(Phase::Backward, std::move(json));
  return success();
}

LogicalResult ManifestBuilder::serializeLoss(Operation *op) {
  if (op->getNumResults() == 0)
    return op->emitError() << "loss op without results";
  if (failed(serializeGeneric(op, Phase::Backward)))
    return failure();
  const Array &out = *backward.back().getAsObject()->getArray("out");
  // loss[], then the output gradient and the number of correct samples[].
  for (auto [index, value] : llvm::enumerate(out)) {
    int64_t id = *value.getAsInteger();
    bool scalar = tensor(id).getArray("shape")->empty();
    if (index == 0) {
      tensor(id)["role"] = "loss";
      tensor(id)["name"] = "loss";
      lossId = id;
    } else if (scalar && !correctId) {
      tensor(id)["role"] = "metric";
      tensor(id)["name"] = "correct";
      correctId = id;
    } else {
      tensor(id)["name"] = "grad:output";
    }
  }
  // The loss runs as its generated kernel.
  lossKind = getOpKind(op).str();
  llvm::json::Value last = backward.back();
  backward.back() = toKernelOp(std::move(*last.getAsObject()),
                               nextOpIndex(Phase::Backward) - 1);
  return success();
}

LogicalResult ManifestBuilder::serializeOptimizer(Operation *op) {
  if (op->getNumOperands() < 2 ||
      op->getNumResults() + 1 != op->getNumOperands())
    return op->emitError()
           << "optimizer op '" << op->getName()
           << "' must take (param, grad, state...) and return (param, "
              "state...)";
  Array in, out;
  SmallVector<int64_t> operandIds;
  for (Value operand : op->getOperands()) {
    FailureOr<int64_t> id = lookup(op, operand);
    if (failed(id))
      return failure();
    operandIds.push_back(*id);
    in.push_back(*id);
  }
  auto param = paramOfValue.find(op->getOperand(0));
  if (param == paramOfValue.end())
    return op->emitError() << "the first operand of '" << op->getName()
                           << "' must be an snn.param (the updated weight)";
  std::string paramName = tensor(param->second).getString("name")->str();
  Object &grad = tensor(operandIds[1]);
  grad["grad_of"] = param->second;
  grad["name"] = "grad:" + paramName;
  for (unsigned i = 2; i < op->getNumOperands(); ++i) {
    if (!paramOfValue.count(op->getOperand(i)))
      return op->emitError() << "optimizer state operand #" << i << " of '"
                             << op->getName()
                             << "' must be an snn.param (persistent state)";
    Object &state = tensor(operandIds[i]);
    state["role"] = "optimizer_state";
    state["init"] = Object{{"kind", "zeros"}};
    state.erase("trainable");
  }
  // In place: the results are the parameter and the state tensors.
  out.push_back(operandIds[0]);
  ids[op->getResult(0)] = operandIds[0];
  for (unsigned i = 2; i < op->getNumOperands(); ++i) {
    out.push_back(operandIds[i]);
    ids[op->getResult(i - 1)] = operandIds[i];
  }
  Object json{{"op", getOpKind(op)}, {"in", std::move(in)}, {"out", std::move(out)}};
  Object config{{"kind", getOpKind(op)}};
  for (NamedAttribute attr : op->getAttrs()) {
    FailureOr<llvm::json::Value> value =
        convertAttribute(op, attr.getName(), attr.getValue());
    if (failed(value))
      return failure();
    json[attr.getName().getValue()] = *value;
    config[attr.getName().getValue()] = std::move(*value);
  }
  if (!optimizer)
    optimizer = std::move(config);
  OpKernelSpec spec;
  int64_t n = 1;
  for (const llvm::json::Value &d : *tensor(operandIds[0]).getArray("shape"))
    n *= *d.getAsInteger();
  spec.sizes = {n};
  if (auto sgd = dyn_cast<SGDOp>(op)) {
    spec.kind = OpKernelKind::SGD;
    spec.momentum = sgd.getMomentum().convertToDouble();
    spec.dampening = sgd.getDampening().convertToDouble();
    spec.weightDecay = sgd.getWeightDecay().convertToDouble();
    spec.nesterov = sgd.getNesterov();
    if ((spec.momentum != 0.0) != (op->getNumOperands() == 3))
      return op->emitError() << "snn.sgd needs a momentum buffer exactly "
                                "when its momentum is not 0";
  } else if (auto adam = dyn_cast<AdamOp>(op)) {
    spec.kind = OpKernelKind::Adam;
    spec.beta1 = adam.getBeta1().convertToDouble();
    spec.beta2 = adam.getBeta2().convertToDouble();
    spec.eps = adam.getEps().convertToDouble();
    spec.weightDecay = adam.getWeightDecay().convertToDouble();
    spec.decoupled = adam.getDecoupled();
  } else {
    return op->emitError() << "snn-compile has no kernel for the optimizer '"
                           << op->getName() << "'";
  }
  // One kernel updates all parameters of equal hyperparameters: the ops are
  // written together after the last one (flushOptimizerOps).
  pendingUpdates.emplace_back(std::move(json), spec);
  return success();
}
