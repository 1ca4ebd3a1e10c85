//===- EventLinear.cpp - manifest ops of an event-driven linear layer -----===//
//
// docs/artifact-format.md, "Event-driven linear layers": four ops in stream
// order, the choice between the paths made on the device by the first.
//
//===----------------------------------------------------------------------===//

#include "ManifestBuilder.h"

#include "snn/Conversion/NeuronToGPU/EventLinearTiles.h"
#include "snn/Conversion/NeuronToGPU/SparseKernels.h"
#include "snn/Dialect/SNN/IR/FusedPool.h"

using namespace mlir;
using namespace mlir::snn;
using llvm::json::Array;
using llvm::json::Object;

LogicalResult ManifestBuilder::serializeEventLinear(LinearOp linear,
                                                    Phase phase) {
  FailureOr<LayerTensors> tensors =
      addLayerTensors(linear, linear.getInput(), linear.getWeight(),
                      linear.getBias(), linear.getOutput());
  if (failed(tensors))
    return failure();
  std::optional<int64_t> x = tensors->x, w = tensors->w, y = tensors->y,
                         bias = tensors->bias;

  OpKernelSpec spec;
  Array wShape = *tensor(*w).getArray("shape");
  spec.outFeatures = *wShape[0].getAsInteger();
  spec.inFeatures = *wShape[1].getAsInteger();
  int64_t elements = getValueElements(*x);
  spec.rows = elements / spec.inFeatures;
  spec.hasBias = bias.has_value();
  double crossover = linear.getEventDriven()->convertToDouble();
  // crossover = 1: the event-driven path always runs; no dense fallback.
  bool denseFallback = getEventPathLimit(crossover, elements) < elements;

  // The decision: word 0 the input's nonzero count, word 1 the path
  // (1: event-driven). A neuron kernel that wrote the input may have
  // counted it already (snn.fused_spike_count).
  bool counted = countedDecisions.count(linear);
  int64_t decision = getDecision(linear);

  std::string layer = getEventLayerName(linear, linear.getWeight(), *w);
  if (phase == Phase::Infer) // snn-run reports how often each path ran
    eventLayers.push_back(Object{{"name", layer}, {"decision", decision}});
  // Without a dense path the tiles' compact_rows counts the input itself
  // (the count is only reported): one read of x instead of two.
  bool countInLists =
      !counted && !denseFallback &&
      runsAsEventTiles(spec.inFeatures, spec.outFeatures, sharedMemoryLimit);
  std::optional<Object> density;
  if (countInLists)
    density =
        makeSpikeDensityOp(phase, layer, "forward", crossover, *x, decision,
                           spec.rows, spec.inFeatures, denseFallback);
  else if (!counted)
    emitSpikeDensity(phase, layer, "forward", crossover, *x, decision,
                     spec.rows, spec.inFeatures, denseFallback);

  // event_linear_tiles reads w's rows into its tile; the per-row kernel
  // reads wt = wᵀ, the weights of one input a contiguous row.
  bool xValues = listsNeedValues(linear.getInput());
  std::optional<RowLists> lists = emitEventLinearTiles(
      phase, spec.rows, spec.inFeatures, spec.outFeatures, *x, xValues, *w,
      bias, decision, *y, density ? &*density : nullptr);
  // Lists that every training step writes (no dense path) stand in for a
  // second compact_rows of the same input in the backward: for spikes the
  // same 4 bytes per element as the floats they replace; for the network
  // input (values) they are saved on top of it, sized for every element,
  // which buys one pass over the input per step (SHD at 1% on an H100: a
  // 17 us kernel of a 1.08 ms step).
  if (lists && phase == Phase::TrainForward && !denseFallback && !bodyTarget)
    trainForwardRowLists[*x] = *lists;
  if (!lists) {
    int64_t wt =
        addTensor(Object{{"shape", Array{spec.inFeatures, spec.outFeatures}},
                         {"role", "activation"}});
    spec.kind = OpKernelKind::TransposeWeight;
    // Only this pair reads and writes wt: on the CPU it is kept in strips.
    spec.weightStrips = true;
    Object transpose{{"op", "transpose_weight"},
                     {"in", Array{decision, *w}},
                     {"out", Array{wt}}};
    emit(phase, makeKernelOp(spec, Array{decision, *w, wt}, Array{decision, *w},
                             Array{wt}, Array{std::move(transpose)}));
    spec.kind = OpKernelKind::EventLinear;
    spec.xBinary = !xValues;
    // A thin layer's training input may be its spiking layer's row bits
    // (writesSpikeRowBits): the kernel lists each row from its words.
    spec.xBits = rowBitsTensors.contains(*x);
    Array args{*x, wt};
    if (bias)
      args.push_back(*bias);
    args.push_back(decision);
    Array in = args;
    args.push_back(*y);
    Object event{{"op", "event_linear"},
                 {"in", Array(in)},
                 {"out", Array{*y}},
                 {"has_bias", spec.hasBias}};
    if (spec.xBits) { // x is [rows * features / 32] words
      event["x_bits"] = true;
      event["features"] = spec.inFeatures;
    }
    emit(phase, makeKernelOp(spec, std::move(args), std::move(in), Array{*y},
                             Array{std::move(event)}));
  }

  if (!denseFallback)
    return success();
  Array denseIn{*x, *w};
  if (bias)
    denseIn.push_back(*bias);
  denseIn.push_back(decision);
  emit(phase, toLayerOp(Object{{"op", "linear"},
                               {"in", std::move(denseIn)},
                               {"out", Array{*y}},
                               {"has_bias", spec.hasBias},
                               {"unless_event_path", true}}));
  return success();
}

bool ManifestBuilder::listsNeedValues(Value input) {
  Value source = input;
  while (auto flatten = source.getDefiningOp<FlattenOp>())
    source = flatten.getInput();
  auto neuron = dyn_cast_or_null<NeuronOpInterface>(source.getDefiningOp());
  // Spikes are 0 or 1: only other inputs need their values listed (a
  // neuron fused with its pooling writes pooled spikes).
  return !neuron || isa<LIOp>(neuron.getOperation()) ||
         neuron->hasAttr(kFusedPoolAttrName) ||
         cast<OpResult>(source).getResultNumber() != 0;
}

RowLists
ManifestBuilder::emitCompactRows(Phase phase, int64_t x, int64_t rows,
                                 int64_t features, bool values,
                                 int64_t decision, const Object *density) {
  // Tensor names are unique: the forward programs each list their input.
  static const char *programSuffix[] = {":infer", ":train_forward", "", ""};
  std::string name = tensorName(x);
  auto listTensor = [&](StringRef suffix, StringRef dtype) {
    Object t{{"name", name + suffix.str() +
                          programSuffix[static_cast<int>(phase)]},
             {"shape", Array{rows * features}},
             {"role", "activation"}};
    if (dtype != "f32")
      t["dtype"] = dtype.str();
    return addTensor(std::move(t));
  };
  int64_t columns = listTensor(".columns", "i32");
  std::optional<int64_t> valueList;
  if (values)
    valueList = listTensor(".values", "f32");
  OpKernelSpec spec;
  spec.kind = OpKernelKind::CompactRows;
  spec.rows = rows;
  spec.inFeatures = features;
  spec.xValues = values;
  spec.xBits = rowBitsTensors.contains(x);
  spec.countsNonzeros = density != nullptr;
  Array out{columns};
  if (valueList)
    out.push_back(*valueList);
  Object op{{"op", "compact_rows"},
            {"in", Array{x, decision}},
            {"out", Array(out)}};
  if (spec.xBits) { // x is [rows * features / 32] words
    op["x_bits"] = true;
    op["features"] = features;
  }
  if (!density) {
    Array args{x, decision};
    for (const llvm::json::Value &v : out)
      args.push_back(v);
    emit(phase, makeKernelOp(spec, std::move(args), Array{x, decision},
                             std::move(out), Array{std::move(op)}));
    return {columns, valueList};
  }
  // One kernel of spike_density then compact_rows: (x, limit) -> lists,
  // decision; the blocks add their counts into the decision, which alone
  // is zeroed before the launch.
  int64_t limit = *(*density->getArray("in"))[1].getAsInteger();
  Array args{x, limit, decision};
  for (const llvm::json::Value &v : out)
    args.push_back(v);
  out.push_back(decision);
  Object kernel =
      makeKernelOp(spec, std::move(args), Array{x, limit}, std::move(out),
                   Array{Object(*density), std::move(op)});
  kernel["zero_outputs"] = Array{decision};
  emit(phase, std::move(kernel));
  return {columns, valueList};
}

std::optional<RowLists> ManifestBuilder::emitEventLinearTiles(
    Phase phase, int64_t rows, int64_t in, int64_t out, int64_t x, bool xValues,
    int64_t w, std::optional<int64_t> bias, int64_t decision, int64_t y,
    const Object *density) {
  if (!runsAsEventTiles(in, out, sharedMemoryLimit))
    return std::nullopt;
  int64_t columns = getEventTileColumns(in, out, sharedMemoryLimit);
  auto [list, values] =
      emitCompactRows(phase, x, rows, in, xValues, decision, density);
  OpKernelSpec spec;
  spec.kind = OpKernelKind::EventLinearTiles;
  spec.rows = rows;
  spec.inFeatures = in;
  spec.outFeatures = out;
  spec.hasBias = bias.has_value();
  spec.xValues = xValues;
  spec.tileColumns = columns;
  Array inputs{list};
  if (values)
    inputs.push_back(*values);
  inputs.push_back(w);
  if (bias)
    inputs.push_back(*bias);
  inputs.push_back(decision);
  Array args = inputs;
  args.push_back(y);
  Object event{{"op", "event_linear_tiles"},
               {"in", Array(inputs)},
               {"out", Array{y}},
               {"has_bias", spec.hasBias},
               {"x_values", xValues},
               {"tile_columns", columns}};
  emit(phase, makeKernelOp(spec, std::move(args), std::move(inputs),
                           Array{y}, Array{std::move(event)}));
  return RowLists{list, values};
}

std::string ManifestBuilder::getEventLayerName(Operation *op, Value weight,
                                               int64_t wId) {
  auto named = [](Operation *o) {
    return o ? o->getAttrOfType<StringAttr>("snn.name") : StringAttr();
  };
  StringAttr name = named(op);
  // A backward takes the name of the forward layer of its weight.
  for (Operation *user : weight.getUsers())
    if (!name && isa<LinearOp, Conv2DOp>(user))
      name = named(user);
  if (name)
    return name.str();
  StringRef weightName = *tensor(wId).getString("name");
  if (weightName.starts_with("%"))
    return "linear" + std::to_string(wId);
  weightName.consume_back(".weight");
  return weightName.str();
}

FailureOr<ManifestBuilder::LayerTensors>
ManifestBuilder::addLayerTensors(Operation *op, Value x, Value w, Value bias,
                                 Value y) {
  FailureOr<int64_t> xId = lookup(op, x), wId = lookup(op, w);
  if (failed(xId) || failed(wId))
    return failure();
  LayerTensors t{*xId, *wId, 0, std::nullopt};
  if (bias) {
    FailureOr<int64_t> b = lookup(op, bias);
    if (failed(b))
      return failure();
    t.bias = *b;
  }
  FailureOr<int64_t> yId = addValueTensor(op, y, "activation");
  if (failed(yId))
    return failure();
  t.y = *yId;
  forwardActivations.insert(t.y);
  return t;
}

int64_t ManifestBuilder::getDecision(Operation *eventOp) {
  if (auto it = countedDecisions.find(eventOp); it != countedDecisions.end())
    return it->second;
  return addTensor(Object{
      {"shape", Array{2}}, {"role", "activation"}, {"dtype", "i32"}});
}

FailureOr<std::string> ManifestBuilder::getEventLayerName(Operation *op,
                                                         Value weight) {
  if (auto it = ids.find(weight); it != ids.end())
    return getEventLayerName(op, weight, it->second);
  // The layer's weight comes after the neuron layer that counts its input.
  auto param = weight.getDefiningOp<ParamOp>();
  if (!param)
    return op->emitError() << "an event-driven layer whose input a neuron "
                              "kernel counts needs a parameter as its weight";
  FailureOr<int64_t> id = addParam(param);
  if (failed(id))
    return failure();
  ids[weight] = *id;
  paramOfValue[weight] = *id;
  return getEventLayerName(op, weight, *id);
}

LogicalResult ManifestBuilder::addFusedCount(Operation *layerOp,
                                             Operation *eventOp, Phase phase,
                                             int64_t counted, Array &in,
                                             Array &out, Object &json) {
  int64_t elements = getValueElements(counted);
  Value weight;
  double crossover;
  int64_t features;
  bool denseFallback;
  StringRef direction;
  if (auto linear = dyn_cast<LinearOp>(eventOp)) {
    weight = linear.getWeight();
    crossover = linear.getEventDriven()->convertToDouble();
    features = cast<RankedTensorType>(weight.getType()).getDimSize(1);
    denseFallback = getEventPathLimit(crossover, elements) < elements;
    direction = "forward";
  } else {
    auto bwd = cast<LinearBwdOp>(eventOp);
    weight = bwd.getWeight();
    crossover = bwd.getEventDriven()->convertToDouble();
    features = cast<RankedTensorType>(weight.getType()).getDimSize(0);
    // As serializeEventLinearBackward: its dense op also writes gb.
    denseFallback =
        getEventPathLimit(crossover, elements) < elements || bwd.getHasBias();
    direction = "backward";
  }
  if (features <= 0 || elements % features != 0)
    return layerOp->emitError()
           << "the tensor this layer counts does not have the event-driven "
              "layer's "
           << features << " features per row";
  FailureOr<std::string> layer = getEventLayerName(eventOp, weight);
  if (failed(layer))
    return failure();
  int64_t decision = getDecision(eventOp);
  Object density =
      makeSpikeDensity(phase, *layer, direction, crossover, counted, decision,
                       elements / features, features, denseFallback);
  int64_t limit = *(*density.getArray("in"))[1].getAsInteger();
  in.push_back(limit);
  out.push_back(decision);
  json["spike_count"] = Object{{"limit", limit},
                               {"decision", decision},
                               {"density", std::move(density)}};
  countedDecisions[eventOp] = decision;
  return success();
}

void ManifestBuilder::emitSpikeDensity(Phase phase, StringRef layer,
                                       StringRef direction, double crossover,
                                       int64_t x, int64_t decision,
                                       int64_t rows, int64_t features,
                                       bool denseFallback) {
  emit(phase, makeSpikeDensity(phase, layer, direction, crossover, x,
                               decision, rows, features, denseFallback));
}

Object ManifestBuilder::makeSpikeDensityOp(Phase phase, StringRef layer,
                                           StringRef direction,
                                           double crossover, int64_t x,
                                           int64_t decision, int64_t rows,
                                           int64_t features,
                                           bool denseFallback) {
  static const char *programNames[] = {"infer", "train_forward", "backward",
                                       "update"};
  int64_t limit = getEventPathLimit(crossover, rows * features);
  int64_t limitId = addTensor(Object{
      {"name",
       ("event_limit:" + layer + ":" + programNames[static_cast<int>(phase)])
           .str()},
      {"shape", Array{1}},
      {"role", "constant"},
      {"dtype", "i32"},
      {"init", Object{{"kind", "constant"}, {"value", limit}}}});
  Object density{{"op", "spike_density"},
                 {"in", Array{x, limitId}},
                 {"out", Array{decision}},
                 {"layer", layer.str()},
                 {"direction", direction.str()},
                 {"crossover", crossover},
                 {"limit", limit},
                 {"dense_fallback", denseFallback}};
  // Row bits hold 32 inputs a word; this op (never run without a dense
  // path: nothing to calibrate) stands for the fused count's site.
  if (rowBitsTensors.contains(x))
    density["elements"] = rows * features;
  return density;
}

Object ManifestBuilder::makeSpikeDensity(Phase phase, StringRef layer,
                                         StringRef direction, double crossover,
                                         int64_t x, int64_t decision,
                                         int64_t rows, int64_t features,
                                         bool denseFallback) {
  Object density = makeSpikeDensityOp(phase, layer, direction, crossover, x,
                                      decision, rows, features, denseFallback);
  int64_t limitId = *(*density.getArray("in"))[1].getAsInteger();
  OpKernelSpec spec;
  spec.kind = OpKernelKind::SpikeDensity;
  spec.rows = rows;
  spec.inFeatures = features;
  Object densityOp =
      makeKernelOp(spec, Array{x, limitId, decision}, Array{x, limitId},
                   Array{decision}, Array{std::move(density)});
  // The GPU kernel's blocks add their counts into the decision.
  densityOp["zero_outputs"] = true;
  return densityOp;
}
