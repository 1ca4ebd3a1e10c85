//===- ManifestBuilder.h - manifest.json from the multi-step IR -*- C++ -*-===//

#ifndef SNN_LIB_TARGET_MODULE_MANIFESTBUILDER_H
#define SNN_LIB_TARGET_MODULE_MANIFESTBUILDER_H

#include "RowSpikeBits.h"
#include "SafetensorsWriter.h"

#include "snn/Conversion/NeuronToGPU/OpKernels.h"
#include "snn/Dialect/SNN/IR/SNNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::snn {

/// The op's name without the "snn." prefix: its manifest `op`.
StringRef getOpKind(Operation *op);

/// `<model>_bwd` or `neuron_bwd`: the BPTT of a forward neuron op.
bool isNeuronBackwardOp(Operation *op);

/// A shape as a JSON array.
llvm::json::Array toArray(ArrayRef<int64_t> values);

/// The integers of a JSON array (a shape).
SmallVector<int64_t> toInts(const llvm::json::Array &array);

/// The generated kernels of one neuron op (docs/artifact-format.md).
struct NeuronKernelRef {
  std::string fwd;      ///< saves H: train_forward
  std::string fwdInfer; ///< no saved outputs: infer
  std::string fwdRecord; ///< also H and V in f32: infer, recording state
  std::string bwd;
  int64_t block = 0, grid = 0;
  /// Partial sums per channel of the batch norm backward that bwd writes
  /// (snn.fused_batch_norm with backward = true); 0: none.
  int64_t batchNormParts = 0;
  /// The grid of bwd.
  int64_t bwdGrid = 0;
  /// Element type of the saved H that fwd writes and bwd reads.
  std::string hDType = "f32";
};
using NeuronKernelMap = llvm::DenseMap<Operation *, NeuronKernelRef>;

/// compact_rows' outputs: the row lists' columns tensor and, for inputs
/// that are not spikes, their values tensor.
struct RowLists {
  int64_t columns;
  std::optional<int64_t> values;
};

/// Builds the manifest of a compiled module: one tensor table shared by the
/// programs, `infer` from `@forward`, `train_forward`, `backward` and `update`
/// from `@train_step`. Parameters are one tensor per name across programs.
class ManifestBuilder {
public:
  /// `batch` replaces dynamic dimensions (0: none allowed).
  /// `savedHBf16`: training stores the H of multi-step neuron layers in
  /// bf16 (the compiled kernels of `kernels` must have been generated so).
  /// The elementwise and optimizer ops become `kernel` ops whose kernels
  /// `opKernels` names (the caller generates them after the manifest).
  ManifestBuilder(int64_t batch, const NeuronKernelMap &kernels,
                  OpKernelRegistry &opKernels, bool savedHBf16 = false,
                  int64_t recomputeChunk = 0, bool spikeBits = false)
      : batch(batch), kernels(kernels), opKernels(opKernels),
        savedHBf16(savedHBf16), recomputeChunk(recomputeChunk),
        spikeBits(spikeBits) {}

  /// The dynamic shared memory a GPU block may use on every chip of the
  /// module (getSharedMemoryLimit); 0, the default, for a module without
  /// GPU kernels: event_linear_tiles is not used.
  void setSharedMemoryLimit(int64_t bytes) { sharedMemoryLimit = bytes; }
  /// Which layers write their training spikes as row bits (RowSpikeBits.h).
  void setRowSpikeBits(const RowSpikeBitsOptions &options) {
    rowBitsOptions = options;
  }

  /// The functions are one rank's share of a time split (--snn-split-time)
  /// of `totalSteps` steps: the module's input and output keep all steps,
  /// a `time_range` op takes the rank's steps of the input and a
  /// `gather_time` op puts every rank's output steps together.
  void setTimeSplit(int64_t totalSteps) { splitSteps = totalSteps; }

  LogicalResult addInferProgram(func::FuncOp forward);
  LogicalResult addTrainPrograms(func::FuncOp trainStep);
  /// Adds the `evaluate` program (the loss and correct count of the
  /// output against labels, no gradient) and its tensors; after the other
  /// programs (it reads the training step's loss kind), before the op
  /// kernels are generated.
  void addEvaluateProgram();

  /// The manifest; `kernelFiles` maps "sm_80"/"ptx" to file names.
  llvm::json::Object finish(const std::map<std::string, std::string> &kernelFiles);

  /// init.safetensors: imported parameter values and per-neuron constants.
  const SafetensorsWriter &getInitFile() const { return initFile; }

private:
  enum class Phase { Infer, TrainForward, Backward, Update };

  /// What backward needs of a forward neuron op.
  struct NeuronRecord {
    llvm::json::Object attrs; ///< model, parameters, options
    SmallVector<int64_t> paramInputs;
    std::optional<int64_t> plifWeight;
    int64_t savedH = -1, savedI = -1;
    /// With recompute: the layer's input, which the backward reads.
    int64_t input = -1;
    Operation *op = nullptr;
    /// The batch norm whose backward's sums the layer's backward computes
    /// (snn.fused_batch_norm with backward = true), and its input x.
    Operation *batchNormBackward = nullptr;
    int64_t batchNormInput = -1;
    /// With recompute and a fused batch norm (then `input` is the batch
    /// norm's x): that batch norm, whose training inputs the backward reads
    /// to normalize x again.
    Operation *recomputedBatchNorm = nullptr;
  };

  FailureOr<SmallVector<int64_t>> resolveShape(Operation *where, Type type);
  int64_t addTensor(llvm::json::Object tensor);
  llvm::json::Object &tensor(int64_t id) { return tensors[id]; }
  /// The tensor's name, or "%ID" when it has none (a base for the names of
  /// tensors derived from it: its bits, its row lists).
  std::string tensorName(int64_t id) {
    std::optional<StringRef> name = tensor(id).getString("name");
    return name ? name->str() : "%" + std::to_string(id);
  }
  /// The elements tensor `id` stands for: its shape's, 32 per word of a
  /// row-bits tensor.
  int64_t getValueElements(int64_t id) {
    int64_t elements = 1;
    for (const llvm::json::Value &d : *tensor(id).getArray("shape"))
      elements *= *d.getAsInteger();
    return rowBitsTensors.contains(id) ? elements * 32 : elements;
  }
  /// The row bits of a layer's training spikes `spikes` (a saved u32
  /// tensor of T x N / 32 words) as the value's tensor.
  FailureOr<int64_t> addRowBitsTensor(Operation *where, Value spikes,
                                      StringRef layer);
  FailureOr<int64_t> addValueTensor(Operation *where, Value value,
                                    StringRef role, std::string name = "");
  FailureOr<int64_t> lookup(Operation *user, Value value);
  /// A new tensor (of `role`) for every result of `op`, in order.
  FailureOr<llvm::json::Array> addResultTensors(Operation *op, StringRef role);
  FailureOr<int64_t> addParam(ParamOp op);
  int64_t addConstant(StringRef name, DenseFPElementsAttr values);
  FailureOr<llvm::json::Value> convertAttribute(Operation *op, StringRef name,
                                                Attribute attr);

  LogicalResult beginFunction(func::FuncOp func, bool training);
  LogicalResult serializeOp(Operation *op, Phase phase);
  LogicalResult serializeNeuron(Operation *op, Phase phase);
  LogicalResult serializeConstant(arith::ConstantOp op);
  LogicalResult serializeTimeLoop(TimeLoopOp loop, Phase phase);
  LogicalResult serializeNeuronStep(Operation *op, Phase phase);
  /// snn.neuron_step_bwd and snn.cuba_lif_step_bwd.
  LogicalResult serializeNeuronStepBackward(Operation *op);
  LogicalResult serializeNeuronBackward(Operation *op);
  LogicalResult serializeOptimizer(Operation *op);
  LogicalResult serializeGeneric(Operation *op, Phase phase);
  /// An `event_driven` snn.linear: density kernel, transposed weight,
  /// event-driven kernel (or compact_rows and event_linear_tiles over the
  /// weight itself), then the dense `linear` that skips itself when the
  /// event-driven path ran (EventLinear.cpp).
  LogicalResult serializeEventLinear(LinearOp linear, Phase phase);
  /// The tensors of an event-driven layer: x, w and the bias (when `bias`
  /// is not null) looked up, the output y added as a forward activation.
  struct LayerTensors {
    int64_t x, w, y;
    std::optional<int64_t> bias;
  };
  FailureOr<LayerTensors> addLayerTensors(Operation *op, Value x, Value w,
                                          Value bias, Value y);
  /// An `event_driven` snn.conv2d (the CPU only): density kernel,
  /// transposed weight, event_conv2d, then the dense `conv2d` that skips
  /// itself when the event-driven path ran (EventConv.cpp).
  LogicalResult serializeEventConv(Conv2DOp conv, Phase phase);
  /// An `event_driven` snn.conv2d_bwd (`json`: its dense op, not yet
  /// emitted): emits the density kernel of x, gy as [images, OH OW, O]
  /// (NCHW), event_conv2d_weight_grad into gwᵀ and its transpose into gw,
  /// and makes the dense op skip its weight gradient when that path ran
  /// (EventConv.cpp). A gradient accumulated into stays dense.
  void addEventConvWeightGrad(Conv2DBwdOp bwd, llvm::json::Object &json);
  /// An `event_driven` snn.linear_bwd: density kernel, event-driven gx,
  /// transposed gy, event-driven gw, then the dense `linear_bwd` that skips
  /// its GEMMs when the event-driven path ran (EventLinearBackward.cpp).
  /// A thin layer's weight gradient over its input's row bits
  /// (readsThinWeightGradBits): thin_weight_grad_bits writes per-segment
  /// parts, time_sum adds them into gw.
  LogicalResult serializeThinWeightGradBits(LinearBwdOp bwd, int64_t xBits);
  LogicalResult serializeEventLinearBackward(LinearBwdOp bwd);
  /// Emits compact_rows of x [rows, features] (under the decision): the
  /// row lists' columns and, with `values`, their values. With `density`
  /// (makeSpikeDensityOp's op for x, of a layer without a dense path) the
  /// kernel counts x into the decision too, in place of a spike_density
  /// kernel.
  RowLists
  emitCompactRows(Phase phase, int64_t x, int64_t rows, int64_t features,
                  bool values, int64_t decision,
                  const llvm::json::Object *density = nullptr);
  /// Emits y = x wᵀ + b as compact_rows of x [rows, in] then
  /// event_linear_tiles over w [out, in] when `out` is at least 256 and
  /// the tile fits the module's shared memory (EventLinearTiles.h), and
  /// returns the row lists; nothing (nothing emitted) when not, or the
  /// module has no GPU kernels. `density`: as emitCompactRows.
  std::optional<RowLists>
  emitEventLinearTiles(Phase phase, int64_t rows, int64_t in, int64_t out,
                       int64_t x, bool xValues, int64_t w,
                       std::optional<int64_t> bias, int64_t decision, int64_t y,
                       const llvm::json::Object *density);
  /// Whether row lists of the linear input `input` need its values: it is
  /// not the spikes (0 or 1) of a spiking layer.
  static bool listsNeedValues(Value input);
  /// The name of the event-driven layer of `weight` (its forward linear's
  /// snn.name, else the weight's name without ".weight"): the same for the
  /// forward and the backward, the key of calibration.json.
  std::string getEventLayerName(Operation *op, Value weight, int64_t wId);
  /// Emits the spike_density kernel op of an event-driven layer or
  /// backward: counts the nonzeros of `x` ([rows, features]) into
  /// `decision` and compares them with a new one-word `limit` tensor (the
  /// compile-time floor(crossover * elements); the runtime replaces it by
  /// the calibrated one for its device).
  void emitSpikeDensity(Phase phase, StringRef layer, StringRef direction,
                        double crossover, int64_t x, int64_t decision,
                        int64_t rows, int64_t features, bool denseFallback);
  /// The spike_density kernel op that emitSpikeDensity emits (its limit
  /// tensor added), not emitted.
  llvm::json::Object makeSpikeDensity(Phase phase, StringRef layer,
                                      StringRef direction, double crossover,
                                      int64_t x, int64_t decision,
                                      int64_t rows, int64_t features,
                                      bool denseFallback);
  /// That kernel op's spike_density op alone (an `of` entry; its limit
  /// tensor added), for a kernel that counts x besides other work.
  llvm::json::Object makeSpikeDensityOp(Phase phase, StringRef layer,
                                        StringRef direction, double crossover,
                                        int64_t x, int64_t decision,
                                        int64_t rows, int64_t features,
                                        bool denseFallback);
  /// A neuron op (`neuron` or `neuron_bwd` of `layerOp`) whose kernel
  /// counts its output `counted` for the event-driven `eventOp` (a linear,
  /// or a linear_bwd; snn.fused_spike_count / snn.fused_grad_count): adds
  /// the limit to `in`, the decision to `out` and "spike_count" to `json`
  /// (EventLinear.cpp, docs/artifact-format.md).
  LogicalResult addFusedCount(Operation *layerOp, Operation *eventOp,
                              Phase phase, int64_t counted,
                              llvm::json::Array &in, llvm::json::Array &out,
                              llvm::json::Object &json);
  /// The decision tensor ([2] i32) of an event-driven linear or linear
  /// backward: the one a neuron kernel writes for it, else a new one.
  int64_t getDecision(Operation *eventOp);
  /// The layer name of an event op whose weight may have no tensor yet.
  FailureOr<std::string> getEventLayerName(Operation *op, Value weight);
  LogicalResult serializeLoss(Operation *op);
  /// The input of a split function: its rank's steps of the whole input.
  FailureOr<int64_t> addLocalInput(func::FuncOp func, BlockArgument arg,
                                   ArrayRef<int64_t> localShape, Phase phase);
  void emit(Phase phase, llvm::json::Object op);
  /// `op` (an add, accumulate, scale, training dropout or dropout_bwd of
  /// the manifest) as a `kernel` op; `index` is its index in its op list
  /// (dropout's random stream).
  llvm::json::Object toKernelOp(llvm::json::Object op, int64_t index = 0);
  /// The index the next op emitted in `phase` gets in its list.
  int64_t nextOpIndex(Phase phase) const;
  /// One launch of the kernel of `spec` over the tensors `args` (ABI
  /// order): `kernel`, `args`, `grid`, `block` (, `run_values`).
  llvm::json::Object makeLaunch(const OpKernelSpec &spec,
                                llvm::json::Array args);
  /// `op` (a batch_norm or batch_norm_bwd of the manifest) as a `kernel`
  /// op: eval one launch, training three sharing a new scratch tensor
  /// (BatchNormOps.cpp).
  /// `sums`: the scratch (and its parts per channel) where a neuron_bwd
  /// wrote a batch_norm_bwd's sums: only its finish and apply launches run.
  llvm::json::Object toBatchNormKernelOp(
      llvm::json::Object op,
      std::optional<std::pair<int64_t, int64_t>> sums = std::nullopt);
  /// The batch norm that the neuron layer `op` applies on load
  /// (snn.fused_batch_norm), null when it has none; fails, with an error,
  /// on an attribute that does not describe the batch norm in front of it.
  static FailureOr<Operation *> getFusedBatchNormOp(Operation *op);
  /// Whether `op` is the backward of a fused layer's pooling
  /// (snn.fused_pool), which the layer's neuron_bwd replaces: it reads the
  /// pooled gradient and spreads it over the window.
  static bool isFusedPoolBackward(Operation *op);
  /// The neuron layer that applies `bn` (snn.fused_batch_norm), or null.
  static Operation *getFusingNeuron(Operation *bn);
  /// The inputs a neuron layer fused with `bn` reads after x, appended to
  /// `in` (training: gamma, beta, saved_mean, saved_invstd, the batch norm's
  /// scratch; inference: gamma, beta, running_mean, running_var), and its
  /// `bn` attribute set on `json`.
  LogicalResult addFusedBatchNormInputs(Operation *neuron, Operation *bn,
                                        Phase phase, llvm::json::Array &in,
                                        llvm::json::Object &json);
  /// `op` (linear, conv2d and their backward) with the generated kernels
  /// that run around its library call: `launches` (bias), `columns`
  /// (convolutions as GEMMs over column buffers) (LayerOps.cpp).
  llvm::json::Object toLayerOp(llvm::json::Object op);
  /// The `kernel` op of `spec` over the tensors `args` (ABI order), which
  /// computes the manifest ops `of`.
  llvm::json::Object makeKernelOp(const OpKernelSpec &spec,
                                  llvm::json::Array args, llvm::json::Array in,
                                  llvm::json::Array out, llvm::json::Array of);
  /// Writes the optimizer ops held back by serializeOptimizer: one kernel
  /// op per group of equal hyperparameters.
  void flushOptimizerOps();
  std::string getLayerName(Operation *op, StringRef model);

  // Bit-packed saved spikes (SpikeBits.cpp).
  /// Training keeps the spikes of `neuron` only for weight gradients (the
  /// x of linear_bwd/conv2d_bwd): they can be saved as bits.
  bool savesSpikesAsBits(Operation *neuron) const;
  /// Training reads the spikes of `neuron` as the x of an event-driven
  /// linear_bwd, whose weight gradient reads them as bits (whatever
  /// spike-bits says).
  bool feedsEventWeightGrad(Operation *neuron) const;
  /// After the forward op that wrote `spikes` (train_forward): packs them
  /// into a new `saved` u32 tensor; `dropFloats`: the backward reads only
  /// the bits (spike-bits), other readers an unpacked copy.
  void emitPackSpikes(int64_t spikes, bool dropFloats);
  /// A pack_bits kernel of `x` in `phase` into a new u32 tensor of `role`
  /// (its id); `occupancy`: x may hold any value, bit = (x != 0).
  int64_t emitPackBits(int64_t x, Phase phase, llvm::StringRef role,
                       bool occupancy);
  /// The words an event-driven weight gradient reads for its input `x`:
  /// a spiking layer's packed spikes (`values` false) or the occupancy bits
  /// of the network input, packed in the backward (`values` true: the
  /// kernel also reads x at the set bits); none for other inputs. With
  /// `pack` false nothing is emitted: the answer only says whether (-1 for
  /// input bits not packed yet).
  std::optional<int64_t> getEventGradBits(Value x, bool &values,
                                          bool pack = true);
  /// The tensor that the backward op `op` reads for its spike input `x`
  /// (tensor `xId`): a scratch copy unpacked right before `op` when x's
  /// spikes were saved as bits only, else `xId` itself.
  int64_t unpackSpikesFor(Operation *op, Value x, int64_t xId);

  int64_t batch;
  const NeuronKernelMap &kernels;
  OpKernelRegistry &opKernels;
  /// Optimizer ops (manifest form) and their kernel spec of one element.
  std::vector<std::pair<llvm::json::Object, OpKernelSpec>> pendingUpdates;
  bool savedHBf16;
  /// lif/if layers save membrane checkpoints every this many steps instead
  /// of H, and their backward reads their input (0: save H).
  int64_t recomputeChunk;
  /// Spikes kept only for weight gradients are saved as bits.
  bool spikeBits;
  int64_t sharedMemoryLimit = 0;
  RowSpikeBitsOptions rowBitsOptions;
  /// The row-bits spike tensors (u32 words): compact_rows reads them.
  llvm::DenseSet<int64_t> rowBitsTensors;
  /// Spike tensor -> its packed words.
  llvm::DenseMap<int64_t, int64_t> packedSpikes;
  /// Spike tensors whose floats the backward does not read (spike-bits).
  llvm::DenseSet<int64_t> bitsOnlySpikes;
  /// Network input -> its occupancy bits (packed in the backward).
  llvm::DenseMap<int64_t, int64_t> occupancyBits;
  /// Layer name -> its train_forward spikes and their packed words (-1:
  /// none), for spike_layers' train_tensor / train_bits.
  llvm::StringMap<std::pair<int64_t, int64_t>> trainSpikes;
  /// Adds to each spike_layers entry the train_forward tensor the host can
  /// read after that program (spikes kept for backward, or their bits).
  void addTrainSpikeTensors();
  SafetensorsWriter initFile;

  std::vector<llvm::json::Object> tensors;
  llvm::StringMap<int64_t> paramIds;
  llvm::StringMap<std::pair<int64_t, Attribute>> constantIds;
  llvm::json::Array infer, trainForward, backward, update;
  /// Layer names of the step neurons written (for the spike rates of loops).
  llvm::DenseMap<Operation *, std::string> stepLayerNames;
  /// Set while a time loop's body is written: ops go there.
  llvm::json::Array *bodyTarget = nullptr;
  llvm::json::Array spikeLayers;
  /// {"name", "decision"} of each event-driven linear layer of `infer`.
  llvm::json::Array eventLayers;
  std::optional<llvm::json::Object> optimizer;
  std::optional<int64_t> inputId, outputId, labelsId, lossId, correctId;
  /// The training step's loss op ("" without one).
  std::string lossKind;
  llvm::json::Array evaluate;
  std::optional<llvm::json::Object> evaluateIds;
  int64_t timeSteps = 0, batchSize = 0;
  /// The whole sequence of a time split (0: not split) and this set's
  /// local length.
  int64_t splitSteps = 0, localSteps = 0;
  std::optional<int64_t> localInputId;

  // Per function.
  llvm::DenseMap<Value, int64_t> ids;
  /// The decisions that neuron kernels write for event-driven linear ops
  /// and linear backwards (their spike_density is fused), by that op.
  llvm::DenseMap<Operation *, int64_t> countedDecisions;
  llvm::DenseMap<Value, int64_t> paramOfValue;
  llvm::DenseMap<Operation *, NeuronRecord> neurons;
  /// What training batch norm (mean, invstd) and dropout (mask) save.
  llvm::DenseMap<Operation *, SmallVector<int64_t, 2>> savedState;
  /// The scratch of a training batch norm whose neuron layer applies it.
  llvm::DenseMap<Operation *, int64_t> fusedBatchNormScratch;
  /// The scratch and parts per channel of the backward sums of a batch
  /// norm, written by the neuron_bwd of the layer fused with it.
  llvm::DenseMap<Operation *, std::pair<int64_t, int64_t>>
      fusedBatchNormSums;
  /// The neuron_bwd of a layer that recomputes H and is fused with its
  /// batch norm: the training forward's batch norm inputs in (after the
  /// checkpoints), `bn` set.
  LogicalResult addRecomputedBatchNormInputs(const NeuronRecord &record,
                                             llvm::json::Array &in,
                                             llvm::json::Object &json);
  /// The neuron_bwd of a fused layer with the batch norm backward's sums:
  /// x, saved_mean, saved_invstd in, the sums' scratch out, `bn` set.
  LogicalResult addBatchNormBackwardSums(Operation *op, NeuronRecord &record,
                                         llvm::json::Array &in,
                                         llvm::json::Array &out,
                                         llvm::json::Object &json);
  llvm::DenseSet<int64_t> forwardActivations;
  /// An event-driven linear's input (spikes, or other values such as the
  /// network input) -> the row lists that train_forward always writes for
  /// it (no dense path): the weight gradient's backward reads those instead
  /// of listing the input again.
  llvm::DenseMap<int64_t, RowLists> trainForwardRowLists;
  /// A spiking layer's input gradient -> its occupancy row bits, which its
  /// neuron_bwd writes for the reader's compact_columns (writesGradRowBits).
  llvm::DenseMap<int64_t, int64_t> gradRowBits;
  llvm::StringMap<unsigned> layerCounters;
  /// Unrolled steps of each named step layer whose H was saved.
  llvm::StringMap<unsigned> savedStepH;
  llvm::StringSet<> layerNames;
};

} // namespace mlir::snn

#endif // SNN_LIB_TARGET_MODULE_MANIFESTBUILDER_H
