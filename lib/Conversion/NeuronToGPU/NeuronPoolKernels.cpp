//===- NeuronPoolKernels.cpp - a neuron layer and its pooling, one kernel -===//
//
// A layer fused with its average or sum pooling (--snn-fuse) has one thread
// per pooling window. The window tiles the [.., H, W] map, so the thread owns
// its KH x KW neurons. Channels last ([.., H, W, C]), a thread has a window
// of one channel, its neurons C apart, and neighbouring threads neighbouring
// channels (their accesses coalesce). The forward keeps their state in
// registers, runs each step of the same ThreadEmitter as the unfused kernel
// with the window's neurons as its lanes (KH runs of KW: one access per
// window row; channels last, one per neuron), counts the window's spikes
// and writes the pooled value only; the spike tensor is never written. In
// training it also saves what the backward reads (H or the membrane
// checkpoints, I), per neuron as the unfused kernel does. The backward, on
// the same grid, runs the unfused backward scan over KH KW consecutive
// neurons a thread (their windows' gradients, not the spikes', are what
// each lane reads: the pooling's backward is a spread, and the spikes'
// gradient is never written).
// Nothing in the BPTT formulas needs the spikes themselves: the backward
// recomputes them from H (or from the checkpoints and x).
//
//===----------------------------------------------------------------------===//

#include "NeuronThreadEmitter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::snn;
using namespace mlir::snn::kernelgen;

SmallVector<Value, 2>
kernelgen::buildPooledNeuronThread(OpBuilder &b, Location loc,
                                   const NeuronSpec &spec, KernelKind kind,
                                   Value thread, ValueRange args) {
  assert(kind != KernelKind::ForwardRecord && "pooled layers are not recorded");
  const FusedPool &pool = *spec.pool;
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto mulI = [&](Value a, int64_t c) -> Value {
    return arith::MulIOp::create(b, loc, a, index(c));
  };
  auto addI = [&](Value a, Value c) -> Value {
    return arith::AddIOp::create(b, loc, a, c);
  };
  if (kind == KernelKind::Backward) {
    // The neurons are independent in the backward: the thread scans KH KW
    // consecutive ones (as many as a window, on the forward's grid) as the
    // unfused backward does, each lane reading its window's gradient.
    ThreadEmitter emitter(b, loc, spec, mulI(thread, spec.getWidth()));
    emitter.spreadPooledGrad();
    return spec.recomputes() ? emitter.emitBackwardRecompute(args)
                             : emitter.emitBackward(args);
  }

  // Window (outer, i, j) of the (H/KH) x (W/KW) pooled map of each outer
  // index (batch and channel); channels last, (outer, i, j, c) of the
  // (H/KH) x (W/KW) x C map of each outer index (batch).
  int64_t pooledCols = spec.cols / pool.kw;
  int64_t pooledMap = (spec.rows / pool.kh) * pooledCols;
  int64_t channels = spec.channels;
  Value tile = thread;
  if (channels > 1)
    tile = arith::DivUIOp::create(b, loc, thread, index(channels));
  Value outer = arith::DivUIOp::create(b, loc, tile, index(pooledMap));
  Value inMap = arith::RemUIOp::create(b, loc, tile, index(pooledMap));
  Value i = arith::DivUIOp::create(b, loc, inMap, index(pooledCols));
  Value j = arith::RemUIOp::create(b, loc, inMap, index(pooledCols));
  Value corner = addI(addI(mulI(outer, spec.rows * spec.cols),
                           mulI(i, pool.kh * spec.cols)),
                      mulI(j, pool.kw));
  if (channels > 1)
    corner = addI(mulI(corner, channels),
                  arith::RemUIOp::create(b, loc, thread, index(channels)));

  // x, p, then in training H (or the checkpoints) and I (cuba_lif).
  bool saveH = kind == KernelKind::ForwardSaveH;
  Value x = args[0], pooled = args[1];
  Value ckpt = saveH && spec.recomputes() ? args[2] : Value();
  Value h = saveH && !ckpt ? args[2] : Value();
  Value iSaved = saveH && spec.hasSynapse() ? args[3] : Value();
  unsigned numOutputs = !saveH ? 2 : spec.hasSynapse() ? 4 : 3;
  // The window's KH x KW neurons are the emitter's lanes, KH runs of KW;
  // its parameters (and the affine of a fused batch norm) are loaded before
  // the scan.
  ThreadEmitter window(b, loc, spec, corner);
  window.splitLanes(pool.kw, spec.cols * channels, channels);
  unsigned bnArgs = spec.getNumBatchNormArgs(kind);
  window.loadBatchNorm(args.slice(numOutputs, bnArgs));
  window.loadParams(args.drop_front(numOutputs + bnArgs));
  if (h)
    window.roundSavedH();

  Value area = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(static_cast<float>(pool.kh * pool.kw)));
  scf::ForOp::create(
      b, loc, index(0), index(spec.numSteps), index(1), window.initialState(),
      [&](OpBuilder &, Location, Value t, ValueRange state) {
        SmallVector<Value> next;
        Value spike = window.forwardStep(t, state, x, /*s=*/Value(), h, iSaved,
                                         ckpt, next);
        Value ones = arith::SelectOp::create(b, loc, spike, window.splat(1.0),
                                             window.splat(0.0));
        Value count = vector::ReductionOp::create(
            b, loc, vector::CombiningKind::ADD, ones);
        // The same division as the unfused average pooling kernel.
        if (pool.average)
          count = arith::DivFOp::create(b, loc, count, area);
        Value at = addI(mulI(t, spec.getNumWindows()), thread);
        memref::StoreOp::create(b, loc, count, pooled, ValueRange{at});
        scf::YieldOp::create(b, loc, next);
      });
  return {};
}
