//===- EventConv.cpp - manifest ops of an event-driven convolution --------===//
//
// docs/artifact-format.md, "Event-driven convolutions": as an event-driven
// linear layer on the CPU, four ops in order, the choice between the paths
// made by the first: spike_density, transpose_weight (w [O, C KH KW] ->
// wt [C KH KW, O]), event_conv2d, then the dense conv2d that skips itself
// when the event-driven path ran. The backward of such a layer
// (addEventConvWeightGrad) computes gw the same way, over x's nonzeros.
//
//===----------------------------------------------------------------------===//

#include "ManifestBuilder.h"

#include "snn/Conversion/NeuronToGPU/SparseKernels.h"

using namespace mlir;
using namespace mlir::snn;
using llvm::json::Array;
using llvm::json::Object;

/// The window of a convolution (or its backward: y is gy) over all its
/// images, as the dense path's im2col sees it (LayerOps.cpp).
template <typename ConvOp>
static ConvColumnsGeometry getWindow(ConvOp op, Value x, Value w, Value y,
                                     bool last) {
  ArrayRef<int64_t> xs = cast<RankedTensorType>(x.getType()).getShape();
  ArrayRef<int64_t> ws = cast<RankedTensorType>(w.getType()).getShape();
  ArrayRef<int64_t> ys = cast<RankedTensorType>(y.getType()).getShape();
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
  g.sh = op.getStride()[0], g.sw = op.getStride()[1];
  g.ph = op.getPadding()[0], g.pw = op.getPadding()[1];
  g.dh = op.getDilation()[0], g.dw = op.getDilation()[1];
  g.images = ShapedType::getNumElements(xs) / (g.channels * g.h * g.w);
  return g;
}

LogicalResult ManifestBuilder::serializeEventConv(Conv2DOp conv, Phase phase) {
  FailureOr<LayerTensors> tensors = addLayerTensors(
      conv, conv.getInput(), conv.getWeight(), conv.getBias(), conv.getOutput());
  if (failed(tensors))
    return failure();
  std::optional<int64_t> x = tensors->x, w = tensors->w, y = tensors->y,
                         bias = tensors->bias;

  bool last = conv.getChannelsLast();
  ConvColumnsGeometry g = getWindow(conv, conv.getInput(), conv.getWeight(),
                                    conv.getOutput(), last);
  int64_t outChannels = cast<RankedTensorType>(conv.getWeight().getType())
                            .getDimSize(0);
  int64_t imageInputs = g.channels * g.h * g.w;

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

void ManifestBuilder::addEventConvWeightGrad(Conv2DBwdOp bwd, Object &json) {
  json.erase("event_driven");
  if (json.getBoolean("accumulate").value_or(false))
    return; // the event path overwrites gw
  Array &in = *json.getArray("in");
  Array &out = *json.getArray("out");
  int64_t gy = *in[0].getAsInteger(), x = *in[1].getAsInteger(),
          w = *in[2].getAsInteger();
  int64_t gw = *out[bwd.getNeedGx() ? 1 : 0].getAsInteger();

  bool last = bwd.getChannelsLast();
  ConvColumnsGeometry g = getWindow(bwd, bwd.getInput(), bwd.getWeight(),
                                    bwd.getGradOutput(), last);
  int64_t outChannels =
      cast<RankedTensorType>(bwd.getWeight().getType()).getDimSize(0);
  int64_t taps = g.channels * g.kh * g.kw;
  int64_t imageInputs = g.channels * g.h * g.w;

  double crossover = bwd.getEventDriven()->convertToDouble();
  int64_t elements = g.images * imageInputs;
  bool denseFallback = getEventPathLimit(crossover, elements) < elements;
  int64_t decision = getDecision(bwd);
  std::string layer = getEventLayerName(bwd, bwd.getWeight(), w);
  emitSpikeDensity(Phase::Backward, layer, "backward", crossover, x, decision,
                   g.images, imageInputs, denseFallback);

  // gy as [images, OH OW, O]: NHWC already; NCHW, each image's [O, OH OW]
  // transposed (on the event path only).
  int64_t gyRows = gy;
  if (!last) {
    gyRows = addTensor(Object{{"shape", Array{g.images, g.oh * g.ow, outChannels}},
                              {"role", "activation"}});
    OpKernelSpec transpose;
    transpose.kind = OpKernelKind::TransposeWeight;
    transpose.outFeatures = outChannels;
    transpose.inFeatures = g.oh * g.ow;
    transpose.transposeBatch = g.images;
    emit(Phase::Backward,
         makeKernelOp(transpose, Array{decision, gy, gyRows},
                      Array{decision, gy}, Array{gyRows},
                      Array{Object{{"op", "transpose_weight"},
                                   {"in", Array{decision, gy}},
                                   {"out", Array{gyRows}},
                                   {"batch", g.images}}}));
  }

  OpKernelSpec spec;
  spec.kind = OpKernelKind::EventConv2dWeightGrad;
  spec.rows = g.images;
  spec.inFeatures = taps;
  spec.outFeatures = outChannels;
  spec.columns = g;
  spec.xBinary = !listsNeedValues(bwd.getInput());
  int64_t gwt = addTensor(
      Object{{"shape", Array{taps, outChannels}}, {"role", "activation"}});
  emit(Phase::Backward,
       makeKernelOp(spec, Array{x, gyRows, decision, gwt},
                    Array{x, gyRows, decision}, Array{gwt},
                    Array{Object{{"op", "event_conv2d_weight_grad"},
                                 {"in", Array{x, gyRows, decision}},
                                 {"out", Array{gwt}},
                                 {"kernel", Array{g.kh, g.kw}},
                                 {"output", Array{g.oh, g.ow}},
                                 {"stride", toArray(bwd.getStride())},
                                 {"padding", toArray(bwd.getPadding())},
                                 {"dilation", toArray(bwd.getDilation())},
                                 {"channels_last", last}}}));
  // gw [O, taps] = gwᵀ transposed (transpose_weight of a [taps, O] "weight").
  OpKernelSpec transpose;
  transpose.kind = OpKernelKind::TransposeWeight;
  transpose.inFeatures = outChannels;
  transpose.outFeatures = taps;
  emit(Phase::Backward,
       makeKernelOp(transpose, Array{decision, gwt, gw}, Array{decision, gwt},
                    Array{gw},
                    Array{Object{{"op", "transpose_weight"},
                                 {"in", Array{decision, gwt}},
                                 {"out", Array{gw}}}}));
  in.push_back(decision);
  json["unless_event_path"] = true;
}
