//===- SpikeBits.cpp - saved spikes as bits (--snn-compile spike-bits) ----===//
//
// A spiking layer's output that training keeps only for the weight
// gradients of the layers it feeds (the x of linear_bwd / conv2d_bwd) is
// saved as bits: a generated pack_bits kernel right after the neuron op
// writes 32 spikes per u32 word into a `saved` tensor, and the float spikes
// die after their forward readers. Right before each weight-gradient op, a
// generated unpack_bits kernel rebuilds the floats into a scratch tensor
// that lives only until that op, so one arena slot serves every layer in
// turn (the runtime's memory plan). Spikes are 0/1: the gradients are those
// of the float module, bit for bit.
// The event-driven weight gradient (EventLinearBackward.cpp) reads such
// bits directly: the spikes it reads are packed whatever spike-bits says,
// and an event-driven network input gets occupancy bits in the backward.
//
//===----------------------------------------------------------------------===//

#include "ManifestBuilder.h"

#include "snn/Dialect/SNN/IR/FusedPool.h"
#include "snn/Dialect/SNN/IR/SNNOps.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::snn;
using llvm::json::Array;
using llvm::json::Object;

static constexpr int64_t kSpikesPerWord = 32;

/// Whether every use of `value` (and of its flatten views) is a forward op
/// (before `loss` in its block), the neuron_bwd that names the layer, or the
/// spike input x of a weight-gradient op; `weightGrads` counts the latter.
static bool onlyForwardOrWeightGrads(Value value, Operation *loss,
                                     unsigned &weightGrads) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<LinearBwdOp, Conv2DBwdOp>(user) && use.getOperandNumber() == 1) {
      ++weightGrads;
      continue;
    }
    if (isa<NeuronBwdOp>(user)) // it reads the layer's saved H
      continue;
    if (user->getBlock() != loss->getBlock() || !user->isBeforeInBlock(loss))
      return false;
    if (auto flatten = dyn_cast<FlattenOp>(user))
      if (!onlyForwardOrWeightGrads(flatten.getResult(), loss, weightGrads))
        return false;
  }
  return true;
}

bool ManifestBuilder::savesSpikesAsBits(Operation *neuron) const {
  auto iface = dyn_cast<NeuronOpInterface>(neuron);
  if (!spikeBits || !iface || iface.isStepForm() || isa<LIOp>(neuron))
    return false;
  Block *block = neuron->getBlock();
  auto loss = llvm::find_if(*block, [](Operation &op) {
    return op.getName().getDialectNamespace() == "snn" &&
           op.getName().stripDialect().starts_with("loss_");
  });
  if (loss == block->end())
    return false;
  unsigned weightGrads = 0;
  return onlyForwardOrWeightGrads(neuron->getResult(0), &*loss, weightGrads) &&
         weightGrads > 0;
}

/// `value` or the value it is a flatten view of.
static Value stripFlatten(Value value) {
  while (auto flatten = value.getDefiningOp<FlattenOp>())
    value = flatten.getInput();
  return value;
}

/// Whether a use of `value` (or of its flatten views) is the input x of an
/// event-driven linear_bwd (`backward`) or linear (forward).
static bool readByEventLinear(Value value, bool backward) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto flatten = dyn_cast<FlattenOp>(user)) {
      if (readByEventLinear(flatten.getResult(), backward))
        return true;
      continue;
    }
    if (backward) {
      auto bwd = dyn_cast<LinearBwdOp>(user);
      if (bwd && bwd.getEventDriven() && use.getOperandNumber() == 1)
        return true;
    } else if (auto linear = dyn_cast<LinearOp>(user)) {
      if (linear.getEventDriven() && use.getOperandNumber() == 0)
        return true;
    }
  }
  return false;
}

bool ManifestBuilder::feedsEventWeightGrad(Operation *neuron) const {
  // Only with spike-bits: it saves the float spikes' memory; the default
  // row lists read only each event's nonzeros. A neuron fused with its
  // pooling writes pooled spikes, not bits' worth.
  auto iface = dyn_cast<NeuronOpInterface>(neuron);
  if (!spikeBits || !iface || iface.isStepForm() || isa<LIOp>(neuron) ||
      neuron->hasAttr(kFusedPoolAttrName))
    return false;
  return readByEventLinear(neuron->getResult(0), /*backward=*/true);
}

int64_t ManifestBuilder::emitPackBits(int64_t x, Phase phase, StringRef role,
                                      bool occupancy) {
  Object &s = tensor(x);
  int64_t elements = 1;
  for (const llvm::json::Value &d : *s.getArray("shape"))
    elements *= *d.getAsInteger();
  int64_t words = llvm::divideCeilSigned(elements, kSpikesPerWord);
  int64_t bits = addTensor(Object{{"name", tensorName(x) + ".bits"},
                                  {"shape", Array{words}},
                                  {"role", role},
                                  {"dtype", "u32"}});
  OpKernelSpec spec;
  spec.kind = OpKernelKind::PackBits;
  spec.sizes = {words};
  spec.packedElements = elements;
  Object pack{{"op", "pack_bits"}, {"in", Array{x}}, {"out", Array{bits}}};
  if (occupancy)
    pack["occupancy"] = true;
  Array of{std::move(pack)};
  emit(phase, makeKernelOp(spec, Array{x, bits}, Array{x}, Array{bits},
                           std::move(of)));
  return bits;
}

void ManifestBuilder::emitPackSpikes(int64_t spikes, bool dropFloats) {
  packedSpikes[spikes] =
      emitPackBits(spikes, Phase::TrainForward, "saved", /*occupancy=*/false);
  if (dropFloats)
    bitsOnlySpikes.insert(spikes);
}

std::optional<int64_t> ManifestBuilder::getEventGradBits(Value x,
                                                         bool &values,
                                                         bool pack) {
  values = false;
  Value source = stripFlatten(x);
  auto found = ids.find(source);
  if (found == ids.end())
    return std::nullopt;
  int64_t id = found->second;
  if (auto packed = packedSpikes.find(id); packed != packedSpikes.end())
    return packed->second;
  // The network input, when the forward layer on it is event-driven (its
  // input is sparse: input-is-spikes). Only a promise: the bits say where
  // x is nonzero and the kernel reads the values there.
  // Only with spike-bits too: on an H100 this form was slower than
  // event_linear on the input's float rows (SHD fc1 at 1%: 1047 vs 609 us).
  auto arg = dyn_cast<BlockArgument>(source);
  if (!spikeBits || !arg || arg.getArgNumber() != 0 ||
      !isa<func::FuncOp>(arg.getOwner()->getParentOp()) ||
      !readByEventLinear(source, /*backward=*/false))
    return std::nullopt;
  values = true;
  if (!pack) {
    auto packed = occupancyBits.find(id);
    return packed != occupancyBits.end() ? packed->second : -1;
  }
  auto [it, added] = occupancyBits.try_emplace(id, 0);
  if (added)
    it->second = emitPackBits(id, Phase::Backward, "activation",
                              /*occupancy=*/true);
  return it->second;
}

int64_t ManifestBuilder::unpackSpikesFor(Operation *op, Value x, int64_t xId) {
  // x is the neuron's spikes or a flatten view of them.
  auto found = ids.find(stripFlatten(x));
  if (found == ids.end() || !bitsOnlySpikes.contains(found->second))
    return xId;
  auto packed = packedSpikes.find(found->second);
  int64_t words = packed->second;
  Object &view = tensor(xId);
  int64_t elements = 1;
  for (const llvm::json::Value &d : *view.getArray("shape"))
    elements *= *d.getAsInteger();
  int64_t scratch = addTensor(Object{
      {"shape", Array(*view.getArray("shape"))}, {"role", "activation"}});
  OpKernelSpec spec;
  spec.kind = OpKernelKind::UnpackBits;
  spec.sizes = {*tensor(words).getArray("shape")->front().getAsInteger()};
  spec.packedElements = elements;
  Array of{Object{{"op", "unpack_bits"}, {"in", Array{words}}, {"out", Array{scratch}}}};
  emit(Phase::Backward, makeKernelOp(spec, Array{words, scratch},
                                     Array{words}, Array{scratch},
                                     std::move(of)));
  return scratch;
}

void ManifestBuilder::addTrainSpikeTensors() {
  for (llvm::json::Value &entry : spikeLayers) {
    Object &layer = *entry.getAsObject();
    auto train = trainSpikes.find(*layer.getString("name"));
    if (train == trainSpikes.end())
      continue;
    auto [spikes, bits] = train->second;
    // The host reads it after train_forward: only tensors that live on into
    // the backward (saved themselves or through a view) are still there.
    auto saved = [&](const Object &t) {
      return t.getString("role") == StringRef("saved");
    };
    bool kept = saved(tensor(spikes)) || llvm::any_of(tensors, [&](const Object &t) {
      return t.getInteger("alias_of") == spikes && saved(t);
    });
    if (bits >= 0)
      layer["train_bits"] = bits;
    else if (kept)
      layer["train_tensor"] = spikes;
  }
}
