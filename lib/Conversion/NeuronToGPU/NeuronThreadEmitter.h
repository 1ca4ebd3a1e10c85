//===- NeuronThreadEmitter.h - emits one neuron-kernel thread ---*- C++ -*-===//
//
// The per-thread code of the neuron kernels (NeuronKernelBody.cpp), shared
// by the pooled kernels of fused layers (NeuronPoolKernels.cpp) so that both
// run the same step arithmetic, forward and backward.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_LIB_CONVERSION_NEURONTOGPU_NEURONTHREADEMITTER_H
#define SNN_LIB_CONVERSION_NEURONTOGPU_NEURONTHREADEMITTER_H

#include "NeuronKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::snn::kernelgen {

/// Emits the per-thread code on vectors of W lanes, one lane per neuron.
class ThreadEmitter {
public:
  /// `base`: the thread's first neuron; its W = spec.getWidth() neurons
  /// are [base, base + W) (see splitLanes).
  ThreadEmitter(OpBuilder &b, Location loc, const NeuronSpec &spec,
                Value base)
      : b(b), loc(loc), spec(spec), width(spec.getWidth()),
        vecType(VectorType::get({width}, b.getF32Type())), base(base) {}

  /// The emit* functions below also count the nonzeros the thread writes
  /// (its spikes, the backward's gx); getCount() is then that count (i32).
  void countOutputs() { counting = true; }
  Value getCount() const { return count; }
  /// The backward also stores gx's occupancy as row bits into the byte
  /// tensor `bits` (NeuronSpec::writesGradBits).
  void writeGradBits(Value bits) { gradBits = bits; }
  /// The backward reads gy of a fused thin linear and its weight `weight`
  /// (NeuronSpec::linearGradOutputs) and forms the spikes' gradient.
  void readLinearGrad(Value weight) { linearWeight = weight; }
  /// The forward that saves H also writes scale times the sum of its
  /// output over the steps into `mean` (NeuronSpec::writesTimeMean).
  void writeTimeMean(Value mean) { timeMean = mean; }

  /// `record`: the ForwardRecord ABI (x, s, h, v), whatever the storage.
  void emitForward(ValueRange args, bool saveH, bool record = false);
  /// Returns the batch norm backward's sums of the thread (f64 sum(gY),
  /// sum(gY xhat) over its steps and lanes) with
  /// spec.fusesBatchNormBackward(), else none.
  SmallVector<Value, 2> emitBackward(ValueRange args);
  /// The backward of a layer that recomputes H (NeuronStorage::
  /// recomputeChunk), from x normalized as the forward did with a fused
  /// batch norm; returns the sums as emitBackward does.
  SmallVector<Value, 2> emitBackwardRecompute(ValueRange args);
  /// One step from the state tensors (spec.step), and its backward.
  void emitStep(ValueRange args, bool saveH);
  void emitStepBackward(ValueRange args);

  /// Runs one forward step at `t` from `state`: stores what the step
  /// writes except packed spikes (the spikes only when `s` is given; the
  /// membrane before the step at a chunk start when `ckpt`), and returns
  /// the next state and the spike mask (null for li). `input`: the step's
  /// X[t] loaded ahead (null: the step loads it).
  Value forwardStep(Value t, ValueRange state, Value x, Value s, Value h,
                    Value iSaved, Value ckpt, SmallVectorImpl<Value> &next,
                    Value vOut = Value(), Value input = Value());
  /// The state before the first step: V (and I for cuba_lif).
  SmallVector<Value> initialState() {
    SmallVector<Value> init{
        param(spec.vInitFromReset ? spec.vReset : spec.vInit)};
    if (spec.hasSynapse())
      init.push_back(param(spec.iInit));
    return init;
  }
  /// The chained-state arguments that follow the first `numFixed` ones:
  /// state (or gradient) in, then out; empty unless spec.chainsState.
  ValueRange chainedStateArgs(ValueRange args, unsigned numFixed) const {
    if (!spec.chainsState)
      return {};
    return args.slice(numFixed, 2 * spec.getNumStateTensors());
  }
  /// The thread's lanes of state tensors in the op's order (i then v for
  /// cuba_lif) as the scan's order (v, then i).
  SmallVector<Value> loadState(ValueRange memrefs) {
    SmallVector<Value> state;
    for (Value m : llvm::reverse(memrefs))
      state.push_back(load(m, base));
    return state;
  }
  /// Stores the scan's state (v, then i) into tensors in the op's order.
  void storeState(ValueRange state, ValueRange memrefs) {
    for (auto [value, m] : llvm::zip(state, llvm::reverse(memrefs)))
      store(value, m, base);
  }

  /// The lanes are runs of `run` neurons `stride` apart (a pooled layer's
  /// window: KH rows of KW), not one contiguous run, and a run's neurons are
  /// `step` apart (a channels-last window: C); every access is then one per
  /// run, or one per lane when step > 1.
  void splitLanes(int64_t run, int64_t stride, int64_t step = 1) {
    runLength = run;
    runStride = stride;
    laneStep = step;
  }
  /// Rounds the H that forwardStep saves as the storage asks
  /// (NeuronStorage::bf16HInF32), as emitForward does for its own scan.
  void roundSavedH() { roundsH = spec.storage.bf16HInF32; }
  /// The backward of a pooled layer (spec.pool): its gs is the pooled
  /// gradient [T, windows], and each lane reads the entry of its neuron's
  /// window (average: times 1 / (KH KW), as the unfused pooling's
  /// backward). Emits the lanes' window indices at the insertion point.
  void spreadPooledGrad();

  /// Loads the tensor parameters once, before the time loop (plif: its
  /// weight first, k = sigmoid(w) and c from it).
  void loadParams(ValueRange paramArgs);
  /// Loads the per-channel affine of a fused batch norm (spec.bn) once,
  /// before the time loop, from its arguments (NeuronSpec::
  /// getNumBatchNormArgs; none: x is read as it is). forwardStep then reads
  /// x scale + shift.
  void loadBatchNorm(ValueRange bnArgs);
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value splat(double v) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vecType, static_cast<float>(v)));
  }
  VectorType getVectorType() const { return vecType; }

private:
  /// Offset of this thread's first neuron at step `t`.
  Value offset(Value t) {
    Value row = arith::MulIOp::create(b, loc, t, index(spec.numNeurons));
    return arith::AddIOp::create(b, loc, row, base);
  }
  /// Neurons per contiguous run of lanes, one access each.
  int64_t getRunLength() const {
    return laneStep > 1 ? 1 : runLength ? runLength : width;
  }
  /// The offset of lane `lane` from the thread's first neuron.
  int64_t laneOffset(int64_t lane) const {
    if (!runLength)
      return lane;
    return lane / runLength * runStride + lane % runLength * laneStep;
  }
  /// The start of contiguous run `r` at `at`.
  Value runAt(Value at, int64_t r) {
    int64_t offset = laneOffset(r * getRunLength());
    return offset == 0 ? at
                       : arith::AddIOp::create(b, loc, at, index(offset));
  }
  /// The neuron of lane `lane`.
  Value laneNeuron(int64_t lane) {
    return arith::AddIOp::create(b, loc, base, index(laneOffset(lane)));
  }
  /// W lanes of `memref` (f32 or bf16) at `at`, as f32.
  Value load(Value memref, Value at) {
    Type elem = cast<MemRefType>(memref.getType()).getElementType();
    int64_t run = getRunLength();
    Value lanes;
    for (int64_t r = 0; r < width / run; ++r) {
      Value part = vector::LoadOp::create(
          b, loc, VectorType::get({run}, elem), memref,
          ValueRange{runAt(at, r)}, /*nontemporal=*/false, alignment(elem));
      // Runs are appended with shuffles (the NVVM lowering has no strided
      // slice inserts).
      lanes = lanes ? vector::ShuffleOp::create(
                          b, loc, lanes, part,
                          llvm::to_vector(llvm::seq<int64_t>(0, (r + 1) * run)))
                    : part;
    }
    return elem.isF32() ? lanes : arith::ExtFOp::create(b, loc, vecType, lanes);
  }
  /// Stores W f32 lanes, rounded to the element type of `memref`.
  void store(Value value, Value memref, Value at) {
    Type elem = cast<MemRefType>(memref.getType()).getElementType();
    auto type = cast<VectorType>(value.getType());
    if (type.getElementType() != elem && isa<FloatType>(elem))
      value = arith::TruncFOp::create(b, loc, type.clone(elem), value);
    int64_t run = getRunLength();
    for (int64_t r = 0; r < width / run; ++r) {
      Value part =
          run == width
              ? value
              : vector::ShuffleOp::create(
                    b, loc, value, value,
                    llvm::to_vector(llvm::seq<int64_t>(r * run, (r + 1) * run)));
      vector::StoreOp::create(b, loc, part, memref, ValueRange{runAt(at, r)},
                              /*nontemporal=*/false, alignment(elem));
    }
  }
  /// A run's elements when that is a power of two (a pooled layer's window
  /// rows can be 3 wide), else one element.
  llvm::MaybeAlign alignment(Type elem) const {
    int64_t bytes = elem.getIntOrFloatBitWidth() / 8;
    int64_t run = getRunLength();
    // At most 16 bytes: what the memory plan guarantees of every row.
    return llvm::MaybeAlign(llvm::isPowerOf2_64(run)
                                ? std::min<int64_t>(run * bytes, 16)
                                : bytes);
  }

  /// The gradient of the thread's outputs at step `t` (its lanes at `at`):
  /// read from gs, or spread from the window's pooled gradient.
  Value outputGrad(Value gs, Value t, Value at);
  /// Before the scan of a backward with a fused thin linear: the feature of
  /// the thread's first lane (nothing without one).
  void prepareLinearGrad();
  /// gy[row, :] W for the lanes at `at` (all in the row (t, b)) whose
  /// membrane is `hv`; zeros without a load when every lane is outside the
  /// surrogate band (where the backward takes the gradient as 0).
  Value linearGradInBand(Value gy, Value at, Value hv);
  /// The gradient of the outputs at step `t` for the recomputing and the
  /// unpipelined scans: linearGradInBand or outputGrad.
  Value stepOutputGrad(Value gs, Value t, Value at, Value hv);

  /// The membrane after the step that charged `hv`.
  Value afterReset(Value hv, Value spike) {
    return spec.softReset ? select(spike, sub(hv, param(spec.vTh)), hv)
                          : select(spike, param(spec.vReset), hv);
  }
  /// gH of a spiking layer from the output's and the next membrane's
  /// gradients: gOut σ'(H - v_th) + gv dV/dH, gOut taken as 0 outside the
  /// surrogate band.
  Value gradH(Value gOut, Value gv, Value hv);
  /// Recomputes steps [first, first + len) from the membrane `v` (reading X),
  /// then runs their backward in reverse from `gv`; returns the gradient of
  /// the membrane before `first`. When counting, adds the chunk's nonzero
  /// gx lanes to `counts`, and with a batch norm backward's sums its steps'
  /// terms to `bnSums`.
  Value recomputeChunk(Value first, int64_t len, Value v, Value gv,
                       ValueRange args, Value &counts,
                       MutableArrayRef<Value> bnSums);
  /// The batch norm backward's sums (spec.fusesBatchNormBackward()) in f64
  /// lanes, as its statistics kernel adds them: loads the thread's channel's
  /// saved statistics and returns the zero sums of gY and gY xhat.
  SmallVector<Value, 2> startBatchNormSums(Value mean, Value invstd);
  /// `sums` plus a step's terms: gY = `gin`, xhat of the step's input `x`.
  SmallVector<Value, 2> addBatchNormSums(ValueRange sums, Value gin, Value x);
  /// The thread's sums: the lanes added in order.
  SmallVector<Value, 2> finishBatchNormSums(ValueRange sums);
  /// f32 lanes as f64.
  Value widen(Value lanes);

  /// Per-lane counts (vector of W i32) while counting: zeros, plus one
  /// where `nonzero` (vector of W i1), and their sum over the lanes.
  Value zeroCounts();
  Value addCounts(Value counts, Value nonzero);
  Value sumCounts(Value counts);
  /// The lanes of `v` that are not zero (as spike_density counts them).
  Value nonzeroLanes(Value v) {
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                 splat(0.0));
  }
  /// plif: dH/dk of the step that charged `hv` from the membrane `vPrev`.
  Value leakGrad(Value hv, Value vPrev);
  /// plif: adds dL/dw = gk k (1 - k) of the thread's lanes into `gw`.
  void addWeightGrad(Value gk, Value gw);
  /// The membrane before step `t` of the backward scan: v_init at t = 0,
  /// else the reset of H[t-1] (read from `h`).
  Value membraneBefore(Value t, Value h);

  /// A tensor parameter's lanes (or plif's k and c computed from w), else
  /// the scalar.
  Value param(const NeuronParam &p) {
    if (Value lanes = params.lookup(&p))
      return lanes;
    return splat(p.scalar);
  }
  Value paramVector(Value memref);

  Value add(Value a, Value c) { return arith::AddFOp::create(b, loc, a, c); }
  Value sub(Value a, Value c) { return arith::SubFOp::create(b, loc, a, c); }
  Value mul(Value a, Value c) { return arith::MulFOp::create(b, loc, a, c); }
  Value div(Value a, Value c) { return arith::DivFOp::create(b, loc, a, c); }
  Value select(Value cond, Value a, Value c) {
    return arith::SelectOp::create(b, loc, cond, a, c);
  }
  Value isScalar(const NeuronParam &p, double v) {
    return (!params.count(&p) && p.scalar == v) ? Value() : param(p);
  }

  /// H = V + k (v_leak - V) + c X.
  Value charge(Value v, Value x);
  /// S[t] = H >= v_th (H > v_th when strict).
  Value fires(Value h) {
    return arith::CmpFOp::create(b, loc,
                                 spec.strict ? arith::CmpFPredicate::OGT
                                             : arith::CmpFPredicate::OGE,
                                 h, param(spec.vTh));
  }
  /// σ'(H - v_th), 0 below theta_grad and outside the band |H - v_th| <= B
  /// (with a band, `outside`, if given, gets the lanes outside it).
  Value surrogate(Value h, Value *outside = nullptr);
  /// The lanes whose u = H - v_th is outside the band: |u| > B (i1 lanes).
  Value outsideBand(Value u);

  OpBuilder &b;
  Location loc;
  const NeuronSpec &spec;
  int64_t width;
  VectorType vecType;
  Value base;
  /// Lanes in runs of runLength neurons laneStep apart, the runs runStride
  /// apart (runLength 0: one contiguous run).
  int64_t runLength = 0, runStride = 0, laneStep = 1;
  /// The saved H is rounded to bf16 in f32 elements (NeuronStorage::
  /// bf16HInF32), not the recorded one.
  bool roundsH = false;
  /// The spikes go out as row bits (NeuronSpec::writesRowBits).
  bool rowBits = false;
  /// Stores the lanes' spike mask as row bits at element `at` of [T, N]
  /// into the byte tensor `s`: a CPU thread's 8 lanes are a byte; on the
  /// GPU the even thread of a pair adds its neighbour's 4 bits (a shuffle).
  void storeRowBits(Value spike, Value s, Value at);
  /// gx's row bits (null unless writeGradBits).
  Value gradBits;
  /// Stores gx's lanes at element `at`, with their row bits and count.
  void storeGradInput(Value gin, Value gx, Value at, Value &counts);
  /// Whether to count the written nonzeros, and the thread's count.
  bool counting = false;
  Value count;
  /// A step's second input tensor (spec.stepAddend), else null.
  Value addend;
  /// plif's weight lanes (null for other models).
  Value plifWeight;
  /// The fused batch norm's scale and shift lanes (null without one).
  Value bnScale, bnShift;
  /// Its saved mean and invstd as f64 lanes, for the backward's sums.
  Value bnMean, bnInvstd;
  /// The pooling window of each run of KW lanes, whose gradient the
  /// backward spreads (empty: gs holds the lanes' own gradients).
  SmallVector<Value> laneWindows;
  /// A fused thin linear's weight (null without one).
  Value linearWeight;
  /// The fused time mean's output (null without one).
  Value timeMean;
  /// With NeuronSpec::gradBroadcastScale: every step's output gradient,
  /// scale times the thread's lanes of gs (prepareBroadcastGrad).
  Value broadcastGrad;
  /// Loads the lanes of a fused time broadcast's gradient once, before the
  /// scan (nothing without one).
  void prepareBroadcastGrad(Value gs);
  /// The f64 sum that the fused time mean starts from, and the sum after
  /// adding a step's output `written`.
  Value startTimeMean();
  Value addToTimeMean(Value sum, Value written);
  /// Stores scale times the sum into the time mean's output.
  void storeTimeMean(Value sum);
  /// The feature index of the thread's first neuron.
  Value firstFeature;
  llvm::DenseMap<const NeuronParam *, Value> params;
};

} // namespace mlir::snn::kernelgen

#endif // SNN_LIB_CONVERSION_NEURONTOGPU_NEURONTHREADEMITTER_H
