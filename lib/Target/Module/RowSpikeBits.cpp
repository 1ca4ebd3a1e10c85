//===- RowSpikeBits.cpp - spikes written as row bits ----------------------===//
//
// RowSpikeBits.h. The same predicate decides for the kernel generator
// (NeuronKernels.cpp marks the layer's copy) and for the manifest
// (NeuronSerialization of the layer, compact_rows of its readers).
//
//===----------------------------------------------------------------------===//

#include "RowSpikeBits.h"

#include "snn/Conversion/NeuronToGPU/EventLinearTiles.h"
#include "snn/Conversion/NeuronToGPU/SparseKernels.h"
#include "snn/Dialect/SNN/IR/FusedBatchNorm.h"
#include "snn/Dialect/SNN/IR/FusedCount.h"
#include "snn/Dialect/SNN/IR/FusedLinearGrad.h"
#include "snn/Dialect/SNN/IR/FusedPool.h"
#include "snn/Dialect/SNN/IR/SNNOps.h"

using namespace mlir;
using namespace mlir::snn;

static constexpr int64_t kBitsPerWord = 32;

/// The elements of a tensor value, dynamic dims taken as `batch`; 0 when
/// unknown.
static int64_t getElements(Value value, int64_t batch) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return 0;
  int64_t elements = 1;
  for (int64_t d : type.getShape()) {
    if (ShapedType::isDynamic(d)) {
      if (batch <= 0)
        return 0;
      d = batch;
    }
    elements *= d;
  }
  return elements;
}

/// The event path always runs (no dense GEMM reads the floats).
static bool alwaysEventDriven(std::optional<APFloat> crossover,
                              int64_t elements) {
  return crossover && elements > 0 &&
         getEventPathLimit(crossover->convertToDouble(), elements) >= elements;
}

/// Whether the weight gradient gw [N, K] over M events fits
/// event_weight_grad_lists (its shared accumulator rows).
static bool hasListsKernel(int64_t n, int64_t m, int64_t k) {
  return hasEventListsKernel(
      makeEventKernelSpec(OpKernelKind::EventLinearLists, n, m, k));
}

/// Whether event_linear's per-row GPU form lists a row of x [., K] as bits
/// for w [N, K]: the row's list fits one chunk (getEventRowLayout).
static bool hasRowBitsEventLinear(int64_t k, int64_t n, int64_t rows) {
  std::optional<EventRowLayout> layout =
      getEventRowLayout(makeEventKernelSpec(OpKernelKind::EventLinear, rows, k, n));
  return layout && layout->chunks == 1;
}

bool mlir::snn::readsThinWeightGradBits(LinearBwdOp bwd) {
  auto w = cast<RankedTensorType>(bwd.getWeight().getType());
  return !bwd.getEventDriven() && !bwd.getHasBias() &&
         (!bwd.getNeedGx() || bwd->hasAttr(kGxInNeuronBwdAttrName)) &&
         w.getDimSize(0) <= kMaxThinOutputs &&
         w.getDimSize(1) % kBitsPerWord == 0;
}

bool mlir::snn::writesSpikeRowBits(Operation *neuron,
                                   const RowSpikeBitsOptions &options) {
  if (!options.enabled || options.sharedMemoryLimit <= 0 || options.spikeBits)
    return false;
  auto iface = dyn_cast<NeuronOpInterface>(neuron);
  if (!iface || !isa<LIFOp, IFOp>(neuron) || iface.isStepForm() ||
      neuron->hasAttr(kFusedPoolAttrName) ||
      neuron->hasAttr(kFusedBatchNormAttrName) ||
      !neuron->hasAttr(kFusedSpikeCountAttrName))
    return false;
  Value spikes = neuron->getResult(0);
  auto type = dyn_cast<RankedTensorType>(spikes.getType());
  if (!type || type.getRank() != 3 || ShapedType::isDynamic(type.getDimSize(2)))
    return false;
  int64_t k = type.getDimSize(2);
  int64_t elements = getElements(spikes, options.batch);
  if (k % kBitsPerWord != 0 || elements <= 0)
    return false;
  bool backward = false;
  for (OpOperand &use : spikes.getUses()) {
    Operation *user = use.getOwner();
    if (auto linear = dyn_cast<LinearOp>(user)) {
      // compact_rows + event_linear_tiles, or a thin layer's per-row
      // event_linear, read the bits.
      auto w = cast<RankedTensorType>(linear.getWeight().getType());
      int64_t n = w.getDimSize(0);
      if (use.getOperandNumber() != 0 ||
          !alwaysEventDriven(linear.getEventDriven(), elements) ||
          (!runsAsEventTiles(k, n, options.sharedMemoryLimit) &&
           !hasRowBitsEventLinear(k, n, elements / k)))
        return false;
      continue;
    }
    if (auto bwd = dyn_cast<NeuronBwdOp>(user)) {
      if (&use != &bwd.getForwardMutable())
        return false;
      backward = true;
      continue;
    }
    if (auto bwd = dyn_cast<LinearBwdOp>(user)) {
      if (use.getOperandNumber() != 1 || bwd.getHasBias())
        return false;
      // A thin layer's weight gradient alone: thin_weight_grad_bits.
      if (readsThinWeightGradBits(bwd))
        continue;
      // event_weight_grad_lists over the forward's row lists (the
      // backward's own compact_rows reads the bits as well).
      auto w = cast<RankedTensorType>(bwd.getWeight().getType());
      if (!alwaysEventDriven(bwd.getEventDriven(),
                             getElements(bwd.getGradOutput(), options.batch)) ||
          !hasListsKernel(w.getDimSize(0), elements / k, k))
        return false;
      continue;
    }
    return false;
  }
  return backward;
}

bool mlir::snn::writesGradRowBits(Operation *neuron,
                                  const RowSpikeBitsOptions &options) {
  if (!options.gradBits || options.spikeBits ||
      !neuron->hasAttr(kFusedGradCountAttrName))
    return false;
  auto iface = dyn_cast<NeuronOpInterface>(neuron);
  NeuronBwdOp bwd = getNeuronBackward(neuron);
  if (!iface || iface.isStepForm() || !bwd)
    return false;
  SmallVector<LinearBwdOp> readers =
      getEventLinearBwdReaders(bwd.getGradInput());
  if (readers.size() != 1)
    return false;
  LinearBwdOp reader = readers.front();
  auto w = cast<RankedTensorType>(reader.getWeight().getType());
  int64_t n = w.getDimSize(0), k = w.getDimSize(1);
  int64_t elements = getElements(reader.getGradOutput(), options.batch);
  if (n <= 0 || n % kBitsPerWord != 0 || elements <= 0 || elements % n != 0)
    return false;
  // serializeEventLinearBackward's choice of the lists form.
  return hasListsKernel(n, elements / n, k);
}
