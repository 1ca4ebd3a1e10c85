//===- PoolKernels.cpp - generated pooling kernels ------------------------===//
//
// The per-thread code of the pooling kernels (PoolKernels.h), in the order
// of operations of docs/artifact-format.md's pooling ops: window taps in
// row-major order; average = sum / (KH KW) (padding counted); the backward
// of average pooling sums the gradients of the windows holding an element,
// then scales; max pooling's gradient goes to the first maximum of each
// window (a NaN wins). Channels last, the C channels of a pixel are
// consecutive: a thread's window taps are C elements apart and the threads
// of a warp read consecutive channels. Index arithmetic is in i32 when every tensor has
// fewer than 2^31 elements (64-bit division is slow on the GPU); the
// divisors are constants, which LLVM turns into multiplications.
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/PoolKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::snn;

OpKernelSpec mlir::snn::makePoolKernelSpec(
    PoolMode mode, bool backward, ArrayRef<int64_t> input,
    ArrayRef<int64_t> output, ArrayRef<int64_t> kernel,
    ArrayRef<int64_t> stride, ArrayRef<int64_t> padding, bool accumulate,
    bool channelsLast) {
  OpKernelSpec spec;
  spec.kind = backward ? OpKernelKind::PoolBwd : OpKernelKind::Pool;
  spec.poolMode = mode;
  spec.accumulate = accumulate;
  PoolGeometry &g = spec.pool;
  // Channels last: the spatial dims are one further from the end.
  size_t last = channelsLast ? 1 : 0;
  size_t rank = input.size(), outRank = output.size();
  g.channels = channelsLast ? input[rank - 1] : 1;
  g.planes = 1;
  for (int64_t d : input.drop_back(2 + last))
    g.planes *= d;
  g.h = input[rank - 2 - last];
  g.w = input[rank - 1 - last];
  g.oh = output[outRank - 2 - last];
  g.ow = output[outRank - 1 - last];
  g.kh = kernel[0];
  g.kw = kernel[1];
  g.sh = stride[0];
  g.sw = stride[1];
  g.ph = padding[0];
  g.pw = padding[1];
  spec.sizes = {getPoolKernelThreads(spec)};
  return spec;
}

int64_t mlir::snn::getPoolKernelThreads(const OpKernelSpec &spec) {
  const PoolGeometry &g = spec.pool;
  if (spec.kind == OpKernelKind::Pool || g.isTiling())
    return g.getOutputElements();
  return g.getInputElements();
}

namespace {
/// Windows of up to this many taps are unrolled in the max-pooling gather,
/// larger ones are loops.
constexpr int64_t kMaxUnrolledWindow = 16;

/// Emits the code of one thread of a pooling kernel.
class PoolEmitter {
public:
  PoolEmitter(OpBuilder &b, Location loc, const OpKernelSpec &spec)
      : b(b), loc(loc), spec(spec), g(spec.pool) {
    int64_t largest =
        std::max(g.getInputElements(), g.getOutputElements());
    it = largest < (int64_t(1) << 31) ? b.getI32Type() : b.getI64Type();
  }

  void emit(ValueRange args, Value i);

private:
  void emitForward(Value x, Value y, Value o);
  void emitTiledBackward(Value gy, Value x, Value gx, Value o);
  void emitGatherBackward(Value gy, Value x, Value gx, Value i);
  /// The first maximum of the window (oy, ox) of the plane at `base`: its
  /// position in the plane (-1 where every tap is padding).
  Value emitFirstMaximum(Value x, Value base, Value oy, Value ox);
  /// One tap (iy, ix) of that search: the next (best, at).
  std::pair<Value, Value> emitMaximumTap(Value x, Value base, Value iy,
                                         Value ix, Value best, Value at);

  /// (row, col, plane, channel) of the flat index v over planes of rows x
  /// cols (x channels when channels last; channel is null otherwise).
  std::tuple<Value, Value, Value, Value> split(Value v, int64_t rows,
                                               int64_t cols) {
    Value channel;
    if (g.channels > 1) {
      channel = arith::RemUIOp::create(b, loc, v, c(g.channels));
      v = arith::DivUIOp::create(b, loc, v, c(g.channels));
    }
    Value col = arith::RemUIOp::create(b, loc, v, c(cols));
    Value rest = arith::DivUIOp::create(b, loc, v, c(cols));
    Value row = arith::RemUIOp::create(b, loc, rest, c(rows));
    Value plane = arith::DivUIOp::create(b, loc, rest, c(rows));
    return {row, col, plane, channel};
  }
  /// The first element of (plane, channel) in a tensor of `area` pixels a
  /// plane.
  Value planeBase(Value plane, Value channel, int64_t area) {
    Value base = mul(plane, area * g.channels);
    return channel ? add(base, channel) : base;
  }
  /// The offset of `pixels` pixels: channels last, C elements a pixel.
  Value pixels(Value v) { return g.channels > 1 ? mul(v, g.channels) : v; }
  /// The window index that tap `k` of a window at `q` (an input row or
  /// column) belongs to, and whether there is one: q + pad - k must be a
  /// multiple of the stride in [0, stride * (outSize - 1)].
  std::pair<Value, Value> windowOf(Value q, int64_t pad, int64_t k,
                                   int64_t stride, int64_t outSize) {
    Value t = arith::AddIOp::create(b, loc, q, c(pad - k));
    if (stride == 1)
      return {t, below(t, outSize)};
    Value o = arith::DivUIOp::create(b, loc, t, c(stride));
    Value rem = arith::RemUIOp::create(b, loc, t, c(stride));
    Value aligned = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          rem, c(0));
    // A negative t is a large unsigned number: its window is out of range.
    Value inRange = below(o, outSize);
    return {o, arith::AndIOp::create(b, loc, aligned, inRange)};
  }
  /// 0 <= v < n (v signed): one unsigned comparison.
  Value below(Value v, int64_t n) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v, c(n));
  }
  Value both(Value p, Value q) { return arith::AndIOp::create(b, loc, p, q); }
  Value c(int64_t v) { return arith::ConstantIntOp::create(b, loc, it, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(float(v)));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t k) {
    return arith::MulIOp::create(b, loc, x, c(k));
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value load(Value memref, Value v) {
    Value at = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
    return memref::LoadOp::create(b, loc, memref, ValueRange{at});
  }
  void store(Value value, Value memref, Value v) {
    Value at = arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
    memref::StoreOp::create(b, loc, value, memref, ValueRange{at});
  }
  /// v is a maximum that replaces `best`: greater, or a NaN over a number.
  Value beats(Value v, Value best) {
    Value greater =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, v, best);
    Value vNaN =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
    Value bestNumber =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ORD, best, best);
    Value nanOverNumber = both(vNaN, bestNumber);
    return arith::OrIOp::create(b, loc, greater, nanOverNumber);
  }
  /// The element gradient scale: 1 / (KH KW) for average pooling.
  Value scaled(Value v) {
    if (spec.poolMode != PoolMode::Avg)
      return v;
    Value scale = f32(1.0f / float(g.kh * g.kw));
    return arith::MulFOp::create(b, loc, v, scale);
  }

  OpBuilder &b;
  Location loc;
  const OpKernelSpec &spec;
  const PoolGeometry &g;
  Type it;
};
} // namespace

void PoolEmitter::emit(ValueRange args, Value i) {
  Value v = arith::IndexCastOp::create(b, loc, it, i);
  if (spec.kind == OpKernelKind::Pool)
    return emitForward(args[0], args[1], v);
  bool isMax = spec.poolMode == PoolMode::Max;
  Value gy = args[0];
  Value x = isMax ? args[1] : Value();
  Value gx = args[isMax ? 2 : 1];
  if (g.isTiling())
    return emitTiledBackward(gy, x, gx, v);
  emitGatherBackward(gy, x, gx, v);
}

void PoolEmitter::emitForward(Value x, Value y, Value o) {
  auto [oy, ox, plane, channel] = split(o, g.oh, g.ow);
  Value base = planeBase(plane, channel, g.h * g.w);
  bool isMax = spec.poolMode == PoolMode::Max;
  // Taps outside the input exist only with padding (or a last window
  // past the edge): then each tap is checked and reads the plane's first
  // element instead.
  bool checked = g.ph || g.pw || (g.oh - 1) * g.sh + g.kh > g.h ||
                 (g.ow - 1) * g.sw + g.kw > g.w;
  Value acc = f32(isMax ? -std::numeric_limits<double>::infinity() : 0.0);
  Value rowStart = mul(oy, g.sh);
  Value colStart = mul(ox, g.sw);
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    Value iy = add(rowStart, c(kh - g.ph));
    Value rowAt = add(base, mul(iy, g.w * g.channels));
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      Value ix = add(colStart, c(kw - g.pw));
      Value at = add(rowAt, pixels(ix));
      Value inside;
      if (checked) {
        Value rowInside = below(iy, g.h);
        Value colInside = below(ix, g.w);
        inside = both(rowInside, colInside);
        at = select(inside, at, base);
      }
      Value v = load(x, at);
      Value next = isMax ? select(beats(v, acc), v, acc)
                         : Value(arith::AddFOp::create(b, loc, acc, v));
      acc = checked ? select(inside, next, acc) : next;
    }
  }
  if (spec.poolMode == PoolMode::Avg) {
    Value area = f32(double(g.kh * g.kw));
    acc = arith::DivFOp::create(b, loc, acc, area);
  }
  store(acc, y, o);
}

void PoolEmitter::emitTiledBackward(Value gy, Value x, Value gx, Value o) {
  auto [oy, ox, plane, channel] = split(o, g.oh, g.ow);
  Value planeStart = planeBase(plane, channel, g.h * g.w);
  Value rowStart = add(planeStart, mul(oy, g.kh * g.w * g.channels));
  Value first = add(rowStart, mul(ox, g.kw * g.channels));
  SmallVector<Value> taps;
  for (int64_t kh = 0; kh < g.kh; ++kh)
    for (int64_t kw = 0; kw < g.kw; ++kw)
      taps.push_back(add(first, c((kh * g.w + kw) * g.channels)));
  // Max: the window's first maximum, as a tap number.
  Value at;
  if (spec.poolMode == PoolMode::Max) {
    Value best = load(x, taps[0]);
    at = c(0);
    for (size_t k = 1; k < taps.size(); ++k) {
      Value v = load(x, taps[k]);
      Value take = beats(v, best);
      best = select(take, v, best);
      at = select(take, c(k), at);
    }
  }
  Value loaded = load(gy, o);
  Value grad = scaled(loaded);
  Value zero = at && !spec.accumulate ? f32(0.0) : Value();
  for (auto [k, tap] : llvm::enumerate(taps)) {
    Value hit = at ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           at, c(k))
                   : Value();
    Value v = grad;
    if (spec.accumulate) {
      Value old = load(gx, tap);
      Value sum = arith::AddFOp::create(b, loc, old, grad);
      v = hit ? select(hit, sum, old) : sum;
    } else if (hit) {
      v = select(hit, grad, zero);
    }
    store(v, gx, tap);
  }
}

std::pair<Value, Value> PoolEmitter::emitMaximumTap(Value x, Value base,
                                                   Value iy, Value ix,
                                                   Value best, Value at) {
  Value pos = add(mul(iy, g.w), ix);
  Value rowInside = below(iy, g.h);
  Value colInside = below(ix, g.w);
  Value inside = both(rowInside, colInside);
  Value addr = select(inside, add(base, pixels(pos)), base);
  Value v = load(x, addr);
  Value none =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, at, c(0));
  Value better = arith::OrIOp::create(b, loc, none, beats(v, best));
  Value take = both(inside, better);
  return {select(take, v, best), select(take, pos, at)};
}

Value PoolEmitter::emitFirstMaximum(Value x, Value base, Value oy, Value ox) {
  Value best = f32(-std::numeric_limits<double>::infinity());
  Value at = c(-1);
  Value rowStart = mul(oy, g.sh);
  Value colStart = mul(ox, g.sw);
  if (g.kh * g.kw <= kMaxUnrolledWindow) {
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      Value iy = add(rowStart, c(kh - g.ph));
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        Value ix = add(colStart, c(kw - g.pw));
        std::tie(best, at) = emitMaximumTap(x, base, iy, ix, best, at);
      }
    }
    return at;
  }
  // A large window is a loop over its taps: the gather visits KH KW windows
  // per element, and unrolling both would grow the kernel quadratically.
  auto loop = scf::ForOp::create(
      b, loc, c(0), c(g.kh * g.kw), c(1), ValueRange{best, at},
      [&](OpBuilder &, Location, Value tap, ValueRange state) {
        Value kh = arith::DivUIOp::create(b, loc, tap, c(g.kw));
        Value kw = arith::RemUIOp::create(b, loc, tap, c(g.kw));
        Value row = add(rowStart, kh);
        Value iy = add(row, c(-g.ph));
        Value col = add(colStart, kw);
        Value ix = add(col, c(-g.pw));
        auto [nextBest, nextAt] =
            emitMaximumTap(x, base, iy, ix, state[0], state[1]);
        scf::YieldOp::create(b, loc, ValueRange{nextBest, nextAt});
      });
  return loop.getResult(1);
}

void PoolEmitter::emitGatherBackward(Value gy, Value x, Value gx, Value i) {
  auto [iy, ix, plane, channel] = split(i, g.h, g.w);
  Value outBase = planeBase(plane, channel, g.oh * g.ow);
  bool isMax = spec.poolMode == PoolMode::Max;
  Value inBase, me;
  if (isMax) {
    inBase = planeBase(plane, channel, g.h * g.w);
    me = add(mul(iy, g.w), ix);
  }
  // Max: gradients add to gx in window order; sum/avg: summed, then scaled.
  Value acc = isMax && spec.accumulate ? load(gx, i) : f32(0.0);
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    auto [oy, rowOk] = windowOf(iy, g.ph, kh, g.sh, g.oh);
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      auto [ox, colOk] = windowOf(ix, g.pw, kw, g.sw, g.ow);
      Value valid = both(rowOk, colOk);
      Value window = add(outBase, pixels(add(mul(oy, g.ow), ox)));
      Value at = select(valid, window, outBase);
      if (isMax) {
        Value first = emitFirstMaximum(x, inBase, oy, ox);
        Value mine =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, first, me);
        valid = both(valid, mine);
      }
      Value v = load(gy, at);
      Value sum = arith::AddFOp::create(b, loc, acc, v);
      acc = select(valid, sum, acc);
    }
  }
  if (!isMax) {
    acc = scaled(acc);
    if (spec.accumulate) {
      Value old = load(gx, i);
      acc = arith::AddFOp::create(b, loc, old, acc);
    }
  }
  store(acc, gx, i);
}

void mlir::snn::emitPoolElement(OpBuilder &b, Location loc,
                                const OpKernelSpec &spec, ValueRange args,
                                Value i) {
  PoolEmitter(b, loc, spec).emit(args, i);
}
