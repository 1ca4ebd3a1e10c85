//===- HostEventConv.cpp - event-driven convolutions on the CPU ----------===//
//
// y = conv(x, w) + b over x's nonzeros, on the CPU. A dense convolution
// multiplies every input by every tap's O weights; here an image visits its
// inputs in memory order and, for each nonzero one, adds its value times the
// O weights of every tap whose window reaches an output (wt, the weight
// transposed to [taps, O]: a tap's weights are one contiguous row) into
// that output pixel's O sums, 8 at a time in vector registers. The sums
// live as [OH OW, O]: in y itself when it is NHWC, else in a scratch image
// that is then written to y's [O, OH OW] planes.
//
// The weight gradient (event_conv2d_weight_grad) walks the same taps: per
// input channel, each nonzero input adds its value times gy's O values at
// the output a tap reaches to that tap's row of gwᵀ [taps, O].
//
// Each output is the same sum for every thread count: 0, then the terms in
// the input's memory order (gw: images, then the input's pixels), then the
// bias. The dense path (im2col and BLAS)
// sums in another order, so the two agree to rounding, not bit for bit
// (test/Runtime/event-conv.test).
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/HostKernelRange.h"
#include "snn/Conversion/NeuronToGPU/KernelArith.h"
#include "snn/Conversion/NeuronToGPU/SparseKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

using namespace mlir;
using namespace mlir::snn;

namespace {
/// Output channels a vector holds (AVX2).
constexpr int64_t kLanes = 8;

class Emitter : public KernelArith {
public:
  Emitter(OpBuilder &b, Location loc) : KernelArith(b, loc) {}

  using KernelArith::openFor;
  Value openFor(int64_t count) { return openFor(idx(0), idx(count), 1); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value andI(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }

  /// The output that tap `tap` of an input at `in` reaches along one axis
  /// (o stride = in + pad - tap dil), and whether it does (in `ok`).
  Value reach(Value in, int64_t pad, int64_t tap, int64_t dil, int64_t stride,
              int64_t size, Value &ok) {
    Value t = subI(addI(in, idx(pad)), idx(tap * dil));
    // As a signed index: below zero misses.
    Value inRange = cmp(arith::CmpIPredicate::sge, t, idx(0));
    Value o = t;
    if (stride > 1) {
      inRange = andI(inRange,
                     cmp(arith::CmpIPredicate::eq,
                         arith::RemSIOp::create(b, loc, t, idx(stride)), idx(0)));
      o = arith::DivSIOp::create(b, loc, t, idx(stride));
    }
    ok = andI(inRange, cmp(arith::CmpIPredicate::slt, o, idx(size)));
    return o;
  }

  /// For each tap (ky, kx) of the input (c, iy, ix) that reaches an output
  /// pixel, `body(row, pixel)`: the tap's row of wt (OIHW order (c, ky, kx),
  /// OHWI (ky, kx, c)) and the output pixel oy OW + ox.
  void forEachTap(const ConvColumnsGeometry &g, Value c, Value iy, Value ix,
                  function_ref<void(Value, Value)> body) {
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      Value okY;
      Value oy = reach(iy, g.ph, ky, g.dh, g.sh, g.oh, okY);
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        OpBuilder::InsertionGuard tap(b);
        Value okX;
        Value ox = reach(ix, g.pw, kx, g.dw, g.sw, g.ow, okX);
        openIf(andI(okY, okX));
        Value row = g.channelsLast
                        ? addI(idx((ky * g.kw + kx) * g.channels), c)
                        : addI(mulI(c, idx(g.kh * g.kw)), idx(ky * g.kw + kx));
        body(row, addI(mulI(oy, idx(g.ow)), ox));
      }
    }
  }

  /// x's element (c, iy, ix) of an image starting at `image`: NCHW or NHWC.
  Value inputAt(const ConvColumnsGeometry &g, Value image, Value c, Value iy,
                Value ix) {
    Value at = g.channelsLast
                   ? addI(mulI(addI(mulI(iy, idx(g.w)), ix), idx(g.channels)), c)
                   : addI(mulI(addI(mulI(c, idx(g.h)), iy), idx(g.w)), ix);
    return addI(image, at);
  }

  /// acc[at .. at + n) op= v * w[from .. from + n) (v null: += w), kLanes
  /// at a time, then one at a time.
  void addRow(Value acc, Value at, Value w, Value from, int64_t n, Value v) {
    int64_t vectors = n / kLanes * kLanes;
    auto vecType = VectorType::get({kLanes}, b.getF32Type());
    if (vectors) {
      OpBuilder::InsertionGuard g(b);
      Value o = openFor(idx(0), idx(vectors), kLanes);
      Value term = vector::LoadOp::create(b, loc, vecType, w,
                                          ValueRange{addI(from, o)});
      if (v)
        term = mul(vector::BroadcastOp::create(b, loc, vecType, v), term);
      Value sum = add(vector::LoadOp::create(b, loc, vecType, acc,
                                             ValueRange{addI(at, o)}),
                      term);
      vector::StoreOp::create(b, loc, sum, acc, ValueRange{addI(at, o)});
    }
    if (vectors < n) {
      OpBuilder::InsertionGuard g(b);
      Value o = openFor(idx(vectors), idx(n), 1);
      Value term = load(w, addI(from, o));
      if (v)
        term = mul(v, term);
      store(add(load(acc, addI(at, o)), term), acc, addI(at, o));
    }
  }
};
} // namespace

void mlir::snn::emitEventConvHost(OpBuilder &b, Location loc,
                                  const OpKernelSpec &spec, func::FuncOp fn,
                                  ValueRange args) {
  const ConvColumnsGeometry &g = spec.columns;
  int64_t outChannels = spec.outFeatures, pixels = g.oh * g.ow;
  int64_t imageInputs = g.channels * g.h * g.w;
  bool last = g.channelsLast;
  Value x = args[0], wt = args[1];
  Value bias = spec.hasBias ? args[2] : Value();
  Value decision = args[args.size() - 2], y = args.back();
  Emitter e(b, loc);
  OpBuilder::InsertionGuard guard(b);

  e.openIf(emitEventPathChosen(b, loc, decision));
  auto [first, end] = getHostRangeBounds(b, loc, fn, 0, spec.rows);
  // NCHW: one [OH OW, O] scratch image for this call's images (heap: a
  // VGG image's sums can be megabytes).
  Value scratch;
  if (!last) {
    scratch = memref::AllocOp::create(
        b, loc, MemRefType::get({pixels * outChannels}, b.getF32Type()));
    memref::DeallocOp::create(b, loc, scratch);
    b.setInsertionPoint(scratch.getDefiningOp()->getNextNode());
  }
  Value image = e.openFor(first, end, 1);
  Value acc = last ? y : scratch;
  Value accBase = last ? e.mulI(image, e.idx(pixels * outChannels)) : e.idx(0);
  {
    OpBuilder::InsertionGuard zero(b);
    Value i = e.openFor(pixels * outChannels);
    e.store(e.f32(0.0), acc, e.addI(accBase, i));
  }

  // The inputs in memory order: NCHW (c, iy, ix), NHWC (iy, ix, c).
  {
    OpBuilder::InsertionGuard inputs(b);
    Value outer = e.openFor(last ? g.h : g.channels);
    Value middle = e.openFor(last ? g.w : g.h);
    Value inner = e.openFor(last ? g.channels : g.w);
    Value c = last ? inner : outer, iy = last ? outer : middle,
          ix = last ? middle : inner;
    Value v = e.load(x, e.inputAt(g, e.mulI(image, e.idx(imageInputs)), c,
                                  iy, ix));
    e.openIf(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                   e.f32(0.0)));
    // Spikes are 1 at their events: 1 w = w, bit for bit.
    Value scale = spec.xBinary ? Value() : v;
    e.forEachTap(g, c, iy, ix, [&](Value row, Value pixel) {
      e.addRow(acc, e.addI(accBase, e.mulI(pixel, e.idx(outChannels))), wt,
               e.mulI(row, e.idx(outChannels)), outChannels, scale);
    });
  }

  // The bias, then (NCHW) the planes of y.
  Value yImage = e.mulI(image, e.idx(outChannels * pixels));
  if (last) {
    if (bias) {
      OpBuilder::InsertionGuard g2(b);
      Value p = e.openFor(pixels);
      e.addRow(acc, e.addI(accBase, e.mulI(p, e.idx(outChannels))), bias,
               e.idx(0), outChannels, Value());
    }
    return;
  }
  Value o = e.openFor(outChannels);
  Value p = e.openFor(pixels);
  Value sum = e.load(scratch, e.addI(e.mulI(p, e.idx(outChannels)), o));
  if (bias)
    sum = e.add(sum, e.load(bias, o));
  e.store(sum, y, e.addI(yImage, e.addI(e.mulI(o, e.idx(pixels)), p)));
}

void mlir::snn::emitEventConvWeightGradHost(OpBuilder &b, Location loc,
                                            const OpKernelSpec &spec,
                                            func::FuncOp fn, ValueRange args) {
  const ConvColumnsGeometry &g = spec.columns;
  int64_t outChannels = spec.outFeatures, pixels = g.oh * g.ow;
  int64_t imageInputs = g.channels * g.h * g.w;
  Value x = args[0], gy = args[1], decision = args[2], gwt = args[3];
  Emitter e(b, loc);
  OpBuilder::InsertionGuard guard(b);

  e.openIf(emitEventPathChosen(b, loc, decision));
  auto [first, end] = getHostRangeBounds(b, loc, fn, 0, g.channels);
  Value c = e.openFor(first, end, 1);
  // The channel's KH KW rows of gwT from zero.
  for (int64_t tap = 0; tap < g.kh * g.kw; ++tap) {
    OpBuilder::InsertionGuard zero(b);
    Value row = g.channelsLast ? e.addI(e.idx(tap * g.channels), c)
                               : e.addI(e.mulI(c, e.idx(g.kh * g.kw)),
                                        e.idx(tap));
    Value o = e.openFor(outChannels);
    e.store(e.f32(0.0), gwt, e.addI(e.mulI(row, e.idx(outChannels)), o));
  }
  Value image = e.openFor(spec.rows);
  Value iy = e.openFor(g.h);
  Value ix = e.openFor(g.w);
  Value v = e.load(x, e.inputAt(g, e.mulI(image, e.idx(imageInputs)), c, iy,
                                ix));
  e.openIf(arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v,
                                 e.f32(0.0)));
  Value scale = spec.xBinary ? Value() : v;
  Value gyImage = e.mulI(image, e.idx(pixels * outChannels));
  e.forEachTap(g, c, iy, ix, [&](Value row, Value pixel) {
    e.addRow(gwt, e.mulI(row, e.idx(outChannels)), gy,
             e.addI(gyImage, e.mulI(pixel, e.idx(outChannels))), outChannels,
             scale);
  });
}
