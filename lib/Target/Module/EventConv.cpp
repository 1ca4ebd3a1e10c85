//===- EventConv.cpp - manifest ops of an event-driven convolution --------===//
//
// docs/artifact-format.md, "Event-driven convolutions": as an event-driven
// linear layer on the CPU, four ops in order, the choice between the paths
// made by the first: spike_density, transpose_weight (w [O, C KH KW] ->
// wt [C KH KW, O]), event_conv2d, then the dense conv2d that skips itself
// when the event-driven path ran.
//
//===----------------------------------------------------------------------===//

#include "ManifestBuilder.h"

#include "snn/Conversion/NeuronToGPU/SparseKernels.h"

using namespace mlir;
using namespace mlir::snn;
using llvm::json::Array;
using llvm::json::Object;

LogicalResult ManifestBuilder::serializeEventConv(Conv2DOp conv, Phase phase) {
  FailureOr<LayerTensors> tensors = addLayerTensors(
      conv, conv.getInput(), conv.getWeight(), conv.getBias(), conv.getOutput());
  if (failed(tensors))
    return failure();
  std::optional<int64_t> x = tensors->x, w = tensors->w, y = tensors->y,
                         bias = tensors->bias;

  // The window, as the dense path's im2col sees it (LayerOps.cpp).
  bool last = conv.getChannelsLast();
  ArrayRef<int64_t> xs = cast<RankedTensorType>(conv.getInput().getType()).getShape();
  ArrayRef<int64_t> ws = cast<RankedTensorType>(conv.getWeight().getType()).getShape();
  ArrayRef<int64_t> ys = cast<RankedTensorType>(conv.getOutput().getType()).getShape();
  size_t r = xs.size();
  ConvColumnsGeometry g;
  g.channelsLast = last;
  if (last) {
    g.h = xs[r - 3], g.w = xs[r - 2], g.channels = xs[r - 1];
    g.oh = ys[r - 3], g.ow = ys[r - 2], g.kh = ws[1], g.kw = ws[2];
  } else {
    g.channels = xs[r - 3], g.h = xs[r - 2], g.w = xs[r - 1];
    g.oh = ys[r - 2], g.ow = ys[r - 1], g.kh = ws[2], g.kw = ws[3];
  }
  g.sh = conv.getStride()[0], g.sw = conv.getStride()[1];
  g.ph = conv.getPadding()[0], g.pw = conv.getPadding()[1];
  g.dh = conv.getDilation()[0], g.dw = conv.getDilation()[1];
  int64_t outChannels = ws[0];
  int64_t imageInputs = g.channels * g.h * g.w;
  g.images = ShapedType::getNumElements(xs) / imageInputs;

  OpKernelSpec spec;
  spec.rows = g.images;
  spec.inFeatures = g.channels * g.kh * g.kw;
  spec.outFeatures = outChannels;
  spec.hasBias = bias.has_value();
  spec.columns = g;
  double crossover = conv.getEventDriven()->convertToDouble();
  int64_t elements = g.images * imageInputs;
  // crossover = 1: the event-driven path always runs; no dense fallback.
  bool denseFallback = getEventPathLimit(crossover, elements) < elements;
  int64_t decision = getDecision(conv);
  std::string layer = getEventLayerName(conv, conv.getWeight(), *w);
  if (phase == Phase::Infer) // snn-run reports how often each path ran
    eventLayers.push_back(Object{{"name", layer}, {"decision", decision}});
  emitSpikeDensity(phase, layer, "forward", crossover, *x, decision, g.images,
                   imageInputs, denseFallback);

  // wt [C KH KW, O]: a tap's O weights one contiguous row.
  int64_t wt = addTensor(Object{
      {"shape", Array{spec.inFeatures, outChannels}}, {"role", "activation"}});
  spec.kind = OpKernelKind::TransposeWeight;
  emit(phase, makeKernelOp(spec, Array{decision, *w, wt}, Array{decision, *w},
                           Array{wt},
                           Array{Object{{"op", "transpose_weight"},
                                        {"in", Array{decision, *w}},
                                        {"out", Array{wt}}}}));
  spec.kind = OpKernelKind::EventConv2d;
  spec.xBinary = !listsNeedValues(conv.getInput());
  Array args{*x, wt};
  if (bias)
    args.push_back(*bias);
  args.push_back(decision);
  Array in = args;
  args.push_back(*y);
  Object event{{"op", "event_conv2d"},
               {"in", Array(in)},
               {"out", Array{*y}},
               {"kernel", Array{g.kh, g.kw}},
               {"has_bias", spec.hasBias},
               {"stride", toArray(conv.getStride())},
               {"padding", toArray(conv.getPadding())},
               {"dilation", toArray(conv.getDilation())},
               {"channels_last", last}};
  emit(phase, makeKernelOp(spec, std::move(args), std::move(in), Array{*y},
                           Array{std::move(event)}));

  if (!denseFallback)
    return success();
  Array denseIn{*x, *w};
  if (bias)
    denseIn.push_back(*bias);
  denseIn.push_back(decision);
  Object dense{{"op", "conv2d"},
               {"in", std::move(denseIn)},
               {"out", Array{*y}},
               {"has_bias", spec.hasBias},
               {"stride", toArray(conv.getStride())},
               {"padding", toArray(conv.getPadding())},
               {"dilation", toArray(conv.getDilation())},
               {"groups", conv.getGroups()},
               {"unless_event_path", true}};
  if (last)
    dense["channels_last"] = true;
  emit(phase, toLayerOp(std::move(dense)));
  return success();
}
