//===- LoopPrograms.cpp - recurrent time loops in the infer program -------===//
//
// A time loop that --snn-temporal-fusion kept (its state feeds something
// other than a neuron membrane: recurrent weights, feedback from a later
// layer, delays) becomes one `time_loop` op whose `body` is the step's ops
// (docs/artifact-format.md). Step neuron ops become `neuron_step` ops that
// take and return their state; the runtime runs the body T times on views
// of the inputs' time slices. Loop-invariant work was hoisted by the fusion
// pass, so the body holds only what depends on the previous step.
//
//===----------------------------------------------------------------------===//

#include "ManifestBuilder.h"
#include "NeuronSerialization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::snn;
using llvm::json::Array;
using llvm::json::Object;

LogicalResult ManifestBuilder::serializeConstant(arith::ConstantOp op) {
  auto values = dyn_cast<DenseFPElementsAttr>(op.getValue());
  if (!values)
    return op.emitError()
           << "snn-compile supports float tensor constants (initial loop "
              "state), not "
           << op.getValue();
  if (!values.isSplat()) {
    ids[op.getResult()] = addConstant("constant", values);
    return success();
  }
  // A splat (usually the zero initial state) is an initializer, not a file.
  double value = (*values.getValues<APFloat>().begin()).convertToDouble();
  int64_t id = addTensor(
      Object{{"shape", toArray(values.getType().getShape())},
             {"role", "constant"},
             {"init", Object{{"kind", "constant"}, {"value", value}}}});
  ids[op.getResult()] = id;
  return success();
}

LogicalResult ManifestBuilder::serializeTimeLoop(TimeLoopOp loop,
                                                 Phase phase) {
  if (phase != Phase::Infer)
    return loop.emitError()
           << "snn.time_loop in a training program: --snn-autodiff unrolls "
              "recurrent loops in @train_step; run it instead of writing the "
              "loop there";
  Object json{{"op", "time_loop"}, {"steps", loop.getNumTimeSteps()}};
  Array in;
  for (Value operand : loop->getOperands()) {
    FailureOr<int64_t> id = lookup(loop, operand);
    if (failed(id))
      return failure();
    in.push_back(*id);
  }
  unsigned numInputs = loop.getInputs().size();
  json["num_inputs"] = numInputs;

  Block &body = loop.getBodyBlock();
  Array args;
  for (BlockArgument arg : body.getArguments()) {
    bool isState = arg.getArgNumber() >= numInputs;
    FailureOr<int64_t> id =
        addValueTensor(loop, arg, isState ? "loop_state" : "activation");
    if (failed(id))
      return failure();
    args.push_back(*id);
  }

  // The body's ops go into the loop's own op list.
  Array bodyOps;
  Array *outer = bodyTarget;
  bodyTarget = &bodyOps;
  auto restore = llvm::make_scope_exit([&] { bodyTarget = outer; });
  for (Operation &op : body.without_terminator()) {
    // The sum feeding a step neuron (feed-forward + recurrent current) is
    // computed by the neuron_step itself: one kernel less per step.
    if (auto add = dyn_cast<AddOp>(op);
        add && add->hasOneUse() &&
        getFoldedStepAddend(*add->user_begin()) == add)
      continue;
    if (failed(serializeOp(&op, phase)))
      return failure();
  }

  // Yielded values are copied out after each step. A state yielded straight
  // from a block argument (a delay line, a swap) is first copied into a
  // tensor of its own, so that the copies cannot overwrite each other.
  YieldOp yield = loop.getYield();
  unsigned numOutputs = loop.getNumStepOutputs();
  Array yields;
  for (auto [index, value] : llvm::enumerate(yield.getValues())) {
    FailureOr<int64_t> id = lookup(yield, value);
    if (failed(id))
      return failure();
    if (index >= numOutputs && isa<BlockArgument>(value)) {
      FailureOr<SmallVector<int64_t>> shape =
          resolveShape(yield, value.getType());
      if (failed(shape))
        return failure();
      int64_t copy =
          addTensor(Object{{"shape", toArray(*shape)}, {"role", "activation"}});
      bodyOps.push_back(toKernelOp(Object{{"op", "scale"},
                                          {"scale", 1.0},
                                          {"in", Array{*id}},
                                          {"out", Array{copy}}}));
      id = copy;
    }
    yields.push_back(*id);
  }
  restore.release();
  bodyTarget = outer; // the results below belong to the enclosing program

  FailureOr<Array> results = addResultTensors(loop, "activation");
  if (failed(results))
    return failure();
  Array out = std::move(*results);
  // A step output that is a spiking layer's spikes gives that layer's rate.
  for (unsigned k = 0; k < numOutputs; ++k) {
    Operation *def = yield.getValues()[k].getDefiningOp();
    auto name = def ? stepLayerNames.find(def) : stepLayerNames.end();
    if (name != stepLayerNames.end() && !isa<LIStepOp>(def) &&
        yield.getValues()[k] == def->getResult(0))
      spikeLayers.push_back(Object{{"name", name->second}, {"tensor", out[k]}});
  }
  json["args"] = std::move(args);
  json["yields"] = std::move(yields);
  json["body"] = std::move(bodyOps);
  json["in"] = std::move(in);
  json["out"] = std::move(out);
  emit(phase, std::move(json));
  return success();
}

LogicalResult ManifestBuilder::serializeNeuronStep(Operation *op,
                                                   Phase phase) {
  StringRef model = getNeuronModelName(op);
  std::string layer = getLayerName(op, model);
  stepLayerNames[op] = layer;
  // The model's attributes, shared with the step's backward.
  NeuronRecord record;
  record.op = op;
  serializeNeuronAttributes(op, record.attrs, record.paramInputs,
                            [&](StringRef param, DenseFPElementsAttr values) {
                              return addConstant(layer + "." + param.str(),
                                                 values);
                            });
  Object json(record.attrs);
  json["op"] = "neuron_step";
  // Operands: the input, the state(s), then plif's weight; results: the
  // output, then the next state(s) (li: the membrane is both).
  Array in;
  std::optional<int64_t> addend;
  for (Value operand : op->getOperands()) {
    // An input `snn.add` left out of the body (serializeTimeLoop): the
    // neuron reads both of its operands.
    auto add = operand.getDefiningOp<AddOp>();
    if (in.empty() && add && !ids.count(operand)) {
      FailureOr<int64_t> lhs = lookup(add, add.getLhs());
      FailureOr<int64_t> rhs = lookup(add, add.getRhs());
      if (failed(lhs) || failed(rhs))
        return failure();
      in.push_back(*lhs);
      addend = *rhs;
      continue;
    }
    FailureOr<int64_t> id = lookup(op, operand);
    if (failed(id))
      return failure();
    in.push_back(*id);
  }
  if (isa<PLIFStepOp>(op))
    json["plif_w"] = Object{{"tensor", *in.back().getAsInteger()}};
  if (addend) {
    json["addend"] = Object{{"tensor", *addend}};
    in.push_back(*addend);
  }
  for (int64_t id : record.paramInputs)
    in.push_back(id);
  FailureOr<Array> results = addResultTensors(op, "activation");
  if (failed(results))
    return failure();
  Array out = std::move(*results);
  // In training (an unrolled recurrent loop) the step also saves its H for
  // neuron_step_bwd.
  bool saveH = phase == Phase::TrainForward;
  if (saveH)
    for (const llvm::json::Value &id : out)
      forwardActivations.insert(*id.getAsInteger());
  if (saveH) {
    Array shape = *tensor(*out.front().getAsInteger()).getArray("shape");
    // One copy of the step per time step: "<layer>.h@t".
    unsigned step = savedStepH[layer]++;
    record.savedH = addTensor(Object{{"name", layer + ".h@" + std::to_string(step)},
                                     {"shape", std::move(shape)},
                                     {"role", "saved"}});
    out.push_back(record.savedH);
  }
  json["save_h"] = saveH;
  // Both forms: snn-run --record turns save_h on in the infer program.
  if (auto kernel = kernels.find(op); kernel != kernels.end())
    json["kernel"] = Object{{"fwd", kernel->second.fwdInfer},
                            {"fwd_h", kernel->second.fwd},
                            {"block", kernel->second.block},
                            {"grid", kernel->second.grid}};
  if (phase == Phase::Infer)
    json["layer"] = layer; // snn-run --record finds the layer by this name
  json["in"] = std::move(in);
  json["out"] = std::move(out);
  emit(phase, std::move(json));
  neurons[op] = std::move(record);
  return success();
}

LogicalResult ManifestBuilder::serializeNeuronStepBackward(Operation *op) {
  // Operands: the gradients of the step's results (spikes, then the next
  // state: cuba's current and membrane), then the forward step's spikes;
  // plif: then the membrane before the step and the weight.
  auto plif = dyn_cast<PLIFStepBwdOp>(op);
  ValueRange grads = plif ? op->getOperands().take_front(2)
                          : op->getOperands().drop_back();
  Value forward = plif ? plif.getForward() : op->getOperands().back();
  auto it = neurons.find(forward.getDefiningOp());
  if (it == neurons.end() || it->second.savedH < 0)
    return op->emitError() << "the forward step of '" << op->getName()
                           << "' did not run in the training forward program";
  NeuronRecord &record = it->second;
  Array in;
  for (Value grad : grads) {
    FailureOr<int64_t> id = lookup(op, grad);
    if (failed(id))
      return failure();
    in.push_back(*id);
  }
  in.push_back(record.savedH);
  Object json(record.attrs);
  if (plif) {
    FailureOr<int64_t> state = lookup(op, plif.getState());
    FailureOr<int64_t> w = lookup(op, plif.getW());
    if (failed(state) || failed(w))
      return failure();
    in.push_back(*state);
    in.push_back(*w);
    json["plif_w"] = Object{{"tensor", *w}};
  }
  for (int64_t id : record.paramInputs)
    in.push_back(id);
  FailureOr<Array> out = addResultTensors(op, "grad");
  if (failed(out))
    return failure();
  json["op"] = "neuron_step_bwd";
  if (auto kernel = kernels.find(record.op); kernel != kernels.end())
    json["kernel"] = Object{{"bwd", kernel->second.bwd},
                            {"block", kernel->second.block},
                            {"grid", kernel->second.grid}};
  json["in"] = std::move(in);
  json["out"] = std::move(*out);
  emit(Phase::Backward, std::move(json));
  return success();
}
