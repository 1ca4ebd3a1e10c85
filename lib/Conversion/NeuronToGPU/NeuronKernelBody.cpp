//===- NeuronKernelBody.cpp - the code of one neuron-kernel thread --------===//
//
// A thread owns W consecutive neurons (W = 4: one 16-byte access per tensor
// and step) and scans the T steps with the state in registers. Forward and
// backward implement DESIGN §2; the order of the floating-point operations is
// the order of its formulas.
//
//===----------------------------------------------------------------------===//

#include "NeuronThreadEmitter.h"
#include "snn/Conversion/NeuronToGPU/KernelArith.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

using namespace mlir;
using namespace mlir::snn;
using namespace mlir::snn::kernelgen;

/// Threads below which a layer cannot hide a load's latency with other
/// threads at all: fewer than one warp per SM scheduler (a 20-class
/// readout: B 20 / 4 = 640 threads at batch 128). Its scans are bound by
/// one load latency per step (the SHD readout's forward that saves H took
/// 22.7 us, its backward 15.1 us for 100 steps on an H100,
/// bench/results/2026-12-07-H100-shd-step-ncu.txt), so they keep many
/// steps' loads in flight per thread, registers permitting.
static constexpr int64_t kTinyThreads = 16 * 1024;

/// Steps per iteration of the backward scan: 4 (or 2) for a layer with few
/// threads when T allows it without a remainder, the largest divisor of T
/// up to 10 for a tiny layer (kTinyThreads), else 1. An iteration
/// loads the inputs of all of its steps first, then runs their arithmetic
/// in order: with B N / 4 = 47k threads (SHD, 11 warps per H100 SM) one
/// step's loads in flight per thread fall short of the memory bandwidth.
/// ptxas does not hoist a step's loads above the previous step's store:
/// the loop utility's unrolling (each step's loads after the previous
/// step's store) took the SHD LIF backward from 162 to 121 us, loads first
/// to 97 us (bench/results/2026-11-27-H100-backward-columns.md). Layers with
/// enough threads to fill the GPU keep one step per iteration, and so do
/// the forward kernels (their inputs loaded first measured no faster).
/// Same arithmetic in the same order.
static int64_t getBackwardStepsPerIteration(const NeuronSpec &spec) {
  constexpr int64_t kFewThreads = 128 * 1024, kTinyFactor = 10;
  int64_t steps = spec.numSteps;
  if (spec.host || spec.getNumBackwardThreads() >= kFewThreads)
    return 1;
  if (spec.getNumBackwardThreads() < kTinyThreads && !spec.bn) {
    int64_t factor =
        getLargestDivisorAtMost(steps, std::min(kTinyFactor, steps / 2));
    if (factor > 4)
      return factor;
  }
  int64_t factor = steps % 4 == 0 ? 4 : steps % 2 == 0 ? 2 : 1;
  if (factor > 1 && steps >= 2 * factor)
    return factor;
  return 1;
}

/// Steps whose input the forward scan of a layer with few threads (as
/// above) loads ahead: step t loads X[t + D] before its arithmetic and
/// carries X[t + 1 .. t + D] in registers, so that D steps' loads per
/// thread stay in flight (software pipelining). D = 4 for the inference
/// forward (no H saved): on an H200 the SHD layer's went from 54.6 to 49.5
/// us; the forward that saves H went from 73.8 to 82.2 us the same way (and
/// loads first in an unrolled iteration measured no faster on an H100), so
/// it keeps one step's load (bench/results/2026-12-01-H200-row-bits.md),
/// unless the layer is tiny (kTinyThreads): then every forward but the
/// recording one loads D = 16 steps ahead. 0: each step loads its own
/// input. Same arithmetic in the same order.
static int64_t getForwardPrefetchDepth(const NeuronSpec &spec, bool saveH) {
  constexpr int64_t kFewThreads = 128 * 1024, kDepth = 4, kTinyDepth = 16;
  if (spec.host || spec.pool || spec.step || spec.numSteps <= kDepth ||
      spec.getNumThreads() >= kFewThreads)
    return 0;
  if (spec.getNumThreads() < kTinyThreads)
    return std::min(kTinyDepth, spec.numSteps - 1);
  return saveH ? 0 : kDepth;
}

Value ThreadEmitter::paramVector(Value memref) {
  // Lanes stay inside one sample when F is a multiple of W (runs of a
  // pooled layer's window: of the map, which F is a multiple of): one
  // access per run, at the feature of the first neuron.
  if (runLength
          ? spec.numFeatures % (spec.rows * spec.cols * spec.channels) == 0
          : width == 1 || spec.numFeatures % width == 0) {
    if (!firstFeature)
      firstFeature =
          arith::RemUIOp::create(b, loc, base, index(spec.numFeatures));
    return load(memref, firstFeature);
  }
  SmallVector<Value> lanes;
  for (int64_t lane = 0; lane < width; ++lane) {
    Value n = laneNeuron(lane);
    Value f = arith::RemUIOp::create(b, loc, n, index(spec.numFeatures));
    lanes.push_back(memref::LoadOp::create(b, loc, memref, ValueRange{f}));
  }
  return vector::FromElementsOp::create(b, loc, vecType, lanes);
}

void ThreadEmitter::loadParams(ValueRange paramArgs) {
  if (spec.learnsLeak()) {
    Value w = paramArgs.front();
    paramArgs = paramArgs.drop_front();
    plifWeight = spec.plifWeightSize == 1
                     ? vector::BroadcastOp::create(
                           b, loc, vecType,
                           memref::LoadOp::create(b, loc, w,
                                                  ValueRange{index(0)}))
                     : paramVector(w);
    // k = sigmoid(w) = 1 / (1 + exp(-w)); c = k with decay_input.
    Value e = math::ExpOp::create(
        b, loc, arith::NegFOp::create(b, loc, plifWeight));
    Value k = div(splat(1.0), add(splat(1.0), e));
    params[&spec.k] = k;
    if (spec.decayInput)
      params[&spec.c] = k;
  }
  SmallVector<const NeuronParam *> tensors = spec.getTensorParams();
  assert(tensors.size() == paramArgs.size() && "kernel ABI mismatch");
  for (auto [p, arg] : llvm::zip(tensors, paramArgs))
    params[p] = paramVector(arg);
}

void ThreadEmitter::loadBatchNorm(ValueRange bnArgs) {
  if (bnArgs.empty())
    return;
  // The batch norm's x is [M, C, S] and M holds whole steps: neuron n of a
  // step is in channel (n / S) % C.
  auto channelOf = [&](Value n) -> Value {
    Value plane =
        arith::DivUIOp::create(b, loc, n, index(spec.bnSpatial));
    return arith::RemUIOp::create(b, loc, plane, index(spec.bnChannels));
  };
  auto at = [&](Value memref, Value i) -> Value {
    return memref::LoadOp::create(b, loc, memref, ValueRange{i});
  };
  // The same arithmetic as the batch norm's own kernels
  // (BatchNormKernels.cpp): its finish kernel's scale and shift in
  // training, its eval affine (f32) in inference.
  auto affine = [&](Value c) -> std::pair<Value, Value> {
    if (bnArgs.size() == 5) {
      Value scratch = bnArgs[4];
      Value first = arith::AddIOp::create(b, loc, c, index(spec.bnTermOffset));
      Value second = arith::AddIOp::create(b, loc, first,
                                           index(spec.bnChannels));
      return {at(scratch, first), at(scratch, second)};
    }
    Value gamma = bnArgs[0], beta = bnArgs[1], mean = bnArgs[2],
          var = bnArgs[3];
    Value eps = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(static_cast<float>(spec.bn->eps)));
    Value root = math::SqrtOp::create(b, loc, add(at(var, c), eps));
    Value scale = div(at(gamma, c), root);
    Value shifted = mul(at(mean, c), scale);
    return {scale, sub(at(beta, c), shifted)};
  };
  // A thread's lanes share a channel when S is a multiple of W (its first
  // neuron is a multiple of W), or of a pooled layer's map (its window), or
  // when S = 1 and the channels divide a channels-last window's lane step.
  bool shared =
      !runLength ? spec.bnSpatial % width == 0
      : spec.channels == 1
          ? spec.bnSpatial % (spec.rows * spec.cols) == 0
          : spec.bnSpatial == 1 && spec.channels % spec.bnChannels == 0;
  if (shared) {
    auto [scale, shift] = affine(channelOf(base));
    bnScale = vector::BroadcastOp::create(b, loc, vecType, scale);
    bnShift = vector::BroadcastOp::create(b, loc, vecType, shift);
    return;
  }
  SmallVector<Value> scales, shifts;
  for (int64_t lane = 0; lane < width; ++lane) {
    Value n = laneNeuron(lane);
    auto [scale, shift] = affine(channelOf(n));
    scales.push_back(scale);
    shifts.push_back(shift);
  }
  bnScale = vector::FromElementsOp::create(b, loc, vecType, scales);
  bnShift = vector::FromElementsOp::create(b, loc, vecType, shifts);
}

Value ThreadEmitter::charge(Value v, Value x) {
  Value h = v;
  // k = 0 (IF) adds exactly 0: leave the term out.
  if (Value k = isScalar(spec.k, 0.0))
    h = add(v, mul(k, sub(param(spec.vLeak), v)));
  Value cx = x;
  if (Value c = isScalar(spec.c, 1.0))
    cx = mul(c, x);
  return add(h, cx);
}

Value ThreadEmitter::surrogate(Value h, Value *outside) {
  Value u = sub(h, param(spec.vTh));
  double alpha = spec.alpha;
  Value sg;
  switch (spec.surrogate) {
  case SurrogateKind::Sigmoid: {
    // alpha * sg(alpha u) * (1 - sg(alpha u)), as SpikingJelly orders it.
    Value e = math::ExpOp::create(b, loc, mul(splat(-alpha), u));
    Value z = div(splat(1.0), add(splat(1.0), e));
    sg = mul(mul(sub(splat(1.0), z), z), splat(alpha));
    break;
  }
  case SurrogateKind::Atan: {
    // alpha / 2 / (1 + (pi/2 alpha u)^2)
    Value w = mul(splat(M_PI / 2 * alpha), u);
    sg = div(splat(alpha / 2), add(splat(1.0), mul(w, w)));
    break;
  }
  case SurrogateKind::Triangle: {
    // (1/alpha) max(0, 1 - |u|/alpha)
    Value a = math::AbsFOp::create(b, loc, u);
    Value ramp = sub(splat(1.0), div(a, splat(alpha)));
    Value clamped = arith::MaximumFOp::create(b, loc, splat(0.0), ramp);
    sg = mul(splat(1.0 / alpha), clamped);
    break;
  }
  case SurrogateKind::FastSigmoid: {
    // 1 / (alpha |u| + 1)^2
    Value a = math::AbsFOp::create(b, loc, u);
    Value d = add(mul(splat(alpha), a), splat(1.0));
    sg = div(splat(1.0), mul(d, d));
    break;
  }
  }
  if (spec.thetaGrad) {
    Value below = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, h,
                                        splat(*spec.thetaGrad));
    sg = select(below, splat(0.0), sg);
  }
  if (spec.gradBand) {
    Value out = outsideBand(u);
    sg = select(out, splat(0.0), sg);
    if (outside)
      *outside = out;
  }
  return sg;
}

Value ThreadEmitter::outsideBand(Value u) {
  // Ordered compare: a NaN H keeps its (NaN) derivative, as without a band.
  return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                               math::AbsFOp::create(b, loc, u),
                               splat(*spec.gradBand));
}

Value ThreadEmitter::forwardStep(Value t, ValueRange state, Value x, Value s,
                                 Value h, Value iSaved, Value ckpt,
                                 SmallVectorImpl<Value> &next, Value vOut,
                                 Value input) {
  Value at = offset(t);
  if (ckpt) {
    // The membrane before the first step of chunks 1, 2, ...
    int64_t chunk = spec.storage.recomputeChunk;
    Value inChunk = arith::RemUIOp::create(b, loc, t, index(chunk));
    Value starts = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, inChunk,
                              index(0)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, t, index(0)));
    auto ifStart = scf::IfOp::create(b, loc, starts, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifStart.thenBlock());
    Value slot = arith::SubIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, t, index(chunk)), index(1));
    Value row = arith::MulIOp::create(b, loc, slot, index(spec.numNeurons));
    store(state[0], ckpt, arith::AddIOp::create(b, loc, row, base));
  }
  Value in = input ? input : load(x, at);
  if (bnScale) // as the batch norm's apply kernel: x scale + shift
    in = add(mul(in, bnScale), bnShift);
  if (addend)
    in = add(in, load(addend, at));
  if (spec.hasSynapse()) {
    // I[t] = I[t-1] - k_syn I[t-1] + c_syn X[t]
    Value i = state[1];
    i = add(sub(i, mul(param(spec.kSyn), i)), mul(param(spec.cSyn), in));
    if (iSaved)
      store(i, iSaved, at);
    next.push_back(i);
    in = i;
  }
  Value hv = charge(state[0], in);
  Value hSaved = hv;
  if (roundsH) {
    auto bf16 = cast<VectorType>(hv.getType()).clone(b.getBF16Type());
    Value rounded = arith::TruncFOp::create(b, loc, bf16, hv);
    hSaved = arith::ExtFOp::create(b, loc, vecType, rounded);
  }
  if (!spec.spikes()) {
    store(hv, s, at);
    if (h)
      store(hSaved, h, at);
    if (vOut)
      store(hv, vOut, at);
    next.insert(next.begin(), hv);
    return Value();
  }
  Value spike = fires(hv);
  if (s && rowBits)
    storeRowBits(spike, s, at);
  else if (s && !spec.packsSpikes())
    store(select(spike, splat(1.0), splat(0.0)), s, at);
  if (h)
    store(hSaved, h, at);
  Value v = afterReset(hv, spike);
  if (vOut)
    store(v, vOut, at);
  next.insert(next.begin(), v);
  return spike;
}

void ThreadEmitter::storeRowBits(Value spike, Value s, Value at) {
  Type i32 = b.getI32Type();
  auto i32c = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  Value bits = i32c(0);
  for (int64_t i = 0; i < width; ++i) {
    Value fired =
        width == 1 ? spike : vector::ExtractOp::create(b, loc, spike, i);
    bits = arith::OrIOp::create(
        b, loc, bits,
        arith::ShLIOp::create(
            b, loc, arith::ExtUIOp::create(b, loc, i32, fired), i32c(i)));
  }
  Value byteAt = arith::DivUIOp::create(b, loc, at, index(8));
  auto storeByte = [&](Value v) {
    memref::StoreOp::create(b, loc,
                            arith::TruncIOp::create(b, loc, b.getI8Type(), v),
                            s, ValueRange{byteAt});
  };
  if (width == 8) {
    storeByte(bits);
    return;
  }
  assert(width == 4 && !spec.host && "row bits: 8 lanes, or 4 on the GPU");
  // Threads 2i and 2i + 1 of a warp hold neurons 8i .. 8i + 7.
  Value lane = arith::IndexCastUIOp::create(
      b, loc, i32,
      arith::RemUIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, base, index(4)), index(32)));
  Value pair = arith::ShLIOp::create(
      b, loc, i32c(3), arith::AndIOp::create(b, loc, lane, i32c(30)));
  Value other =
      NVVM::ShflOp::create(b, loc, i32, pair, bits, i32c(1), i32c(0x1f),
                           NVVM::ShflKind::bfly, UnitAttr());
  Value even = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::AndIOp::create(b, loc, lane, i32c(1)), i32c(0));
  auto ifEven = scf::IfOp::create(b, loc, even, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifEven.thenBlock());
  storeByte(arith::OrIOp::create(
      b, loc, bits, arith::ShLIOp::create(b, loc, other, i32c(4))));
}

void ThreadEmitter::spreadPooledGrad() {
  const FusedPool &pool = *spec.pool;
  int64_t pooledCols = spec.cols / pool.kw;
  int64_t pooledMap = (spec.rows / pool.kh) * pooledCols;
  IndexMath m{b, loc};
  // Neuron n is at (outer, row, col) of the [.., rows, cols] map; its
  // window is (outer, row / KH, col / KW) of the pooled map. The thread's
  // first neuron is a multiple of KW, and KW divides cols: each run of KW
  // lanes is one window row. Channels last, n is at (outer, row, col, c) of
  // [.., rows, cols, C], its window at (outer, row / KH, col / KW, c), and
  // consecutive lanes are in different windows.
  int64_t run = spec.channels == 1 ? pool.kw : 1;
  for (int64_t lane = 0; lane < width; lane += run) {
    Value n = arith::AddIOp::create(b, loc, base, index(lane));
    Value pixel = spec.channels == 1 ? n : m.divU(n, spec.channels);
    Value col = m.remU(pixel, spec.cols);
    Value row = m.remU(m.divU(pixel, spec.cols), spec.rows);
    Value outer = m.divU(pixel, spec.rows * spec.cols);
    Value inMap = m.mulAdd(m.divU(row, pool.kh), pooledCols, m.divU(col, pool.kw));
    Value window = m.mulAdd(outer, pooledMap, inMap);
    if (spec.channels > 1)
      window = m.mulAdd(window, spec.channels, m.remU(n, spec.channels));
    laneWindows.push_back(window);
  }
}

void ThreadEmitter::prepareLinearGrad() {
  if (!linearWeight)
    return;
  // The thread's lanes lie in one sample (F is a multiple of the width):
  // column c's lanes are W[c F + f ..], one access as the parameters'.
  if (!firstFeature)
    firstFeature = arith::RemUIOp::create(b, loc, base, index(spec.numFeatures));
}

/// As the time_broadcast kernel: the product in f64, rounded once.
void ThreadEmitter::prepareBroadcastGrad(Value gs) {
  if (!spec.gradBroadcastScale)
    return;
  auto wide = VectorType::get({width}, b.getF64Type());
  Value scale = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(wide, *spec.gradBroadcastScale));
  broadcastGrad = arith::TruncFOp::create(b, loc, vecType,
                                          mul(scale, widen(load(gs, base))));
}

/// As the time_sum kernel: f64 additions in step order from 0, then the
/// scale, rounded once.
Value ThreadEmitter::startTimeMean() { return widen(splat(0.0)); }

Value ThreadEmitter::addToTimeMean(Value sum, Value written) {
  return add(sum, widen(written));
}

void ThreadEmitter::storeTimeMean(Value sum) {
  auto wide = VectorType::get({width}, b.getF64Type());
  Value scale = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(wide, *spec.timeMeanScale));
  store(arith::TruncFOp::create(b, loc, vecType, mul(scale, sum)), timeMean,
        base);
}

Value ThreadEmitter::linearGradInBand(Value gy, Value at, Value hv) {
  int64_t outputs = spec.linearGradOutputs;
  // The lanes' gradient counts only inside the band (gradH): when every
  // lane is outside, nothing is loaded. Inside, the thread loads its
  // lanes' C weights and gy's row (L1/L2 hits: W is small, the row is
  // every thread's of the sample) and sums gy[row, c] W[c] over c in
  // order; holding the weights in registers instead took the SHD layer's
  // backward from 106 to 233 registers, one block per SM.
  Value outside = outsideBand(sub(hv, param(spec.vTh)));
  Value allOutside =
      vector::ExtractOp::create(b, loc, outside, ArrayRef<int64_t>{0});
  for (int64_t l = 1; l < width; ++l)
    allOutside = arith::AndIOp::create(
        b, loc, allOutside,
        vector::ExtractOp::create(b, loc, outside, ArrayRef<int64_t>{l}));
  auto ifOutside = scf::IfOp::create(b, loc, TypeRange{vecType}, allOutside,
                                     /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOutside.thenBlock());
  scf::YieldOp::create(b, loc, splat(0.0));
  b.setInsertionPointToStart(ifOutside.elseBlock());
  Value row = arith::DivUIOp::create(b, loc, at, index(spec.numFeatures));
  Value first = arith::MulIOp::create(b, loc, row, index(outputs));
  // gy's row in 16-byte loads when C is a multiple of 4 (the row then
  // starts 16-byte aligned), else one load per entry.
  SmallVector<Value> entries;
  int64_t run = outputs % 4 == 0 ? 4 : 1;
  for (int64_t c = 0; c < outputs; c += run) {
    Value i = c == 0 ? first : arith::AddIOp::create(b, loc, first, index(c));
    if (run == 1) {
      entries.push_back(memref::LoadOp::create(b, loc, gy, ValueRange{i}));
      continue;
    }
    Value part = vector::LoadOp::create(
        b, loc, VectorType::get({run}, b.getF32Type()), gy, ValueRange{i},
        /*nontemporal=*/false, llvm::MaybeAlign(16));
    for (int64_t j = 0; j < run; ++j)
      entries.push_back(
          vector::ExtractOp::create(b, loc, part, ArrayRef<int64_t>{j}));
  }
  Value sum;
  for (int64_t c = 0; c < outputs; ++c) {
    Value column = load(linearWeight,
                        c == 0 ? firstFeature
                               : arith::AddIOp::create(
                                     b, loc, firstFeature,
                                     index(c * spec.numFeatures)));
    Value term = mul(vector::BroadcastOp::create(b, loc, vecType, entries[c]),
                     column);
    sum = sum ? add(sum, term) : term;
  }
  scf::YieldOp::create(b, loc, sum);
  return ifOutside.getResult(0);
}

Value ThreadEmitter::stepOutputGrad(Value gs, Value t, Value at, Value hv) {
  return linearWeight ? linearGradInBand(gs, at, hv) : outputGrad(gs, t, at);
}

Value ThreadEmitter::outputGrad(Value gs, Value t, Value at) {
  if (broadcastGrad)
    return broadcastGrad;
  if (laneWindows.empty())
    return load(gs, at);
  Value row = arith::MulIOp::create(b, loc, t, index(spec.getNumWindows()));
  // The same scale as the tiling average pooling's backward (PoolKernels.cpp).
  const FusedPool &pool = *spec.pool;
  Value scale = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(1.0f / static_cast<float>(pool.kh * pool.kw)));
  SmallVector<Value> lanes;
  for (Value window : laneWindows) {
    Value i = arith::AddIOp::create(b, loc, row, window);
    Value g = memref::LoadOp::create(b, loc, gs, ValueRange{i});
    lanes.append(width / laneWindows.size(), pool.average ? mul(g, scale) : g);
  }
  return vector::FromElementsOp::create(b, loc, vecType, lanes);
}

Value ThreadEmitter::gradH(Value gOut, Value gv, Value hv) {
  Value one = splat(1.0), zero = splat(0.0);
  Value outside;
  Value sg = surrogate(hv, &outside);
  Value spike = fires(hv);
  Value dvdh;
  if (!spec.softReset) {
    // (1 - S) + (v_reset - H) sg; detach_reset: (1 - S)
    dvdh = select(spike, zero, one);
    if (!spec.detachReset)
      dvdh = add(dvdh, mul(sub(param(spec.vReset), hv), sg));
  } else {
    // 1 - v_th sg; detach_reset: 1
    dvdh = spec.detachReset ? one : sub(one, mul(param(spec.vTh), sg));
  }
  // With a band, gOut counts only inside it, whatever it holds outside (NaN
  // too): event_linear_band (snn.band_masked_gx) leaves it unwritten there.
  // A select, not a load under a branch: the scan is bound by the latency
  // of its loads (47k threads on the SHD layer), and loads that waited for
  // H made the H200 backward 77 -> 89 us for a third fewer bytes.
  if (outside)
    gOut = select(outside, zero, gOut);
  return add(mul(gOut, sg), mul(gv, dvdh));
}

Value ThreadEmitter::leakGrad(Value hv, Value vPrev) {
  // With decay_input c X = k X = H - V - k (v_leak - V), so
  // dH/dk = (v_leak - V) + X = (H - V) / k; else dH/dk = v_leak - V.
  if (spec.decayInput)
    return div(sub(hv, vPrev), param(spec.k));
  return sub(param(spec.vLeak), vPrev);
}

Value ThreadEmitter::membraneBefore(Value t, Value h) {
  Value isFirst =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t, index(0));
  // Step 0 reads H[0] (in bounds) and discards it.
  Value prev = arith::SelectOp::create(
      b, loc, isFirst, index(0), arith::SubIOp::create(b, loc, t, index(1)));
  Value hp = load(h, offset(prev));
  Value vInit = param(spec.vInitFromReset ? spec.vReset : spec.vInit);
  return select(isFirst, vInit, afterReset(hp, fires(hp)));
}

void ThreadEmitter::addWeightGrad(Value gk, Value gw) {
  Value k = param(spec.k);
  Value grad = mul(mul(gk, k), sub(splat(1.0), k)); // sigmoid'(w) = k (1 - k)
  auto lane = [&](int64_t i) -> Value {
    return vector::ExtractOp::create(b, loc, grad, ArrayRef<int64_t>{i});
  };
  auto atomicAdd = [&](Value v, Value at) {
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, v, gw,
                                ValueRange{at});
  };
  if (spec.plifWeightSize == 1) {
    Value sum = lane(0);
    for (int64_t i = 1; i < width; ++i)
      sum = arith::AddFOp::create(b, loc, sum, lane(i));
    atomicAdd(sum, index(0));
    return;
  }
  for (int64_t i = 0; i < width; ++i) {
    Value n = arith::AddIOp::create(b, loc, base, index(i));
    atomicAdd(lane(i),
              arith::RemUIOp::create(b, loc, n, index(spec.numFeatures)));
  }
}

Value ThreadEmitter::zeroCounts() {
  auto type = VectorType::get({width}, b.getI32Type());
  return arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, APInt(32, 0)));
}

Value ThreadEmitter::addCounts(Value counts, Value nonzero) {
  auto type = VectorType::get({width}, b.getI32Type());
  return arith::AddIOp::create(
      b, loc, counts, arith::ExtUIOp::create(b, loc, type, nonzero));
}

void ThreadEmitter::storeGradInput(Value gin, Value gx, Value at,
                                   Value &counts) {
  store(gin, gx, at);
  if (!counting && !gradBits)
    return;
  // The same test as compact_columns' on the floats (une: NaN is nonzero).
  Value nonzero = nonzeroLanes(gin);
  if (gradBits)
    storeRowBits(nonzero, gradBits, at);
  if (counting)
    counts = addCounts(counts, nonzero);
}

Value ThreadEmitter::sumCounts(Value counts) {
  Value sum = vector::ExtractOp::create(b, loc, counts, ArrayRef<int64_t>{0});
  for (int64_t l = 1; l < width; ++l)
    sum = arith::AddIOp::create(
        b, loc, sum,
        vector::ExtractOp::create(b, loc, counts, ArrayRef<int64_t>{l}));
  return sum;
}

Value ThreadEmitter::recomputeChunk(Value first, int64_t len, Value v,
                                    Value gv, ValueRange args, Value &counts,
                                    MutableArrayRef<Value> bnSums) {
  Value gs = args[0], x = args[1], gx = args[3];
  SmallVector<Value> ts, ats, xs, hs;
  for (int64_t i = 0; i < len; ++i) {
    Value t = arith::AddIOp::create(b, loc, first, index(i));
    Value at = offset(t);
    Value xv = load(x, at);
    // The same arithmetic as forwardStep's (a fused batch norm's affine).
    Value in = bnScale ? add(mul(xv, bnScale), bnShift) : xv;
    Value hv = charge(v, in);
    v = afterReset(hv, fires(hv));
    ts.push_back(t);
    ats.push_back(at);
    xs.push_back(xv);
    hs.push_back(hv);
  }
  Value decay = sub(splat(1.0), param(spec.k));
  for (int64_t i = len - 1; i >= 0; --i) {
    Value gh = gradH(stepOutputGrad(gs, ts[i], ats[i], hs[i]), gv, hs[i]);
    Value gin = mul(param(spec.c), gh);
    storeGradInput(gin, gx, ats[i], counts);
    if (!bnSums.empty())
      llvm::copy(addBatchNormSums(bnSums, gin, xs[i]), bnSums.begin());
    gv = mul(gh, decay);
  }
  return gv;
}

SmallVector<Value, 2> ThreadEmitter::emitBackwardRecompute(ValueRange args) {
  Value ckpt = args[2];
  // A fused batch norm: the training forward's affine, then (with its
  // backward's sums) the saved statistics for xhat.
  unsigned bnArgs = spec.getNumBatchNormArgs(KernelKind::Backward);
  ValueRange bnForward = args.slice(4, std::min(bnArgs, 5u));
  loadBatchNorm(bnForward);
  SmallVector<Value, 2> bnSums;
  if (spec.fusesBatchNormBackward())
    bnSums = startBatchNormSums(bnForward[2], bnForward[3]);
  loadParams(args.drop_front(4 + bnArgs));
  prepareLinearGrad();
  prepareBroadcastGrad(args[0]);
  int64_t chunk = spec.storage.recomputeChunk;
  int64_t chunks = spec.getNumChunks();
  Value vInit = param(spec.vInitFromReset ? spec.vReset : spec.vInit);
  // The membrane before chunk j (dynamic): v_init for the first chunk, else
  // its checkpoint.
  auto chunkStart = [&](Value j) -> Value {
    Value isFirst =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, j, index(0));
    auto ifFirst = scf::IfOp::create(b, loc, TypeRange{vecType}, isFirst,
                                     /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    scf::YieldOp::create(b, loc, vInit);
    b.setInsertionPointToStart(ifFirst.elseBlock());
    Value row = arith::MulIOp::create(
        b, loc, arith::SubIOp::create(b, loc, j, index(1)),
        index(spec.numNeurons));
    scf::YieldOp::create(b, loc,
                         load(ckpt, arith::AddIOp::create(b, loc, row, base)));
    return ifFirst.getResult(0);
  };
  // The last chunk (possibly shorter), then the full ones in reverse.
  int64_t lastFirst = (chunks - 1) * chunk;
  Value counts = counting ? zeroCounts() : Value();
  Value gv = recomputeChunk(index(lastFirst), spec.numSteps - lastFirst,
                            chunkStart(index(chunks - 1)), splat(0.0), args,
                            counts, bnSums);
  if (chunks > 1) {
    // Carried: gv, the count, the batch norm sums.
    SmallVector<Value> init{gv};
    if (counting)
      init.push_back(counts);
    llvm::append_range(init, bnSums);
    auto loop = scf::ForOp::create(
        b, loc, index(0), index(chunks - 1), index(1), init,
        [&](OpBuilder &, Location, Value r, ValueRange grads) {
          Value j = arith::SubIOp::create(b, loc, index(chunks - 2), r);
          Value first = arith::MulIOp::create(b, loc, j, index(chunk));
          Value chunkCounts = counting ? grads[1] : Value();
          SmallVector<Value, 2> chunkSums(grads.take_back(bnSums.size()));
          SmallVector<Value> next{recomputeChunk(first, chunk, chunkStart(j),
                                                 grads[0], args, chunkCounts,
                                                 chunkSums)};
          if (counting)
            next.push_back(chunkCounts);
          llvm::append_range(next, chunkSums);
          scf::YieldOp::create(b, loc, next);
        });
    if (counting)
      counts = loop.getResult(1);
    llvm::copy(loop.getResults().take_back(bnSums.size()), bnSums.begin());
  }
  if (counting)
    count = sumCounts(counts);
  if (bnSums.empty())
    return {};
  return finishBatchNormSums(bnSums);
}

void ThreadEmitter::emitForward(ValueRange args, bool saveH, bool record) {
  Value x = args[0], s = args[1];
  Value ckpt = saveH && spec.recomputes() ? args[2] : Value();
  Value h = (saveH && !ckpt) || record ? args[2] : Value();
  Value iSaved = saveH && spec.hasSynapse() ? args[3] : Value();
  Value vOut = record ? args[3] : Value();
  roundsH = h && !record && spec.storage.bf16HInF32;
  rowBits = saveH && !record && spec.rowSpikeBits;
  unsigned numOutputs = record ? 4 : !saveH ? 2 : spec.hasSynapse() ? 4 : 3;
  ValueRange stateArgs = chainedStateArgs(args, numOutputs);
  unsigned numFixed = numOutputs + stateArgs.size();
  unsigned bnArgs = spec.getNumBatchNormArgs(
      record  ? KernelKind::ForwardRecord
      : saveH ? KernelKind::ForwardSaveH
              : KernelKind::Forward);
  loadBatchNorm(args.slice(numFixed, bnArgs));
  loadParams(args.drop_front(numFixed + bnArgs));

  SmallVector<Value> init =
      spec.chainsState
          ? loadState(stateArgs.take_front(spec.getNumStateTensors()))
          : initialState();
  if (!spec.packsSpikes()) {
    // The spikes counted per lane, after the state.
    if (counting)
      init.push_back(zeroCounts());
    // The fused time mean's sum, after them.
    bool sums = timeMean && saveH && !record;
    if (sums)
      init.push_back(startTimeMean());
    size_t extras = (counting ? 1 : 0) + (sums ? 1 : 0);
    // Then the inputs of the next `depth` steps, loaded ahead.
    size_t carried = init.size();
    int64_t depth = record ? 0 : getForwardPrefetchDepth(spec, saveH);
    Value last = index(spec.numSteps - 1);
    for (int64_t j = 0; j < depth; ++j)
      init.push_back(load(x, offset(index(std::min(j, spec.numSteps - 1)))));
    auto loop = scf::ForOp::create(
        b, loc, index(0), index(spec.numSteps), index(1), init,
        [&](OpBuilder &, Location, Value t, ValueRange loopState) {
          ValueRange state = loopState.take_front(carried);
          SmallVector<Value> next;
          Value fresh;
          if (depth) {
            // Step t + depth's input (the last step's again near the end:
            // in bounds, unused) goes out before step t's arithmetic.
            Value ahead = arith::MinUIOp::create(
                b, loc, arith::AddIOp::create(b, loc, t, index(depth)), last);
            fresh = load(x, offset(ahead));
          }
          Value spike = forwardStep(t, state.drop_back(extras), x, s, h,
                                    iSaved, ckpt, next, vOut,
                                    depth ? loopState[carried] : Value());
          if (counting)
            next.push_back(addCounts(state[carried - extras], spike));
          if (sums) {
            // What the step wrote: li's membrane, else the spike as 0 or 1.
            Value written = spike ? select(spike, splat(1.0), splat(0.0))
                                  : next.front();
            next.push_back(addToTimeMean(state.back(), written));
          }
          if (depth) {
            for (int64_t j = 1; j < depth; ++j)
              next.push_back(loopState[carried + j]);
            next.push_back(fresh);
          }
          scf::YieldOp::create(b, loc, next);
        });
    ValueRange results = loop.getResults().take_front(carried);
    if (sums) {
      storeTimeMean(results.back());
      results = results.drop_back();
    }
    if (counting) {
      count = sumCounts(results.back());
      results = results.drop_back();
    }
    if (spec.chainsState)
      storeState(results, stateArgs.drop_front(spec.getNumStateTensors()));
    return;
  }
  assert(!counting && "packed spikes are not counted");
  assert(!timeMean && "packed spikes are not added up");

  // Packed spikes: an outer loop over words, an inner one over the steps of
  // a word that ORs each step's spike into bit j of the lanes' word.
  int64_t bits = spec.getSpikeWordBits();
  auto wordType = VectorType::get({width}, b.getIntegerType(bits));
  Value zeroWord = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(wordType, APInt(bits, 0)));
  Value oneWord = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(wordType, APInt(bits, 1)));
  auto words = scf::ForOp::create(
      b, loc, index(0), index(spec.getNumSpikeWords()), index(1), init,
      [&](OpBuilder &, Location, Value w, ValueRange outerState) {
        Value first = arith::MulIOp::create(b, loc, w, index(bits));
        Value left = arith::SubIOp::create(b, loc, index(spec.numSteps), first);
        Value count = arith::MinUIOp::create(b, loc, left, index(bits));
        SmallVector<Value> inner(outerState);
        inner.push_back(zeroWord);
        auto steps = scf::ForOp::create(
            b, loc, index(0), count, index(1), inner,
            [&](OpBuilder &, Location, Value j, ValueRange state) {
              Value t = arith::AddIOp::create(b, loc, first, j);
              SmallVector<Value> next;
              Value spike =
                  forwardStep(t, state.drop_back(), x, s, h, iSaved,
                              ckpt, next, vOut);
              Value shift = vector::BroadcastOp::create(
                  b, loc, wordType,
                  arith::IndexCastOp::create(b, loc, b.getIntegerType(bits),
                                             j));
              Value bit = arith::ShLIOp::create(
                  b, loc, select(spike, oneWord, zeroWord), shift);
              next.push_back(arith::OrIOp::create(b, loc, state.back(), bit));
              scf::YieldOp::create(b, loc, next);
            });
        Value row = arith::MulIOp::create(b, loc, w, index(spec.numNeurons));
        store(steps.getResults().back(), s,
              arith::AddIOp::create(b, loc, row, base));
        scf::YieldOp::create(b, loc, steps.getResults().drop_back());
      });
  if (spec.chainsState)
    storeState(words.getResults(),
               stateArgs.drop_front(spec.getNumStateTensors()));
}

SmallVector<Value, 2> ThreadEmitter::emitBackward(ValueRange args) {
  Value gs = args[0], h = args[1], gx = args[2];
  Value gw = spec.learnsLeak() ? args[3] : Value();
  unsigned numFixed = spec.hasSynapse() || spec.learnsLeak() ? 4 : 3;
  ValueRange stateArgs = chainedStateArgs(args, numFixed);
  unsigned bnArgs = spec.getNumBatchNormArgs(KernelKind::Backward);
  ValueRange bnBackward = args.slice(numFixed + stateArgs.size(), bnArgs);
  loadParams(args.drop_front(numFixed + stateArgs.size() + bnArgs));
  prepareLinearGrad();
  prepareBroadcastGrad(gs);

  Value one = splat(1.0), zero = splat(0.0);
  Value decay = sub(one, param(spec.k));
  Value synDecay = spec.hasSynapse() ? sub(one, param(spec.kSyn)) : Value();
  SmallVector<Value> init{zero};
  if (spec.hasSynapse())
    init.push_back(zero);
  // A chained layer's scan starts from the gradient of its final state.
  if (spec.chainsState)
    init = loadState(stateArgs.take_front(spec.getNumStateTensors()));
  // plif: dL/dk of the thread's lanes, summed over the steps.
  if (gw)
    init.push_back(zero);
  // The batch norm backward's sums of the lanes.
  Value bnX;
  size_t bnSums = init.size();
  if (!bnBackward.empty()) {
    bnX = bnBackward[0];
    llvm::append_range(init,
                       startBatchNormSums(bnBackward[1], bnBackward[2]));
  }
  // The nonzero gx lanes, last.
  size_t countAt = init.size();
  if (counting)
    init.push_back(zeroCounts());
  Value last = index(spec.numSteps - 1);
  // A step's loads (reverse-time scan: step r is t = T-1-r), then its
  // arithmetic on the carried gradients.
  struct StepInputs {
    Value t, at, gOut, hv, x;
  };
  // Step u of the iteration from `first` (step r = first + u is t = T-1-r).
  auto locate = [&](Value first, int64_t u) {
    StepInputs in;
    Value r = u == 0 ? first : arith::AddIOp::create(b, loc, first, index(u));
    in.t = arith::SubIOp::create(b, loc, last, r);
    in.at = offset(in.t);
    return in;
  };
  auto loadStep = [&](StepInputs in) {
    // A fused thin linear's gradient is formed at the step, from its H
    // (a constant stands in for it among the loads carried ahead).
    in.gOut = linearWeight ? splat(0.0) : outputGrad(gs, in.t, in.at);
    // li: the output is H itself and the membrane is not reset.
    if (spec.spikes())
      in.hv = load(h, in.at);
    if (bnX)
      in.x = load(bnX, in.at);
    return in;
  };
  auto step = [&](const StepInputs &in, ValueRange grads) {
    Value gv = grads[0];
    Value gOut =
        linearWeight ? linearGradInBand(gs, in.at, in.hv) : in.gOut;
    Value gh = spec.spikes() ? gradH(gOut, gv, in.hv) : add(gOut, gv);
    Value gin = mul(param(spec.c), gh);
    SmallVector<Value> next{mul(gh, decay)};
    if (spec.hasSynapse()) {
      Value gi = add(gin, grads[1]);
      gin = mul(param(spec.cSyn), gi);
      next.push_back(mul(gi, synDecay));
    }
    Value counts = counting ? grads[countAt] : Value();
    storeGradInput(gin, gx, in.at, counts);
    if (gw)
      next.push_back(add(grads.back(),
                         mul(gh, leakGrad(in.hv, membraneBefore(in.t, h)))));
    if (bnX)
      llvm::append_range(
          next, addBatchNormSums(grads.slice(bnSums, 2), gin, in.x));
    if (counting)
      next.push_back(counts);
    return next;
  };
  int64_t stepsAtOnce = getBackwardStepsPerIteration(spec);
  auto loadSteps = [&](Value first) {
    SmallVector<StepInputs, 4> inputs;
    for (int64_t u = 0; u < stepsAtOnce; ++u)
      inputs.push_back(loadStep(locate(first, u)));
    return inputs;
  };
  auto runSteps = [&](ArrayRef<StepInputs> inputs, ValueRange grads) {
    SmallVector<Value> carried(grads);
    for (const StepInputs &in : inputs)
      carried = step(in, carried);
    return carried;
  };
  // Software pipelining (a layer with few threads, steps loaded several
  // at once): an iteration issues the next iteration's loads before its
  // own arithmetic and stores, on the inputs the previous one loaded, so
  // that a thread's loads are in flight while it computes (the backward is
  // bound by their latency, not by the bandwidth). The last iteration
  // loads its own steps again (clamped), unused. Same arithmetic in the
  // same order. On an H200 the SHD step went 1.117 -> 1.095 ms at 1%
  // (bench/results/2026-12-03-H200-band-consumer.md).
  // A step's loads carried ahead: gOut, and H when the layer spikes (li
  // reads no H).
  bool pipelined = stepsAtOnce > 1 && !bnX;
  int64_t perStep = spec.spikes() ? 2 : 1;
  auto appendLoaded = [&](SmallVectorImpl<Value> &to, const StepInputs &in) {
    to.push_back(in.gOut);
    if (spec.spikes())
      to.push_back(in.hv);
  };
  size_t numCarried = init.size();
  SmallVector<Value> loopInit(init);
  if (pipelined)
    for (const StepInputs &in : loadSteps(index(0)))
      appendLoaded(loopInit, in);
  auto loop = scf::ForOp::create(
      b, loc, index(0), index(spec.numSteps), index(stepsAtOnce), loopInit,
      [&](OpBuilder &, Location, Value first, ValueRange iterArgs) {
        ValueRange grads = iterArgs.take_front(numCarried);
        if (!pipelined) {
          scf::YieldOp::create(b, loc, runSteps(loadSteps(first), grads));
          return;
        }
        Value next = arith::MinUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, first, index(stepsAtOnce)),
            index(spec.numSteps - stepsAtOnce));
        SmallVector<StepInputs, 4> ahead = loadSteps(next);
        SmallVector<StepInputs, 4> inputs;
        ValueRange loaded = iterArgs.drop_front(numCarried);
        for (int64_t u = 0; u < stepsAtOnce; ++u) {
          StepInputs in = locate(first, u);
          in.gOut = loaded[perStep * u];
          if (spec.spikes())
            in.hv = loaded[perStep * u + 1];
          inputs.push_back(in);
        }
        SmallVector<Value> yielded = runSteps(inputs, grads);
        for (const StepInputs &in : ahead)
          appendLoaded(yielded, in);
        scf::YieldOp::create(b, loc, yielded);
      });
  ValueRange results = loop.getResults().take_front(numCarried);
  if (counting)
    count = sumCounts(results[countAt]);
  if (gw)
    addWeightGrad(results[bnSums - 1], gw);
  // What the scan carries past step 0 is the initial state's gradient.
  if (spec.chainsState)
    storeState(results, stateArgs.drop_front(spec.getNumStateTensors()));
  if (!bnX)
    return {};
  return finishBatchNormSums(results.slice(bnSums, 2));
}

SmallVector<Value, 2> ThreadEmitter::startBatchNormSums(Value mean,
                                                       Value invstd) {
  // The thread's lanes are in one channel (NeuronSpec::bnPlaneSlots).
  Value plane = arith::DivUIOp::create(b, loc, base, index(spec.bnSpatial));
  Value c = arith::RemUIOp::create(b, loc, plane, index(spec.bnChannels));
  auto channelLanes = [&](Value memref) -> Value {
    Value v = memref::LoadOp::create(b, loc, memref, ValueRange{c});
    return widen(vector::BroadcastOp::create(b, loc, vecType, v));
  };
  bnMean = channelLanes(mean);
  bnInvstd = channelLanes(invstd);
  Value zero = widen(splat(0.0));
  return {zero, zero};
}

SmallVector<Value, 2> ThreadEmitter::addBatchNormSums(ValueRange sums,
                                                     Value gin, Value x) {
  // gY = gin; xhat = (x - mean) invstd, in f64 as the batch norm's
  // statistics kernel adds them.
  Value gy = widen(gin);
  Value xhat = mul(sub(widen(x), bnMean), bnInvstd);
  return {add(sums[0], gy), add(sums[1], mul(gy, xhat))};
}

SmallVector<Value, 2> ThreadEmitter::finishBatchNormSums(ValueRange sums) {
  // The lanes in order.
  SmallVector<Value, 2> totals;
  for (Value lanes : sums) {
    Value sum = vector::ExtractOp::create(b, loc, lanes, ArrayRef<int64_t>{0});
    for (int64_t l = 1; l < width; ++l)
      sum = add(sum, vector::ExtractOp::create(b, loc, lanes,
                                               ArrayRef<int64_t>{l}));
    totals.push_back(sum);
  }
  return totals;
}

Value ThreadEmitter::widen(Value lanes) {
  auto wide = VectorType::get({width}, b.getF64Type());
  return arith::ExtFOp::create(b, loc, wide, lanes);
}

SmallVector<Value, 2>
kernelgen::buildBatchNormBackwardSlot(OpBuilder &b, Location loc,
                                      const NeuronSpec &spec, Value slot,
                                      ValueRange args) {
  IndexMath m{b, loc};
  int64_t threads = spec.getPlaneThreads(), slots = spec.bnPlaneSlots;
  int64_t planes = spec.getNumThreads() / threads;
  // Slot `local` of plane `plane` holds thread plane * threads + local.
  Value plane = m.divU(slot, slots), local = m.remU(slot, slots);
  Value thread = slots == threads ? slot : m.mulAdd(plane, threads, local);
  auto below = [&](Value v, int64_t bound) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v,
                                 m.index(bound));
  };
  Value valid = below(plane, planes);
  if (slots != threads)
    valid = arith::AndIOp::create(b, loc, valid, below(local, threads));
  Type f64 = b.getF64Type();
  auto guard = scf::IfOp::create(b, loc, TypeRange{f64, f64}, valid,
                                 /*withElseRegion=*/true);
  OpBuilder::InsertionGuard ig(b);
  b.setInsertionPointToStart(guard.thenBlock());
  scf::YieldOp::create(
      b, loc,
      buildNeuronThread(b, loc, spec, KernelKind::Backward, thread, args));
  b.setInsertionPointToStart(guard.elseBlock());
  Value zero = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(0.0));
  scf::YieldOp::create(b, loc, ValueRange{zero, zero});
  return guard.getResults();
}

void kernelgen::storeBatchNormPartials(OpBuilder &b, Location loc,
                                       const NeuronSpec &spec, ValueRange args,
                                       Value segment, ValueRange sums) {
  IndexMath m{b, loc};
  // Runs of a plane (sample, c) are consecutive; part (sample, run) of c.
  int64_t runs = spec.bnPlaneSlots / spec.bnSegment;
  Value plane = m.divU(segment, runs);
  Value sample = m.divU(plane, spec.bnChannels);
  Value c = m.remU(plane, spec.bnChannels);
  Value part = m.mulAdd(sample, runs, m.remU(segment, runs));
  Value at = arith::MulIOp::create(b, loc, m.mulAdd(c, spec.bnParts, part),
                                   m.index(4));
  Value scratch = args[spec.getBatchNormSumsArg()];
  int64_t k = 0;
  for (Value sum : sums) {
    // As the statistics kernel stores them: f32 high and low parts.
    Value high = arith::TruncFOp::create(b, loc, b.getF32Type(), sum);
    Value rest = arith::SubFOp::create(
        b, loc, sum, arith::ExtFOp::create(b, loc, b.getF64Type(), high));
    Value low = arith::TruncFOp::create(b, loc, b.getF32Type(), rest);
    for (Value v : {high, low}) {
      Value i = arith::AddIOp::create(b, loc, at, m.index(k++));
      memref::StoreOp::create(b, loc, v, scratch, ValueRange{i});
    }
  }
}

void ThreadEmitter::emitStep(ValueRange args, bool saveH) {
  unsigned states = spec.getNumStateTensors();
  Value x = args[0];
  ValueRange stateIn = args.slice(1, states);
  unsigned next = 1 + states;
  Value s = args[next++];
  // li: the output is the next membrane.
  ValueRange stateOut = args.slice(next, spec.spikes() ? states : 0);
  next += stateOut.size();
  Value h = saveH ? args[next++] : Value();
  SmallVector<Value> paramArgs;
  if (spec.learnsLeak())
    paramArgs.push_back(args[next++]);
  if (spec.stepAddend)
    addend = args[next++];
  llvm::append_range(paramArgs, args.drop_front(next));
  loadParams(paramArgs);
  SmallVector<Value> state = loadState(stateIn), after;
  forwardStep(index(0), state, x, s, h, Value(), Value(), after);
  storeState(after, stateOut);
}

void ThreadEmitter::emitStepBackward(ValueRange args) {
  unsigned grads = spec.getNumStateTensors() + 1;
  Value gs = args[0], giNext = spec.hasSynapse() ? args[1] : Value();
  Value gvNext = args[grads - 1], h = args[grads];
  ValueRange out = args.slice(grads + 1, grads);
  Value gx = out[0], gi = spec.hasSynapse() ? out[1] : Value();
  Value gv = out[grads - 1];
  unsigned next = 2 * grads + 1;
  Value gw, vBefore;
  if (spec.learnsLeak()) {
    gw = args[next++];
    vBefore = args[next++];
  }
  loadParams(args.drop_front(next));

  Value one = splat(1.0);
  Value gOut = load(gs, base), gvIn = load(gvNext, base);
  Value hv, gh;
  if (spec.spikes()) {
    hv = load(h, base);
    gh = gradH(gOut, gvIn, hv);
  } else {
    gh = add(gOut, gvIn); // li: the output is H itself
  }
  store(mul(gh, sub(one, param(spec.k))), gv, base);
  Value gin = mul(param(spec.c), gh);
  if (spec.hasSynapse()) {
    Value g = add(gin, load(giNext, base));
    gin = mul(param(spec.cSyn), g);
    store(mul(g, sub(one, param(spec.kSyn))), gi, base);
  }
  store(gin, gx, base);
  if (gw)
    addWeightGrad(mul(gh, leakGrad(hv, load(vBefore, base))), gw);
}

SmallVector<Value, 2> kernelgen::buildNeuronThread(OpBuilder &b, Location loc,
                                                   const NeuronSpec &spec,
                                                   KernelKind kind,
                                                   Value thread,
                                                   ValueRange args,
                                                   Value *count) {
  if (spec.pool)
    return buildPooledNeuronThread(b, loc, spec, kind, thread, args);
  Value base = arith::MulIOp::create(
      b, loc, thread, arith::ConstantIndexOp::create(b, loc, spec.getWidth()));
  ThreadEmitter emitter(b, loc, spec, base);
  bool counting = count && spec.countsOutput(kind);
  if (counting)
    emitter.countOutputs();
  // gx's row bits are the last tensor, before the count's arguments.
  if (spec.writesGradBits(kind)) {
    emitter.writeGradBits(args.back());
    args = args.drop_back();
  }
  // The fused time mean's output, after the parameters.
  if (spec.writesTimeMean(kind)) {
    emitter.writeTimeMean(args.back());
    args = args.drop_back();
  }
  // A fused thin linear's weight, after the parameters.
  if (spec.readsLinearGrad(kind)) {
    emitter.readLinearGrad(args.back());
    args = args.drop_back();
  }
  SmallVector<Value, 2> sums;
  if (spec.step) {
    assert(kind != KernelKind::ForwardRecord && "steps are not recorded");
    if (kind == KernelKind::Backward)
      emitter.emitStepBackward(args);
    else
      emitter.emitStep(args, kind == KernelKind::ForwardSaveH);
  } else if (kind == KernelKind::Backward) {
    sums = spec.recomputes() ? emitter.emitBackwardRecompute(args)
                             : emitter.emitBackward(args);
  } else {
    emitter.emitForward(args, kind == KernelKind::ForwardSaveH,
                        kind == KernelKind::ForwardRecord);
  }
  if (counting)
    *count = emitter.getCount();
  return sums;
}

LogicalResult kernelgen::expandBF16Conversions(Operation *root) {
  RewritePatternSet patterns(root->getContext());
  arith::populateExpandBFloat16Patterns(patterns);
  return applyPatternsGreedily(root, std::move(patterns));
}

LogicalResult kernelgen::expandMathOps(Operation *root) {
  RewritePatternSet patterns(root->getContext());
  populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
    return name == "exp" || name == "math.exp";
  });
  return applyPatternsGreedily(root, std::move(patterns));
}
