//===- EventLinearBackward.cpp - manifest ops of a sparse linear backward -===//
//
// docs/artifact-format.md, "Event-driven linear backward": an
// `event_driven` snn.linear_bwd (its output gradient gy [M, N] is the
// banded input gradient of a neuron layer, mostly exact zeros) becomes the
// event-driven kernels of the forward applied to gy:
//   gx [M, K] = gy w:   event_linear over the rows of gy, the weight rows
//                       w[j, :] already contiguous (no transpose); with
//                       snn.band_masked_gx, event_linear_band: only where
//                       the reading layer's saved H is in its band;
//   gw [N, K] = gyᵀ x:  per output feature j, the rows where gy[:, j] != 0
//                       (compact_columns lists them from gy), reading x's
//                       nonzeros as per-row lists (those the forward's
//                       tiles always write for spikes, else compact_rows)
//                       in event_weight_grad_lists; with spike-bits, gy
//                       transposed and event_weight_grad_bits reading x's
//                       bits where x is a spiking layer's output or the
//                       network input; gy transposed and event_linear with
//                       x [M, K] as the "weight" when K is too wide for the
//                       lists' shared rows.
// One density kernel decides for both; the dense linear_bwd after them
// skips its GEMMs when the event-driven path ran and always writes gb.
// Every sum runs in index order: no atomics, reproducible on both devices.
//
//===----------------------------------------------------------------------===//

#include "ManifestBuilder.h"
#include "RowSpikeBits.h"

#include "snn/Conversion/NeuronToGPU/SparseKernels.h"
#include "snn/Dialect/SNN/IR/BandMaskedGrad.h"

using namespace mlir;
using namespace mlir::snn;
using llvm::json::Array;
using llvm::json::Object;

LogicalResult ManifestBuilder::serializeEventLinearBackward(LinearBwdOp bwd) {
  FailureOr<int64_t> gy = lookup(bwd, bwd.getGradOutput());
  FailureOr<int64_t> xValue = lookup(bwd, bwd.getInput());
  FailureOr<int64_t> w = lookup(bwd, bwd.getWeight());
  if (failed(gy) || failed(xValue) || failed(w))
    return failure();
  int64_t x = *xValue;
  auto save = [&](int64_t id) {
    if (forwardActivations.contains(id))
      tensor(id)["role"] = "saved";
  };
  save(*gy);
  save(*w);
  FailureOr<Array> results = addResultTensors(bwd, "grad");
  if (failed(results))
    return failure();
  Array out = std::move(*results);
  bool needGx = bwd.getNeedGx(), hasBias = bwd.getHasBias();
  std::optional<int64_t> gx;
  if (needGx)
    gx = *out[0].getAsInteger();
  int64_t gw = *out[needGx ? 1 : 0].getAsInteger();

  Array wShape = *tensor(*w).getArray("shape");
  int64_t n = *wShape[0].getAsInteger(), k = *wShape[1].getAsInteger();
  int64_t elements = 1;
  for (const llvm::json::Value &d : *tensor(*gy).getArray("shape"))
    elements *= *d.getAsInteger();
  int64_t m = elements / n;
  double crossover = bwd.getEventDriven()->convertToDouble();
  // The dense path; with crossover = 1 it only writes gb (when the layer
  // has a bias), so it is left out when there is none.
  bool denseOp = getEventPathLimit(crossover, elements) < elements || hasBias;
  // The dense GEMM reads x as floats: a module with a dense path keeps
  // them (a spiking layer's are then saved next to its bits; with
  // spike-bits, unpacked). The CUDA runtime runs that GEMM whenever it does
  // not capture a graph, so its input cannot depend on the decision.
  if (denseOp) {
    x = unpackSpikesFor(bwd, bwd.getInput(), *xValue);
    save(x);
  }

  // The neuron backward that wrote gy may have counted it already
  // (snn.fused_grad_count).
  bool counted = countedDecisions.count(bwd);
  int64_t decision = getDecision(bwd);
  if (!counted)
    emitSpikeDensity(Phase::Backward,
                     getEventLayerName(bwd, bwd.getWeight(), *w), "backward",
                     crossover, *gy, decision, m, n, denseOp);

  auto emitEventLinear = [&](int64_t rows, int64_t in, int64_t outFeatures,
                             int64_t sparse, int64_t dense, int64_t result) {
    Object event{{"op", "event_linear"},
                 {"in", Array{sparse, dense, decision}},
                 {"out", Array{result}},
                 {"has_bias", false}};
    emit(Phase::Backward,
         makeKernelOp(makeEventKernelSpec(OpKernelKind::EventLinear, rows, in,
                               outFeatures),
                      Array{sparse, dense, decision, result},
                      Array{sparse, dense, decision}, Array{result},
                      Array{std::move(event)}));
  };
  // gx stays event_linear over gy's rows: on tiles (measured on an H100,
  // SHD net, bench/results/2026-11-27-H100-event-tiles.md) the kernel saved
  // about 10 us of 142-166 and gy's compact_rows cost 42 on top.
  // snn.band_masked_gx: only the entries in the band of the layer that
  // reads gx, tested on its saved f32 H (one with bf16 or recomputed H
  // keeps the full gx).
  std::optional<int64_t> bandH;
  std::optional<SurrogateBand> band;
  if (gx && bwd->hasAttr(kBandMaskedGxAttrName)) {
    Operation *neuron = getGradientReadingNeuron(bwd);
    auto record = neuron ? neurons.find(neuron) : neurons.end();
    band = neuron ? getSurrogateBand(neuron) : std::nullopt;
    if (band && record != neurons.end() && record->second.savedH >= 0 &&
        record->second.input < 0 &&
        !tensor(record->second.savedH).getString("dtype"))
      bandH = record->second.savedH;
  }
  if (gx && bandH) {
    OpKernelSpec spec = makeEventKernelSpec(OpKernelKind::EventLinearBand, m, n, k);
    spec.bandVTh = band->vTh;
    spec.band = band->band;
    Object event{{"op", "event_linear_band"},
                 {"in", Array{*gy, *w, *bandH, decision}},
                 {"out", Array{*gx}},
                 {"v_th", band->vTh},
                 {"band", band->band}};
    emit(Phase::Backward,
         makeKernelOp(spec, Array{*gy, *w, *bandH, decision, *gx},
                      Array{*gy, *w, *bandH, decision}, Array{*gx},
                      Array{std::move(event)}));
  } else if (gx) {
    emitEventLinear(m, n, k, *gy, *w, *gx);
  }

  // gw's kernel op reading gy's form and x's form (`in`), then the
  // decision.
  auto emitWeightGrad = [&](const OpKernelSpec &spec, Array in,
                            Object attrs = Object()) {
    in.push_back(decision);
    Array args(in);
    args.push_back(gw);
    Object event{{"op", spec.getKindName().str()},
                 {"in", Array(in)},
                 {"out", Array{gw}},
                 {"x_values", spec.xValues}};
    for (auto &kv : attrs)
      event[kv.first] = std::move(kv.second);
    emit(Phase::Backward, makeKernelOp(spec, std::move(args), std::move(in),
                                       Array{gw}, Array{std::move(event)}));
  };
  bool xValues = false;
  bool bits =
      getEventGradBits(bwd.getInput(), xValues, /*pack=*/false).has_value();
  OpKernelSpec lists = makeEventKernelSpec(OpKernelKind::EventLinearLists, n, m, k);
  if (!bits && hasEventListsKernel(lists)) {
    // The events of gw's row j, gy's nonzero rows in column j, listed by
    // compact_columns from gy itself in segments that nest in the lists
    // kernel's warp segments (the same sums, in the same order, as from a
    // transposed gy, without writing and reading it); x's nonzeros listed
    // per row (compact_rows), then per event only the listed columns:
    // O(nonzeros of x's row) per event instead of O(K).
    int64_t segment = getEventRowLayout(lists)->segment % 128 == 0 ? 128 : 32;
    // From gy's occupancy bits when the neuron backward that wrote gy
    // wrote them too (N / 32 words a row instead of N floats).
    OpKernelSpec columns = makeEventKernelSpec(OpKernelKind::CompactColumns, m, n, 0);
    columns.columnSegment = segment;
    auto bitsOfGy = gradRowBits.find(*gy);
    columns.xBits = bitsOfGy != gradRowBits.end();
    int64_t gyForm = columns.xBits ? bitsOfGy->second : *gy;
    int64_t gyRows = addTensor(Object{{"shape", Array{n * m}},
                                      {"dtype", "i32"},
                                      {"role", "grad"}});
    Object compact{{"op", "compact_columns"},
                   {"in", Array{gyForm, decision}},
                   {"out", Array{gyRows}},
                   {"segment", segment}};
    if (columns.xBits) {
      compact["gy_bits"] = true;
      compact["features"] = n;
    }
    emit(Phase::Backward, makeKernelOp(columns, Array{gyForm, decision, gyRows},
                                       Array{gyForm, decision}, Array{gyRows},
                                       Array{std::move(compact)}));
    lists.xValues = listsNeedValues(bwd.getInput());
    lists.columnSegment = segment;
    // The lists train_forward always writes for x, else x's listed again.
    RowLists xLists;
    auto listed = trainForwardRowLists.find(x);
    if (listed != trainForwardRowLists.end()) {
      xLists = listed->second;
      tensor(xLists.columns)["role"] = "saved";
      if (xLists.values)
        tensor(*xLists.values)["role"] = "saved";
    } else {
      save(x);
      xLists =
          emitCompactRows(Phase::Backward, x, m, k, lists.xValues, decision);
    }
    assert(xLists.values.has_value() == lists.xValues && "lists of values");
    Array in{*gy, gyRows, xLists.columns};
    if (xLists.values)
      in.push_back(*xLists.values);
    emitWeightGrad(lists, std::move(in), Object{{"gy_segment", segment}});
  } else {
    // gyᵀ [N, M]: transpose_weight of a [M, N] "weight".
    int64_t gyT =
        addTensor(Object{{"shape", Array{n, m}}, {"role", "grad"}});
    Object transpose{{"op", "transpose_weight"},
                     {"in", Array{decision, *gy}},
                     {"out", Array{gyT}}};
    emit(Phase::Backward,
         makeKernelOp(makeEventKernelSpec(OpKernelKind::TransposeWeight, 0, n, m),
                      Array{decision, *gy, gyT}, Array{decision, *gy},
                      Array{gyT}, Array{std::move(transpose)}));
    if (bits) {
      // gw reads x as bits (a spiking layer's spikes; the network input's
      // occupancy, then its values at the set bits, packed here): ceil(K /
      // 32) words per event instead of K floats.
      std::optional<int64_t> words = getEventGradBits(bwd.getInput(), xValues);
      OpKernelSpec spec = makeEventKernelSpec(OpKernelKind::EventLinearBits, n, m, k);
      spec.xValues = xValues;
      Array in{gyT, *words};
      if (xValues)
        in.push_back(*xValue);
      emitWeightGrad(spec, std::move(in));
    } else {
      save(x);
      emitEventLinear(n, m, k, gyT, x, gw);
    }
  }

  if (!denseOp)
    return success();
  // toLayerOp adds the generated bias-gradient launch.
  emit(Phase::Backward, toLayerOp(Object{{"op", "linear_bwd"},
                                         {"in", Array{*gy, x, *w, decision}},
                                         {"out", std::move(out)},
                                         {"has_bias", hasBias},
                                         {"need_gx", needGx},
                                         {"unless_event_path", true}}));
  return success();
}

LogicalResult ManifestBuilder::serializeThinWeightGradBits(LinearBwdOp bwd,
                                                          int64_t xBits) {
  if (!readsThinWeightGradBits(bwd))
    return bwd.emitError()
           << "this linear_bwd reads its input as row bits but is not a thin "
              "weight gradient (at most "
           << kMaxThinOutputs
           << " outputs, no bias, gx formed by the neuron backward); "
              "recompile with --snn-compile row-bits=false";
  FailureOr<int64_t> gy = lookup(bwd, bwd.getGradOutput());
  if (failed(gy))
    return failure();
  tensor(xBits)["role"] = "saved";
  // With need_gx the neuron backward forms gx (kGxInNeuronBwdAttrName): gw
  // is the second result and the only one written.
  Value gwValue = bwd.getGrads()[bwd.getNeedGx() ? 1 : 0];
  FailureOr<int64_t> gw = addValueTensor(bwd, gwValue, "grad");
  if (failed(gw))
    return failure();
  auto wType = cast<RankedTensorType>(bwd.getWeight().getType());
  int64_t n = wType.getDimSize(0);
  OpKernelSpec spec =
      makeEventKernelSpec(OpKernelKind::ThinWeightGradBits,
                          getValueElements(*gy) / n, wType.getDimSize(1), n);
  int64_t segments = getThinWeightGradSegments(spec);
  int64_t partElements = spec.outFeatures * spec.inFeatures;
  int64_t parts = addTensor(
      Object{{"shape", Array{segments, spec.outFeatures, spec.inFeatures}},
             {"role", "activation"}});
  Object thin{{"op", "thin_weight_grad_bits"},
              {"in", Array{*gy, xBits}},
              {"out", Array{parts}},
              {"x_bits", true},
              {"features", spec.inFeatures},
              {"segment_rows", kThinSegmentRows}};
  emit(Phase::Backward,
       makeKernelOp(spec, Array{*gy, xBits, parts}, Array{*gy, xBits},
                    Array{parts}, Array{std::move(thin)}));
  // gw = the parts added in segment order (in f64, rounded once).
  OpKernelSpec sum;
  sum.kind = OpKernelKind::TimeSum;
  sum.channelGeometry.rows = segments;
  sum.channelGeometry.channels = partElements;
  sum.sizes = {partElements};
  Object add{{"op", "time_sum"},
             {"in", Array{parts}},
             {"out", Array{*gw}},
             {"scale", 1.0}};
  emit(Phase::Backward, makeKernelOp(sum, Array{parts, *gw}, Array{parts},
                                     Array{*gw}, Array{std::move(add)}));
  return success();
}
