//===- EventLinear.cpp - manifest ops of an event-driven linear layer -----===//
//
// docs/artifact-format.md, "Event-driven linear layers": four ops in stream
// order, the choice between the paths made on the device by the first.
//
//===----------------------------------------------------------------------===//

#include "ManifestBuilder.h"

#include "snn/Conversion/NeuronToGPU/SparseKernels.h"

using namespace mlir;
using namespace mlir::snn;
using llvm::json::Array;
using llvm::json::Object;

LogicalResult ManifestBuilder::serializeEventLinear(LinearOp linear,
                                                    Phase phase) {
  FailureOr<int64_t> x = lookup(linear, linear.getInput());
  FailureOr<int64_t> w = lookup(linear, linear.getWeight());
  if (failed(x) || failed(w))
    return failure();
  std::optional<int64_t> bias;
  if (linear.getBias()) {
    FailureOr<int64_t> b = lookup(linear, linear.getBias());
    if (failed(b))
      return failure();
    bias = *b;
  }
  FailureOr<int64_t> y =
      addValueTensor(linear, linear.getOutput(), "activation");
  if (failed(y))
    return failure();
  forwardActivations.insert(*y);

  OpKernelSpec spec;
  Array wShape = *tensor(*w).getArray("shape");
  spec.outFeatures = *wShape[0].getAsInteger();
  spec.inFeatures = *wShape[1].getAsInteger();
  int64_t elements = 1;
  for (const llvm::json::Value &d : *tensor(*x).getArray("shape"))
    elements *= *d.getAsInteger();
  spec.rows = elements / spec.inFeatures;
  spec.hasBias = bias.has_value();
  spec.crossover = linear.getEventDriven()->convertToDouble();

  // The decision: word 0 the input's nonzero count, word 1 the path
  // (1: event-driven); the weight transposed so that the weights of one
  // input are a contiguous row.
  int64_t decision = addTensor(Object{
      {"shape", Array{2}}, {"role", "activation"}, {"dtype", "i32"}});
  int64_t wt = addTensor(Object{{"shape", Array{spec.inFeatures, spec.outFeatures}},
                                {"role", "activation"}});

  if (phase == Phase::Infer) {
    // snn-run reports per layer how often the event-driven path ran.
    auto name = linear->getAttrOfType<StringAttr>("snn.name");
    eventLayers.push_back(Object{
        {"name", name ? name.getValue().str()
                      : "linear" + std::to_string(eventLayers.size())},
        {"decision", decision}});
  }

  spec.kind = OpKernelKind::SpikeDensity;
  Object density{{"op", "spike_density"},
                 {"in", Array{*x}},
                 {"out", Array{decision}},
                 {"crossover", spec.crossover},
                 {"limit", getEventPathLimit(spec.crossover, elements)}};
  Object densityOp = makeKernelOp(spec, Array{*x, decision}, Array{*x},
                                  Array{decision}, Array{std::move(density)});
  // The GPU kernel's blocks add their counts into the decision.
  densityOp["zero_outputs"] = true;
  emit(phase, std::move(densityOp));

  spec.kind = OpKernelKind::TransposeWeight;
  Object transpose{{"op", "transpose_weight"},
                   {"in", Array{decision, *w}},
                   {"out", Array{wt}}};
  emit(phase, makeKernelOp(spec, Array{decision, *w, wt},
                           Array{decision, *w}, Array{wt},
                           Array{std::move(transpose)}));

  spec.kind = OpKernelKind::EventLinear;
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
  emit(phase, makeKernelOp(spec, std::move(args), std::move(in), Array{*y},
                           Array{std::move(event)}));

  // crossover = 1: the event-driven path always runs; no dense fallback.
  if (getEventPathLimit(spec.crossover, elements) >= elements)
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
