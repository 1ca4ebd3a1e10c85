//===- LayerKernels.cpp - bias, layout, im2col/col2im kernels -------------===//
//
// The index arithmetic of LayerKernels.h on `index` values whose divisors
// are compile-time constants (LLVM turns them into multiplications). A tap
// outside the input reads element 0 and selects 0, so no load depends on a
// branch.
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/LayerKernels.h"
#include "snn/Conversion/NeuronToGPU/KernelArith.h"
#include "BlockSum.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::snn;

OpKernelSpec mlir::snn::makeBiasAddSpec(const ChannelGeometry &g) {
  OpKernelSpec spec;
  spec.kind = OpKernelKind::BiasAdd;
  spec.channelGeometry = g;
  spec.sizes = {g.getElements()};
  return spec;
}

OpKernelSpec mlir::snn::makeBiasGradSpec(const ChannelGeometry &g,
                                         bool accumulate) {
  OpKernelSpec spec = makeBiasAddSpec(g);
  spec.kind = OpKernelKind::BiasGrad;
  spec.accumulate = accumulate;
  return spec;
}

OpKernelSpec mlir::snn::makeChannelLayoutSpec(const ChannelGeometry &g,
                                              bool first) {
  OpKernelSpec spec = makeBiasAddSpec(g);
  spec.kind = first ? OpKernelKind::ChannelsFirst : OpKernelKind::ChannelsLast;
  return spec;
}

OpKernelSpec mlir::snn::makeColumnsSpec(const ConvColumnsGeometry &g,
                                        bool col2im, bool accumulate) {
  OpKernelSpec spec;
  spec.kind = col2im ? OpKernelKind::Col2im : OpKernelKind::Im2col;
  spec.columns = g;
  spec.accumulate = col2im && accumulate;
  spec.sizes = {col2im ? g.getInputElements() : g.getColumnElements()};
  return spec;
}

int64_t mlir::snn::getLayerKernelThreads(const OpKernelSpec &spec) {
  return spec.sizes.front();
}

namespace {
/// Index arithmetic and the per-element code of the layer kernels.
class LayerEmitter : KernelArith {
public:
  LayerEmitter(OpBuilder &b, Location loc, const OpKernelSpec &spec)
      : KernelArith(b, loc), spec(spec) {}

  void emitElement(ValueRange args, Value i);
  void emitBiasGradGPU(ValueRange args, Value scratch, Value channel,
                       Value lane);
  void emitBiasGradHost(ValueRange args, Value item);
  void emitHostRow(ValueRange args, Value item);

private:
  /// A loop over [0, n) at the insertion point; `body` gets the index.
  void forEach(Value lo, Value hi, function_ref<void(Value)> body) {
    auto loop = scf::ForOp::create(b, loc, lo, hi, idx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    body(loop.getInductionVar());
  }
  Value divC(Value x, int64_t d) {
    return d == 1 ? x : Value(arith::DivUIOp::create(b, loc, x, idx(d)));
  }
  Value remC(Value x, int64_t d) {
    return d == 1 ? idx(0) : Value(arith::RemUIOp::create(b, loc, x, idx(d)));
  }
  Value mulC(Value x, int64_t v) {
    return v == 1 ? x : Value(arith::MulIOp::create(b, loc, x, idx(v)));
  }
  Value addC(Value x, int64_t v) { return v == 0 ? x : addI(x, idx(v)); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  /// memref[at] where `valid`, else 0 (reads element 0 instead).
  Value loadIf(Value valid, Value memref, Value at) {
    Value v = load(memref, select(valid, at, idx(0)));
    return select(valid, v, f32(0.0));
  }
  /// 0 <= v < limit (signed).
  Value inRange(Value v, int64_t limit) {
    return both(cmp(arith::CmpIPredicate::sge, v, idx(0)),
                cmp(arith::CmpIPredicate::slt, v, idx(limit)));
  }

  void emitIm2col(ValueRange args, Value i);
  void emitCol2im(ValueRange args, Value i);
  void emitIm2colNHWCRow(ValueRange args, Value item);
  /// The sum of the entries of the column buffer `columns` (either layout)
  /// that read input position (m, iy, ix, c).
  Value sumTaps(Value m, Value iy, Value ix, Value c, Value columns);

  const OpKernelSpec &spec;
};
} // namespace

void LayerEmitter::emitIm2col(ValueRange args, Value i) {
  const ConvColumnsGeometry &g = spec.columns;
  int64_t pixels = g.oh * g.ow, taps = g.kh * g.kw;
  // Column entry i: the image m, output pixel p, channel c and tap.
  Value m, p, c, tap;
  if (g.channelsLast) { // i = (m P + p, (kh, kw, c))
    int64_t rowLength = g.getColumnRows();
    Value row = divC(i, rowLength), k = remC(i, rowLength);
    m = divC(row, pixels), p = remC(row, pixels);
    tap = divC(k, g.channels), c = remC(k, g.channels);
  } else { // i = ((c, kh, kw), m P + p)
    int64_t cols = g.images * pixels;
    Value k = divC(i, cols), r = remC(i, cols);
    m = divC(r, pixels), p = remC(r, pixels);
    c = divC(k, taps), tap = remC(k, taps);
  }
  Value kh = divC(tap, g.kw), kw = remC(tap, g.kw);
  // iy = oy sh - ph + kh dh (signed), likewise ix.
  Value iy = arith::SubIOp::create(
      b, loc, addI(mulC(divC(p, g.ow), g.sh), mulC(kh, g.dh)), idx(g.ph));
  Value ix = arith::SubIOp::create(
      b, loc, addI(mulC(remC(p, g.ow), g.sw), mulC(kw, g.dw)), idx(g.pw));
  Value inside = both(inRange(iy, g.h), inRange(ix, g.w));
  Value at =
      g.channelsLast
          ? addI(mulC(addI(mulC(addI(mulC(m, g.h), iy), g.w), ix), g.channels),
                 c)
          : addI(mulC(addI(mulC(addI(mulC(m, g.channels), c), g.h), iy), g.w),
                 ix);
  store(loadIf(inside, args[0], at), args[1], i);
}

void LayerEmitter::emitIm2colNHWCRow(ValueRange args, Value item) {
  // Item = one output pixel (m, oy, ox): its row of KH x KW runs of C
  // contiguous channels, each copied from one input pixel or zeroed.
  const ConvColumnsGeometry &g = spec.columns;
  int64_t pixels = g.oh * g.ow;
  Value m = divC(item, pixels), p = remC(item, pixels);
  Value y0 = arith::SubIOp::create(b, loc, mulC(divC(p, g.ow), g.sh),
                                   idx(g.ph));
  Value x0 = arith::SubIOp::create(b, loc, mulC(remC(p, g.ow), g.sw),
                                   idx(g.pw));
  Value dst = mulC(item, g.getColumnRows());
  Value image = mulC(m, g.h);
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    Value iy = addC(y0, kh * g.dh);
    Value rowInside = inRange(iy, g.h);
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      Value ix = addC(x0, kw * g.dw);
      Value inside = both(rowInside, inRange(ix, g.w));
      Value from = mulC(addI(mulC(addI(image, iy), g.w), ix), g.channels);
      Value to = addC(dst, (kh * g.kw + kw) * g.channels);
      forEach(idx(0), idx(g.channels), [&](Value c) {
        store(loadIf(inside, args[0], addI(from, c)), args[1], addI(to, c));
      });
    }
  }
}

Value LayerEmitter::sumTaps(Value m, Value iy, Value ix, Value c,
                            Value columns) {
  const ConvColumnsGeometry &g = spec.columns;
  int64_t pixels = g.oh * g.ow, cols = g.images * pixels;
  Value imageColumn = mulC(m, pixels);
  // The output position a tap reads input position v from: (v + pad -
  // tap * dilation) / stride when that is a whole number in [0, out).
  auto source = [&](Value v, int64_t pad, int64_t tap, int64_t dil,
                    int64_t stride, int64_t out, Value &valid) {
    Value t = arith::SubIOp::create(b, loc, addC(v, pad), idx(tap * dil));
    valid = cmp(arith::CmpIPredicate::sge, t, idx(0));
    if (stride != 1)
      valid = both(valid, cmp(arith::CmpIPredicate::eq,
                              arith::RemSIOp::create(b, loc, t, idx(stride)),
                              idx(0)));
    Value o = stride == 1
                  ? t
                  : Value(arith::DivSIOp::create(b, loc, t, idx(stride)));
    valid = both(valid, cmp(arith::CmpIPredicate::slt, o, idx(out)));
    return o;
  };
  Value sum = f32(0.0);
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    Value validY;
    Value oy = source(iy, g.ph, kh, g.dh, g.sh, g.oh, validY);
    Value row = addI(imageColumn, mulC(oy, g.ow));
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      Value validX;
      Value ox = source(ix, g.pw, kw, g.dw, g.sw, g.ow, validX);
      Value column = addI(row, ox);
      Value at;
      if (g.channelsLast) {
        // Row `column`, entry (kh, kw, c).
        at = addI(mulC(column, g.getColumnRows()),
                  addC(c, (kh * g.kw + kw) * g.channels));
      } else {
        // Column row k = (c, kh, kw).
        Value k = addC(mulC(c, g.kh * g.kw), kh * g.kw + kw);
        at = addI(mulC(k, cols), column);
      }
      sum = add(sum, loadIf(both(validY, validX), columns, at));
    }
  }
  return sum;
}

void LayerEmitter::emitCol2im(ValueRange args, Value i) {
  const ConvColumnsGeometry &g = spec.columns;
  Value m, iy, ix, c;
  if (g.channelsLast) { // i = (m, iy, ix, c)
    c = remC(i, g.channels);
    ix = remC(divC(i, g.channels), g.w);
    iy = remC(divC(i, g.channels * g.w), g.h);
    m = divC(i, g.channels * g.w * g.h);
  } else { // i = (m, c, iy, ix)
    ix = remC(i, g.w), iy = remC(divC(i, g.w), g.h);
    c = remC(divC(i, g.w * g.h), g.channels);
    m = divC(i, g.w * g.h * g.channels);
  }
  Value sum = sumTaps(m, iy, ix, c, args[0]);
  if (spec.accumulate) {
    Value old = load(args[1], i);
    sum = add(old, sum);
  }
  store(sum, args[1], i);
}

void LayerEmitter::emitElement(ValueRange args, Value i) {
  const ChannelGeometry &g = spec.channelGeometry;
  switch (spec.kind) {
  case OpKernelKind::BiasAdd: {
    Value c = remC(divC(i, g.inner), g.channels);
    Value y = load(args[0], i);
    Value bias = load(args[1], c);
    store(add(y, bias), args[0], i);
    return;
  }
  case OpKernelKind::ChannelsFirst: {
    // i = (c, r, p) of out; read in[(r C + c) inner + p].
    int64_t plane = g.rows * g.inner;
    Value c = divC(i, plane), rp = remC(i, plane);
    Value r = divC(rp, g.inner), p = remC(rp, g.inner);
    Value at = addI(mulC(addI(mulC(r, g.channels), c), g.inner), p);
    store(load(args[0], at), args[1], i);
    return;
  }
  case OpKernelKind::ChannelsLast: {
    // i = (r, c, p) of out; read in[(c rows + r) inner + p].
    Value r = divC(i, g.channels * g.inner);
    Value c = remC(divC(i, g.inner), g.channels), p = remC(i, g.inner);
    Value at = addI(mulC(addI(mulC(c, g.rows), r), g.inner), p);
    store(load(args[0], at), args[1], i);
    return;
  }
  case OpKernelKind::Im2col:
    return emitIm2col(args, i);
  case OpKernelKind::Col2im:
    return emitCol2im(args, i);
  default:
    llvm_unreachable("not an elementwise layer kernel");
  }
}

void LayerEmitter::emitBiasGradGPU(ValueRange args, Value scratch,
                                   Value channel, Value lane) {
  const ChannelGeometry &g = spec.channelGeometry;
  Value gy = args[0], gb = args[1];
  // Thread `lane` sums elements lane, lane + 256, ... of the channel's
  // rows * inner, in f32; the block then adds the partials as a tree.
  auto loop = scf::ForOp::create(b, loc, lane, idx(g.rows * g.inner),
                                 idx(kOpKernelBlockSize), ValueRange{f32(0.0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value r = divC(j, g.inner), p = remC(j, g.inner);
    Value at = addI(mulC(addI(mulC(r, g.channels), channel), g.inner), p);
    Value sum = add(loop.getRegionIterArgs()[0], load(gy, at));
    scf::YieldOp::create(b, loc, sum);
  }
  Value total = emitBlockSum(b, loc, scratch, lane, kOpKernelBlockSize,
                             ValueRange{loop.getResult(0)})[0];
  auto first = scf::IfOp::create(
      b, loc, cmp(arith::CmpIPredicate::eq, lane, idx(0)), /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(first.thenBlock());
  if (spec.accumulate) {
    Value old = load(gb, channel);
    total = add(old, total);
  }
  store(total, gb, channel);
}

/// Channels one host work item sums: one when a channel's values come in
/// runs of 16 or more, else 16 side by side (a linear layer's bias: each
/// row read once, in order).
static int64_t getBiasGradChannelsPerItem(const ChannelGeometry &g) {
  return g.inner >= 16 ? 1 : std::min<int64_t>(16, g.channels);
}

int64_t mlir::snn::getBiasGradHostItems(const OpKernelSpec &spec) {
  const ChannelGeometry &g = spec.channelGeometry;
  return llvm::divideCeilSigned(g.channels, getBiasGradChannelsPerItem(g));
}

void LayerEmitter::emitBiasGradHost(ValueRange args, Value item) {
  const ChannelGeometry &g = spec.channelGeometry;
  int64_t perItem = getBiasGradChannelsPerItem(g);
  Value gy = args[0], gb = args[1];
  Type f64Type = b.getF64Type();
  auto sums = memref::AllocaOp::create(
      b, loc, MemRefType::get({perItem}, f64Type));
  Value first = mulC(item, perItem);
  Value count = arith::MinSIOp::create(
      b, loc, idx(perItem), arith::SubIOp::create(b, loc, idx(g.channels), first));
  forEach(idx(0), count, [&](Value j) { store(f64(0.0), sums, j); });
  // Each channel's sum in a fixed order: row by row, then along inner.
  forEach(idx(0), idx(g.rows), [&](Value r) {
    forEach(idx(0), count, [&](Value j) {
      Value base = mulC(addI(mulC(r, g.channels), addI(first, j)), g.inner);
      Value old = load(sums, j);
      auto inner = scf::ForOp::create(b, loc, idx(0), idx(g.inner), idx(1),
                                      ValueRange{old});
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(inner.getBody());
        Value v = load(gy, addI(base, inner.getInductionVar()));
        Value wide = arith::ExtFOp::create(b, loc, f64Type, v);
        scf::YieldOp::create(b, loc,
                             add(inner.getRegionIterArgs()[0], wide));
      }
      store(inner.getResult(0), sums, j);
    });
  });
  forEach(idx(0), count, [&](Value j) {
    Value c = addI(first, j);
    Value total = arith::TruncFOp::create(b, loc, b.getF32Type(), load(sums, j));
    if (spec.accumulate) {
      Value old = load(gb, c);
      total = add(old, total);
    }
    store(total, gb, c);
  });
}

int64_t mlir::snn::getLayerHostRowLength(const OpKernelSpec &spec) {
  const ChannelGeometry &g = spec.channelGeometry;
  switch (spec.kind) {
  case OpKernelKind::BiasAdd:
    return g.channels * g.inner;
  case OpKernelKind::ChannelsFirst:
  case OpKernelKind::ChannelsLast:
    return g.inner;
  case OpKernelKind::Im2col:
    return spec.columns.channelsLast ? spec.columns.getColumnRows()
                                     : spec.columns.oh * spec.columns.ow;
  default:
    return 1;
  }
}

void LayerEmitter::emitHostRow(ValueRange args, Value item) {
  const ChannelGeometry &g = spec.channelGeometry;
  switch (spec.kind) {
  case OpKernelKind::BiasAdd: {
    // Row r of y: every channel's inner elements.
    Value row = mulC(item, g.channels * g.inner);
    forEach(idx(0), idx(g.channels), [&](Value c) {
      Value bias = load(args[1], c);
      Value base = addI(row, mulC(c, g.inner));
      forEach(idx(0), idx(g.inner), [&](Value p) {
        Value at = addI(base, p);
        Value y = load(args[0], at);
        store(add(y, bias), args[0], at);
      });
    });
    return;
  }
  case OpKernelKind::ChannelsFirst:
  case OpKernelKind::ChannelsLast: {
    // Item (outer, inner index) of the output's [a, b, inner] rows: first
    // out[c, r] = in[r, c], last out[r, c] = in[c, r].
    bool first = spec.kind == OpKernelKind::ChannelsFirst;
    int64_t outer = first ? g.rows : g.channels; // the output's second dim
    Value a = divC(item, outer), bIndex = remC(item, outer);
    Value from = mulC(addI(mulC(bIndex, first ? g.channels : g.rows), a),
                      g.inner);
    Value to = mulC(item, g.inner);
    forEach(idx(0), idx(g.inner), [&](Value p) {
      store(load(args[0], addI(from, p)), args[1], addI(to, p));
    });
    return;
  }
  case OpKernelKind::Im2col: {
    if (spec.columns.channelsLast)
      return emitIm2colNHWCRow(args, item);
    // Item (k, m): the OH x OW columns of image m in row k.
    const ConvColumnsGeometry &cg = spec.columns;
    int64_t taps = cg.kh * cg.kw, pixels = cg.oh * cg.ow;
    Value k = divC(item, cg.images), m = remC(item, cg.images);
    Value c = divC(k, taps), tap = remC(k, taps);
    Value kh = divC(tap, cg.kw), kw = remC(tap, cg.kw);
    Value plane = mulC(addI(mulC(m, cg.channels), c), cg.h * cg.w);
    Value dst = mulC(item, pixels);
    Value yOffset = arith::SubIOp::create(b, loc, mulC(kh, cg.dh), idx(cg.ph));
    Value xOffset = arith::SubIOp::create(b, loc, mulC(kw, cg.dw), idx(cg.pw));
    forEach(idx(0), idx(cg.oh), [&](Value oy) {
      Value iy = addI(mulC(oy, cg.sh), yOffset);
      Value rowInside = inRange(iy, cg.h);
      Value rowAt = addI(plane, mulC(iy, cg.w));
      Value dstRow = addI(dst, mulC(oy, cg.ow));
      forEach(idx(0), idx(cg.ow), [&](Value ox) {
        Value ix = addI(mulC(ox, cg.sw), xOffset);
        Value inside = both(rowInside, inRange(ix, cg.w));
        store(loadIf(inside, args[0], addI(rowAt, ix)), args[1],
              addI(dstRow, ox));
      });
    });
    return;
  }
  default:
    llvm_unreachable("no host rows for this kernel");
  }
}

void mlir::snn::emitLayerHostRow(OpBuilder &b, Location loc,
                                 const OpKernelSpec &spec, ValueRange args,
                                 Value item) {
  LayerEmitter(b, loc, spec).emitHostRow(args, item);
}

void mlir::snn::emitLayerElement(OpBuilder &b, Location loc,
                                 const OpKernelSpec &spec, ValueRange args,
                                 Value i) {
  LayerEmitter(b, loc, spec).emitElement(args, i);
}

MemRefType mlir::snn::getBiasGradScratchType(MLIRContext *ctx) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
  return MemRefType::get({kOpKernelBlockSize}, Float32Type::get(ctx),
                         MemRefLayoutAttrInterface(), workgroup);
}

void mlir::snn::emitBiasGradGPUBlock(OpBuilder &b, Location loc,
                                     const OpKernelSpec &spec, ValueRange args,
                                     Value scratch, Value channel, Value lane) {
  LayerEmitter(b, loc, spec).emitBiasGradGPU(args, scratch, channel, lane);
}

void mlir::snn::emitBiasGradHostItem(OpBuilder &b, Location loc,
                                     const OpKernelSpec &spec, ValueRange args,
                                     Value item) {
  LayerEmitter(b, loc, spec).emitBiasGradHost(args, item);
}
