//===- NeuronSpec.cpp - neuron layers as the kernels see them -------------===//
//
// Reads a multi-step neuron op into a NeuronSpec and fixes the kernel ABI
// (argument order and types, names) of docs/artifact-format.md.
//
//===----------------------------------------------------------------------===//

#include "NeuronKernelBuilder.h"
#include "snn/Dialect/SNN/IR/FusedCount.h"
#include "snn/Dialect/SNN/IR/FusedLinearGrad.h"
#include "snn/Dialect/SNN/IR/FusedTimeMean.h"

#include "snn/Conversion/NeuronToGPU/BatchNormKernels.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include <cmath>

// A run of threads whose batch norm backward sums make one partial lies in
// one GPU block.
static_assert(mlir::snn::kNeuronKernelBlockSize %
                      mlir::snn::kBatchNormBackwardMaxSegment ==
                  0,
              "the batch norm backward's runs must tile the block");

using namespace mlir;
using namespace mlir::snn;
using namespace mlir::snn::kernelgen;

/// A layer of fewer threads than this runs blocks of one warp.
static constexpr int64_t kOneWarpBlockThreads = 16 * 1024;

/// A layer with few threads (fewer than one warp per SM scheduler of an
/// H100, the SHD readout's 640) runs one warp per block: in blocks of 256
/// its threads crowd onto a few SMs (3 of 132) and each step's loads and
/// stores of 8 warps share one SM's L1. The SHD readout's inference scan on
/// an H100: 12.1 -> 9.6 us; its training scans, with the loss's time mean
/// fused as well, 18.4 -> 10.7 us and 11.6 -> 3.7 us
/// (bench/results/2026-12-07-H100-time-mean-blocks-lists.md). A batch norm
/// backward's sums keep the module's block (their runs lie in one block).
int64_t NeuronSpec::getBlockSize(int64_t defaultBlockSize) const {
  constexpr int64_t kWarp = 32;
  if (host || bn || defaultBlockSize <= kWarp ||
      std::max(getNumThreads(), getNumBackwardThreads()) >=
          kOneWarpBlockThreads)
    return defaultBlockSize;
  return kWarp;
}

/// A scalar, or a per-neuron tensor. Every dense attribute, a splat too, is a
/// kernel argument: the module emitter makes each one a constant tensor.
static NeuronParam getParam(Attribute attr) {
  NeuronParam param;
  if (auto f = dyn_cast<FloatAttr>(attr))
    param.scalar = f.getValueAsDouble();
  else if (auto dense = dyn_cast<DenseFPElementsAttr>(attr))
    param.values = dense;
  return param;
}

static NeuronParam getScalar(double value) {
  NeuronParam param;
  param.scalar = value;
  return param;
}

/// Firing, reset and surrogate options shared by every spiking neuron op.
template <typename OpT> static void readFire(OpT op, NeuronSpec &spec) {
  spec.vTh = getParam(op.getVTh());
  spec.vReset = getParam(op.getVReset());
  spec.softReset = op.getReset() == ResetMode::Soft;
  spec.strict = op.getStrict();
  spec.detachReset = op.getDetachReset();
  // DESIGN §2: V[-1] = v_init, by default v_reset (hard) or 0 (soft).
  if (std::optional<Attribute> vInit = op.getVInit())
    spec.vInit = getParam(*vInit);
  else if (spec.softReset)
    spec.vInit = getScalar(0.0);
  else
    spec.vInitFromReset = true;
  if (std::optional<SurrogateAttr> surrogate = op.getSurrogate()) {
    spec.surrogate = surrogate->getKind();
    spec.alpha = surrogate->getAlpha().getValueAsDouble();
    if (FloatAttr theta = surrogate->getThetaGrad())
      spec.thetaGrad = theta.getValueAsDouble();
    // An infinite band keeps every entry: the kernel needs no compare.
    if (FloatAttr band = surrogate->getGradBand();
        band && std::isfinite(band.getValueAsDouble()))
      spec.gradBand = band.getValueAsDouble();
  }
}

std::optional<NeuronSpec> kernelgen::getNeuronSpec(Operation *op,
                                                   std::string &why) {
  auto neuron = dyn_cast<NeuronOpInterface>(op);
  if (!neuron) {
    why = "not a neuron op";
    return std::nullopt;
  }
  bool step = neuron.isStepForm();
  auto type = cast<RankedTensorType>(neuron.getInput().getType());
  if (!type.getElementType().isF32()) {
    why = "generated kernels are f32 only";
    return std::nullopt;
  }
  if (!type.hasStaticShape() || type.getRank() < (step ? 2 : 3)) {
    why = step ? "generated kernels need a static [B, features...] shape"
               : "generated kernels need a static [T, B, features...] shape";
    return std::nullopt;
  }

  NeuronSpec spec;
  spec.step = step;
  spec.stepAddend = step && op->hasAttr(kStepAddendAttrName);
  spec.numSteps = step ? 1 : type.getDimSize(0);
  spec.numNeurons = type.getNumElements() / spec.numSteps;
  spec.numFeatures = spec.numNeurons / type.getDimSize(step ? 0 : 1);
  spec.k = spec.c = spec.vLeak = spec.vTh = spec.vReset = spec.vInit =
      getScalar(0.0);
  spec.kSyn = spec.cSyn = spec.iInit = getScalar(0.0);
  // The step ops (inside a time loop) have the attributes of their layers.
  auto lif = [&](auto lif) {
    spec.model = NeuronModel::LIF;
    spec.k = getParam(lif.getK());
    spec.c = getParam(lif.getC());
    spec.vLeak = getParam(lif.getVLeak());
    readFire(lif, spec);
    return true;
  };
  auto ifNeuron = [&](auto ifOp) {
    spec.model = NeuronModel::IF;
    spec.c = getParam(ifOp.getC());
    readFire(ifOp, spec);
    return true;
  };
  auto li = [&](auto li) {
    spec.model = NeuronModel::LI;
    spec.k = getParam(li.getK());
    spec.c = getParam(li.getC());
    spec.vLeak = getParam(li.getVLeak());
    if (std::optional<Attribute> vInit = li.getVInit())
      spec.vInit = getParam(*vInit);
    return true;
  };
  auto plif = [&](auto plif) {
    spec.model = NeuronModel::PLIF;
    spec.plifWeightSize =
        cast<ShapedType>(plif.getW().getType()).getNumElements();
    spec.decayInput = plif.getDecayInput();
    // k and c come from w in the kernel.
    spec.c = getScalar(1.0);
    spec.vLeak = getParam(plif.getVLeak());
    readFire(plif, spec);
    return true;
  };
  auto cuba = [&](auto cuba) {
    spec.model = NeuronModel::CubaLIF;
    spec.kSyn = getParam(cuba.getKSyn());
    spec.cSyn = getParam(cuba.getCSyn());
    if (std::optional<Attribute> iInit = cuba.getIInit())
      spec.iInit = getParam(*iInit);
    spec.k = getParam(cuba.getK());
    spec.c = getParam(cuba.getC());
    spec.vLeak = getParam(cuba.getVLeak());
    readFire(cuba, spec);
    return true;
  };
  bool known = llvm::TypeSwitch<Operation *, bool>(op)
                   .Case<LIFOp, LIFStepOp>(lif)
                   .Case<IFOp, IFStepOp>(ifNeuron)
                   .Case<LIOp, LIStepOp>(li)
                   .Case<PLIFOp, PLIFStepOp>(plif)
                   .Case<CubaLIFOp, CubaLIFStepOp>(cuba)
                   .Default([](Operation *) { return false; });
  if (!known) {
    why = "no kernel generator for this neuron model";
    return std::nullopt;
  }
  spec.chainsState =
      !step && (!getInitState(op).empty() || !getFinalState(op).empty());
  if (spec.learnsLeak() &&
      (spec.plifWeightSize != 1 && spec.plifWeightSize != spec.numFeatures)) {
    why = "snn.plif's weight has neither 1 nor one value per feature";
    return std::nullopt;
  }
  if (spec.learnsLeak() && spec.chainsState) {
    why = "a plif layer split in time has no generated kernel yet";
    return std::nullopt;
  }
  if (op->hasAttr(kFusedPoolAttrName)) {
    spec.pool = getFusedPool(op);
    int64_t rank = type.getRank();
    int64_t last = rank - 1;
    if (spec.pool && spec.pool->channelsLast)
      spec.channels = type.getDimSize(last--);
    spec.rows = last >= 3 ? type.getDimSize(last - 1) : 0;
    spec.cols = type.getDimSize(last);
    if (!spec.pool || !spec.spikes() || spec.learnsLeak() ||
        spec.chainsState || spec.rows <= 0 ||
        spec.rows % spec.pool->kh != 0 ||
        spec.cols % spec.pool->kw != 0) {
      why = "its snn.fused_pool is not {kind = avg|sum, kernel = [KH, KW]} "
            "of a lif, if or cuba_lif layer (not split in time) with windows "
            "that tile the spiking [.., H, W] (channels_last: [.., H, W, C]) "
            "map (rerun --snn-fuse)";
      return std::nullopt;
    }
  }
  if (op->hasAttr(kFusedBatchNormAttrName)) {
    spec.bn = getFusedBatchNorm(op);
    int64_t rank = type.getRank();
    if (!spec.bn || step || spec.chainsState || spec.learnsLeak() ||
        spec.bn->spatialRank + 3 > rank) {
      why = "its snn.fused_batch_norm is not {spatial_rank, eps} of a "
            "multi-step lif, if, li or cuba_lif layer whose input has "
            "[T, B, ..., C, spatial...] dims (rerun --snn-fuse)";
      return std::nullopt;
    }
    // The geometry of the batch norm's own kernels, for its scratch.
    BatchNormGeometry g =
        makeBatchNormKernelSpecs(type.getShape(), spec.bn->spatialRank,
                                 /*training=*/true, /*backward=*/false)
            .front()
            .batchNorm;
    spec.bnChannels = g.channels;
    spec.bnSpatial = g.spatial;
    spec.bnScratchSize = getBatchNormScratchElements(g);
    spec.bnTermOffset = getBatchNormTermOffset(g);
    if (spec.bn->backward) {
      spec.bnPlaneSlots =
          getBatchNormBackwardPlaneSlots(g.spatial, spec.getWidth());
      int64_t plane = g.channels * g.spatial;
      if (!spec.bnPlaneSlots || spec.numNeurons % plane != 0) {
        why = "its snn.fused_batch_norm has backward = true but a thread's "
              "neurons span two channels (rerun --snn-fuse)";
        return std::nullopt;
      }
      spec.bnSegment =
          std::min(spec.bnPlaneSlots, kBatchNormBackwardMaxSegment);
      // Runs of a plane's slots, for each of the step's planes of c.
      g.parts = spec.numNeurons / plane * (spec.bnPlaneSlots / spec.bnSegment);
      spec.bnParts = g.parts;
      spec.bnBwdScratchSize = getBatchNormScratchElements(g);
    }
  }
  spec.rowSpikeBits = op->hasAttr(kSpikeRowBitsAttrName);
  if (spec.rowSpikeBits &&
      (step || !isa<LIFOp, IFOp>(op) || spec.pool || spec.bn ||
       spec.chainsState || spec.numFeatures % 32 != 0)) {
    why = "its snn.spike_row_bits needs a multi-step lif or if layer without "
          "pooling, batch norm or a time split whose rows hold a multiple of "
          "32 neurons";
    return std::nullopt;
  }
  spec.countsSpikes = op->hasAttr(kFusedSpikeCountAttrName);
  spec.countsGrad = op->hasAttr(kFusedGradCountAttrName);
  if ((spec.countsSpikes || spec.countsGrad) &&
      (step || !spec.spikes() || spec.pool || spec.chainsState ||
       (spec.countsGrad && spec.fusesBatchNormBackward()))) {
    why = "its snn.fused_spike_count or snn.fused_grad_count is on a layer "
          "whose kernels do not write per-neuron spikes and gradients (a "
          "readout, a pooled layer, a layer split in time, a backward that "
          "sums its batch norm's gradient; rerun --snn-fuse)";
    return std::nullopt;
  }
  spec.gradRowBits = op->hasAttr(kGradRowBitsAttrName);
  if (spec.gradRowBits && (!spec.countsGrad || spec.numFeatures % 32 != 0 ||
                           spec.fusesBatchNormBackward())) {
    why = "its snn.grad_row_bits needs a layer that counts its input "
          "gradient (snn.fused_grad_count) and whose rows hold a multiple of "
          "32 neurons";
    return std::nullopt;
  }
  spec.timeMeanScale = getFusedTimeScale(op, kFusedTimeMeanAttrName);
  spec.gradBroadcastScale = getFusedTimeScale(op, kFusedTimeBroadcastAttrName);
  if ((spec.timeMeanScale || spec.gradBroadcastScale) &&
      (step || spec.pool || spec.chainsState)) {
    why = "its snn.fused_time_mean or snn.fused_time_broadcast is on a step "
          "op, a pooled layer or a layer split in time, whose kernels do not "
          "scan the whole sequence of per-neuron outputs (rerun --snn-fuse)";
    return std::nullopt;
  }
  if (op->hasAttr(kFusedLinearGradAttrName)) {
    spec.linearGradOutputs = getFusedLinearGradOutputs(op);
    if (!spec.linearGradOutputs || step || !spec.spikes() ||
        !spec.gradBand || spec.pool ||
        spec.fusesBatchNormBackward() || spec.chainsState ||
        spec.numFeatures % kFusedLinearGradFeatureMultiple != 0) {
      why = "its snn.fused_linear_grad is not a number of outputs in [1, " +
            std::to_string(kMaxFusedLinearGradOutputs) +
            "] of a multi-step spiking layer with a finite grad_band, "
            "without pooling, a batch norm backward "
            "or a time split whose rows hold a multiple of 8 neurons (a GPU "
            "thread's 4, a CPU thread's 8 share gy's row; rerun "
            "--snn-fuse)";
      return std::nullopt;
    }
  }
  return spec;
}

LogicalResult kernelgen::checkStorageSupported(func::FuncOp func,
                                               const NeuronStorage &storage) {
  bool supported = true;
  forEachKernelOp(
      func,
      [&](Operation *op, unsigned, const NeuronSpec &spec) {
        if (spec.storage.recomputeChunk > 0 && spec.hasSynapse()) {
          op->emitError()
              << "recompute-chunk supports lif, if and li layers; a cuba_lif "
                 "layer would need its synaptic current checkpointed too";
          supported = false;
        }
        if (spec.timeMeanScale && spec.packsSpikes()) {
          op->emitError()
              << "spike-bits packs the spikes that the layer's fused time "
                 "mean (snn.fused_time_mean) adds up; lower without "
                 "spike-bits or run --snn-fuse=\"time-mean=false\"";
          supported = false;
        }
        if (spec.storage.recomputeChunk > 0 && spec.chainsState) {
          op->emitError()
              << "recompute-chunk does not support a layer split in time "
                 "(init/final state): its first chunk would need the "
                 "initial state; compile without recompute-chunk";
          supported = false;
        }
      },
      storage);
  return success(supported);
}

SmallVector<const NeuronParam *> NeuronSpec::getTensorParams() const {
  SmallVector<const NeuronParam *> params;
  for (const NeuronParam *p :
       {&k, &c, &vLeak, &vTh, &vReset, &vInit, &kSyn, &cSyn, &iInit})
    if (p->isTensor())
      params.push_back(p);
  return params;
}

/// The ABI of a step kernel (docs/artifact-format.md): the op's fixed
/// inputs, its outputs, then its other inputs in the manifest's order.
static SmallVector<Type> getStepArgTypes(const NeuronSpec &spec,
                                         KernelKind kind, MLIRContext *ctx) {
  Type f32 = Float32Type::get(ctx);
  Type flat = MemRefType::get({spec.numNeurons}, f32);
  Type weight = MemRefType::get({spec.plifWeightSize}, f32);
  unsigned states = spec.getNumStateTensors();
  SmallVector<Type> types;
  if (kind == KernelKind::Backward) {
    // gS, [gI'], gV', H; gX, [gI], gV, [gw]; [V before the step, w]
    types.append(2 * (states + 1) + 1, flat);
    if (spec.learnsLeak())
      types.append({weight, flat, weight});
  } else {
    // x, [i], v; s, [i', v' (spiking)], [h]; [w], [addend]
    types.append(1 + states + 1 + (spec.spikes() ? states : 0), flat);
    if (kind == KernelKind::ForwardSaveH)
      types.push_back(flat);
    if (spec.learnsLeak())
      types.push_back(weight);
    if (spec.stepAddend)
      types.push_back(flat);
  }
  types.append(spec.getTensorParams().size(),
               MemRefType::get({spec.numFeatures}, f32));
  return types;
}

SmallVector<Type> kernelgen::getKernelArgTypes(const NeuronSpec &spec,
                                               KernelKind kind,
                                               MLIRContext *ctx) {
  if (spec.step)
    return getStepArgTypes(spec, kind, ctx);
  Type f32 = Float32Type::get(ctx);
  int64_t size = spec.numSteps * spec.numNeurons;
  Type flat = MemRefType::get({size}, f32);
  Type h = MemRefType::get(
      {size}, spec.storage.bf16H ? Type(BFloat16Type::get(ctx)) : f32);
  // A pooled layer's spikes, and their gradient, are [T, windows].
  Type s = flat, gs = flat;
  if (spec.pool)
    s = gs = MemRefType::get({spec.numSteps * spec.getNumWindows()}, f32);
  else if (spec.writesRowBits(kind))
    s = MemRefType::get({size / 8}, IntegerType::get(ctx, 8));
  else if (spec.packsSpikes())
    s = MemRefType::get(
        {spec.getNumSpikeWords() * spec.numNeurons},
        IntegerType::get(ctx, static_cast<unsigned>(spec.getSpikeWordBits())));
  Type param = MemRefType::get({spec.numFeatures}, f32);
  SmallVector<Type> types;
  Type ckpt = MemRefType::get({spec.getCheckpointSize()}, f32);
  switch (kind) {
  case KernelKind::Forward: // x, s (pooled: x, p)
    types = {flat, s};
    break;
  case KernelKind::ForwardSaveH: // x, s, h | checkpoints, i_saved
    types = {flat, s, spec.recomputes() ? ckpt : h};
    break;
  case KernelKind::Backward: // gs, h, gx, i_saved | gs, x, checkpoints, gx
    // With a fused thin linear, gs is its gy [T, B, C]; with a fused time
    // broadcast, the gradient of the time mean [N].
    if (spec.readsBroadcastGrad(kind))
      gs = MemRefType::get({spec.numNeurons}, f32);
    else if (spec.readsLinearGrad(kind))
      gs = MemRefType::get(
          {size / spec.numFeatures * spec.linearGradOutputs}, f32);
    types = spec.recomputes() ? SmallVector<Type>{gs, flat, ckpt, flat}
                              : SmallVector<Type>{gs, h, flat};
    if (spec.learnsLeak()) // gw
      types.push_back(MemRefType::get({spec.plifWeightSize}, f32));
    break;
  case KernelKind::ForwardRecord: // x, s, h, v (f32)
    types = {flat, s, flat, flat};
    break;
  }
  if ((kind == KernelKind::ForwardSaveH || kind == KernelKind::Backward) &&
      spec.hasSynapse())
    types.push_back(flat);
  // Chained state: initial state (forward) or final-state gradient
  // (backward) in, then final state or initial-state gradient out.
  if (spec.chainsState)
    types.append(2 * spec.getNumStateTensors(),
                 MemRefType::get({spec.numNeurons}, f32));
  if (kind == KernelKind::Backward && spec.fusesBatchNormBackward() &&
      !spec.recomputes()) {
    // x, saved_mean, saved_invstd, the partial sums.
    types.push_back(flat);
    types.append(2, MemRefType::get({spec.bnChannels}, f32));
    types.push_back(MemRefType::get({spec.bnBwdScratchSize}, f32));
  } else if (unsigned bnArgs = spec.getNumBatchNormArgs(kind)) {
    types.append(4, MemRefType::get({spec.bnChannels}, f32));
    if (bnArgs >= 5)
      types.push_back(MemRefType::get({spec.bnScratchSize}, f32));
    // A recomputing backward's partial sums.
    if (bnArgs == 6)
      types.push_back(MemRefType::get({spec.bnBwdScratchSize}, f32));
  }
  // plif's weight comes first among the parameters.
  if (spec.learnsLeak())
    types.push_back(MemRefType::get({spec.plifWeightSize}, f32));
  types.append(spec.getTensorParams().size(), param);
  if (spec.readsLinearGrad(kind)) // W [C, F]
    types.push_back(MemRefType::get(
        {spec.linearGradOutputs * spec.numFeatures}, f32));
  if (spec.writesTimeMean(kind))
    types.push_back(MemRefType::get({spec.numNeurons}, f32));
  if (spec.writesGradBits(kind))
    types.push_back(MemRefType::get({size / 8}, IntegerType::get(ctx, 8)));
  if (spec.countsOutput(kind)) {
    types.push_back(MemRefType::get({1}, IntegerType::get(ctx, 32)));
    types.push_back(MemRefType::get({2}, IntegerType::get(ctx, 32)));
  }
  return types;
}

FailureOr<NeuronStorage> kernelgen::parseNeuronStorage(Operation *module,
                                                       StringRef hDType,
                                                       bool spikeBits,
                                                       int64_t recomputeChunk) {
  NeuronStorage storage;
  storage.spikeBits = spikeBits;
  if (recomputeChunk < 0 || recomputeChunk > kMaxRecomputeChunk)
    return module->emitError()
           << "recompute-chunk must be in [0, " << kMaxRecomputeChunk
           << "] (0: save H), not "
           << recomputeChunk;
  storage.recomputeChunk = recomputeChunk;
  if (hDType == "bf16")
    storage.bf16H = true;
  else if (hDType != "f32")
    return module->emitError()
           << "h-dtype must be f32 or bf16, not '" << hDType << "'";
  return storage;
}

static StringRef getModelName(NeuronModel model) {
  switch (model) {
  case NeuronModel::LIF:
    return "lif";
  case NeuronModel::IF:
    return "if";
  case NeuronModel::LI:
    return "li";
  case NeuronModel::CubaLIF:
    return "cuba_lif";
  case NeuronModel::PLIF:
    return "plif";
  }
  llvm_unreachable("unknown neuron model");
}

std::string kernelgen::getKernelName(StringRef funcName, unsigned index,
                                     const NeuronSpec &spec, KernelKind kind) {
  std::string name = "snn_";
  for (char ch : funcName)
    name += llvm::isAlnum(ch) ? ch : '_';
  name += "_" + std::to_string(index) + "_" + getModelName(spec.model).str();
  if (spec.step)
    name += "_step";
  switch (kind) {
  case KernelKind::Forward:
    return name + "_fwd";
  case KernelKind::ForwardSaveH:
    return name + "_fwd_h";
  case KernelKind::Backward:
    return name + "_bwd";
  case KernelKind::ForwardRecord:
    return name + "_fwd_rec";
  }
  llvm_unreachable("unknown kernel kind");
}

SmallVector<KernelKind> kernelgen::getKernelKinds(bool saveH, bool backward) {
  SmallVector<KernelKind> kinds{saveH ? KernelKind::ForwardSaveH
                                      : KernelKind::Forward};
  if (backward)
    kinds.push_back(KernelKind::Backward);
  return kinds;
}
