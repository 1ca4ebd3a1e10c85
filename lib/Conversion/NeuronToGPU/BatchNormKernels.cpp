//===- BatchNormKernels.cpp - generated batch norm kernels ----------------===//
//
// The code of the batch norm kernels (BatchNormKernels.h), with the
// semantics of docs/artifact-format.md's `batch_norm` and `batch_norm_bwd`:
// training statistics over M*S, the biased variance normalizes, the
// unbiased one enters the running variance, r = (1 - m) r + m stat. Sums
// are f64. The variance uses shifted sums, sum(x - K) and sum((x - K)^2)
// with K the channel's first element: one pass over x, and no cancellation
// when the mean is large against the spread (K is within a few standard
// deviations of the mean). The per-channel constants are computed in f64
// and rounded once; the training normalize is x * scale + shift in f32 as
// the former runtime's kernels computed it.
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/BatchNormKernels.h"
#include "snn/Conversion/NeuronToGPU/KernelArith.h"
#include "BlockSum.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::snn;

OpKernelSpec mlir::snn::makeBatchNormKernelSpec(ArrayRef<int64_t> input,
                                                int64_t spatialRank,
                                                bool training, bool backward,
                                                double eps, double momentum,
                                                bool accumulate) {
  OpKernelSpec spec;
  spec.kind = backward   ? OpKernelKind::BatchNormBwd
              : training ? OpKernelKind::BatchNorm
                         : OpKernelKind::BatchNormEval;
  spec.accumulate = accumulate;
  BatchNormGeometry &g = spec.batchNorm;
  size_t rank = input.size();
  g.spatial = 1;
  for (int64_t d : input.take_back(spatialRank))
    g.spatial *= d;
  g.channels = input[rank - 1 - spatialRank];
  g.rows = 1;
  for (int64_t d : input.drop_back(spatialRank + 1))
    g.rows *= d;
  g.eps = eps;
  g.momentum = momentum;
  // A reduction runs a block per channel; eval a thread per element.
  spec.sizes = {isBatchNormReduction(spec)
                    ? g.channels * kBatchNormBlockSize
                    : g.getElements()};
  return spec;
}

bool mlir::snn::isBatchNormReduction(const OpKernelSpec &spec) {
  return spec.kind == OpKernelKind::BatchNorm ||
         spec.kind == OpKernelKind::BatchNormBwd;
}

bool mlir::snn::isBatchNorm(const OpKernelSpec &spec) {
  return isBatchNormReduction(spec) ||
         spec.kind == OpKernelKind::BatchNormEval;
}

/// The eval affine of `channel`, y = x scale + shift, in f32 from the
/// running statistics.
static std::pair<Value, Value> emitEvalAffine(OpBuilder &b, Location loc,
                                              const OpKernelSpec &spec,
                                              ValueRange args, Value channel) {
  auto load = [&](Value memref) {
    return memref::LoadOp::create(b, loc, memref, ValueRange{channel})
        .getResult();
  };
  Value var = load(args[4]);
  Value eps = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(float(spec.batchNorm.eps)));
  Value root = math::SqrtOp::create(
      b, loc, arith::AddFOp::create(b, loc, var, eps));
  Value gamma = load(args[1]);
  Value scale = arith::DivFOp::create(b, loc, gamma, root);
  Value mean = load(args[3]);
  Value beta = load(args[2]);
  Value shifted = arith::MulFOp::create(b, loc, mean, scale);
  Value shift = arith::SubFOp::create(b, loc, beta, shifted);
  return {scale, shift};
}

MemRefType mlir::snn::getBatchNormScratchType(MLIRContext *ctx) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
  return MemRefType::get({2 * kBatchNormBlockSize}, Float64Type::get(ctx),
                         MemRefLayoutAttrInterface(), workgroup);
}

namespace {
/// Elements a GPU thread handles per loop iteration: independent loads in
/// flight, which a block per channel needs to keep the memory busy.
constexpr int64_t kUnroll = 4;

/// Emits the code of one channel of a reducing batch norm kernel, run by
/// `threads` threads of which this is `lane` (the host: one thread).
class ChannelEmitter : KernelArith {
public:
  ChannelEmitter(OpBuilder &b, Location loc, const OpKernelSpec &spec,
                 ValueRange args, Value scratch, Value channel, Value lane)
      : KernelArith(b, loc), spec(spec), g(spec.batchNorm), args(args),
        scratch(scratch), channel(channel), lane(lane) {}

  void emit();

private:
  /// The partial sums of this thread over its share of the channel: sum(x -
  /// K), sum((x - K)^2) (forward), sum(gy), sum(gy xhat) (backward).
  std::pair<Value, Value> emitPartialSums();
  /// The block's totals of the partial sums (the host: the sums).
  std::pair<Value, Value> emitBlockSums(Value first, Value second);
  void emitForwardEnd(Value sumShifted, Value sumSquares);
  /// Eval on the host: the channel's affine once, then its elements.
  void emitEval();
  void emitBackwardEnd(Value sumGy, Value sumGyXhat);
  /// Runs `body(at, valid, state)` for each element of this thread's share:
  /// `at` is the element's index in x. Past the channel's end (the last
  /// iteration of an unrolled loop), `valid` (null when every element is)
  /// is false and `at` the channel's first element: the body must neither
  /// count nor store it.
  scf::ForOp forEachElement(
      ValueRange init,
      function_ref<SmallVector<Value>(Value, Value, ValueRange)> body);
  /// v, or 0 where the element is not valid.
  Value masked(Value v, Value valid) {
    return valid ? Value(arith::SelectOp::create(b, loc, valid, v, f64(0.0)))
                 : v;
  }
  /// Stores only a valid element.
  void storeValid(Value valid, function_ref<void()> store);
  /// Runs `body` on one thread of the block.
  void onFirstThread(function_ref<void()> body);

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value wide(Value v) {
    return arith::ExtFOp::create(b, loc, b.getF64Type(), v);
  }
  Value narrow(Value v) {
    return arith::TruncFOp::create(b, loc, b.getF32Type(), v);
  }
  /// Stores v into a per-channel gradient, added to it with accumulate.
  void storeGrad(Value v, Value memref, Value i) {
    if (spec.accumulate) {
      Value old = load(memref, i);
      v = add(old, v);
    }
    store(v, memref, i);
  }
  bool onGPU() const { return static_cast<bool>(scratch); }

  const OpKernelSpec &spec;
  const BatchNormGeometry &g;
  ValueRange args;
  Value scratch, channel, lane;
  /// Forward: the shift K (f64); backward: the saved mean and invstd (f64).
  Value shift, mean, invstd;
};
} // namespace

scf::ForOp ChannelEmitter::forEachElement(
    ValueRange init,
    function_ref<SmallVector<Value>(Value, Value, ValueRange)> body) {
  int64_t threads = onGPU() ? kBatchNormBlockSize : 1;
  int64_t unroll = onGPU() ? kUnroll : 1;
  int64_t count = g.getCount();
  bool exact = count % (threads * unroll) == 0;
  Value channelStart = arith::MulIOp::create(b, loc, channel, idx(g.spatial));
  return scf::ForOp::create(
      b, loc, idx(0), idx(count), idx(threads * unroll), init,
      [&](OpBuilder &, Location, Value base, ValueRange state) {
        SmallVector<Value> values(state);
        for (int64_t u = 0; u < unroll; ++u) {
          Value j = arith::AddIOp::create(b, loc, base, idx(u * threads));
          if (onGPU())
            j = arith::AddIOp::create(b, loc, j, lane);
          Value valid;
          if (!exact) {
            valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          j, idx(count));
            j = arith::SelectOp::create(b, loc, valid, j, idx(0));
          }
          // Element j = (row, s) of the channel is x[row, channel, s].
          Value at = j;
          if (g.channels > 1) {
            Value row = g.spatial == 1 ? j
                                       : Value(arith::DivUIOp::create(
                                             b, loc, j, idx(g.spatial)));
            Value skip = arith::MulIOp::create(
                b, loc, row, idx((g.channels - 1) * g.spatial));
            at = arith::AddIOp::create(b, loc, j, skip);
          }
          at = arith::AddIOp::create(b, loc, at, channelStart);
          values = body(at, valid, values);
        }
        scf::YieldOp::create(b, loc, values);
      });
}

void ChannelEmitter::storeValid(Value valid, function_ref<void()> store) {
  if (!valid)
    return store();
  auto guard = scf::IfOp::create(b, loc, valid, /*withElse=*/false);
  OpBuilder::InsertionGuard ig(b);
  b.setInsertionPointToStart(guard.thenBlock());
  store();
}

void ChannelEmitter::onFirstThread(function_ref<void()> body) {
  if (!onGPU())
    return body();
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, idx(0));
  auto guard = scf::IfOp::create(b, loc, first, /*withElse=*/false);
  OpBuilder::InsertionGuard ig(b);
  b.setInsertionPointToStart(guard.thenBlock());
  body();
}

std::pair<Value, Value> ChannelEmitter::emitPartialSums() {
  bool forward = spec.kind == OpKernelKind::BatchNorm;
  if (forward) {
    Value channelStart =
        arith::MulIOp::create(b, loc, channel, idx(g.spatial));
    shift = wide(load(args[0], channelStart));
  } else {
    mean = wide(load(args[3], channel));
    invstd = wide(load(args[4], channel));
  }
  Value zero = f64(0.0);
  auto loop = forEachElement(
      ValueRange{zero, zero}, [&](Value at, Value valid, ValueRange sums) {
        if (forward) {
          Value x = wide(load(args[0], at));
          Value d = masked(sub(x, shift), valid);
          Value square = mul(d, d);
          return SmallVector<Value>{add(sums[0], d), add(sums[1], square)};
        }
        Value gy = masked(wide(load(args[0], at)), valid);
        Value x = wide(load(args[1], at));
        Value xhat = mul(sub(x, mean), invstd);
        Value product = mul(gy, xhat);
        return SmallVector<Value>{add(sums[0], gy), add(sums[1], product)};
      });
  return {loop.getResult(0), loop.getResult(1)};
}

std::pair<Value, Value> ChannelEmitter::emitBlockSums(Value first,
                                                      Value second) {
  if (!onGPU())
    return {first, second};
  SmallVector<Value> sums = emitBlockSum(b, loc, scratch, lane,
                                         kBatchNormBlockSize, {first, second});
  return {sums[0], sums[1]};
}

void ChannelEmitter::emitForwardEnd(Value sumShifted, Value sumSquares) {
  Value x = args[0], gamma = args[1], beta = args[2], runMean = args[3],
        runVar = args[4], y = args[5], savedMean = args[6],
        savedInvstd = args[7];
  double count = double(g.getCount());
  Value n = f64(count);
  Value offset = div(sumShifted, n);
  Value batchMean = add(shift, offset);
  Value meanSquare = div(sumSquares, n);
  Value offsetSquare = mul(offset, offset);
  // Rounding can make the difference slightly negative for constant input.
  Value var = arith::MaximumFOp::create(
      b, loc, sub(meanSquare, offsetSquare), f64(0.0));
  Value root = math::SqrtOp::create(b, loc, add(var, f64(g.eps)));
  Value inv = div(f64(1.0), root);
  onFirstThread([&] {
    Value unbiased = count > 1 ? mul(var, f64(count / (count - 1))) : var;
    Value keep = f64(1.0 - g.momentum), m = f64(g.momentum);
    auto update = [&](Value running, Value stat) {
      Value old = wide(load(running, channel));
      Value decayed = mul(keep, old);
      Value next = add(decayed, mul(m, stat));
      store(narrow(next), running, channel);
    };
    update(runMean, batchMean);
    update(runVar, unbiased);
    store(narrow(batchMean), savedMean, channel);
    store(narrow(inv), savedInvstd, channel);
  });
  Value gammaC = wide(load(gamma, channel));
  Value betaC = wide(load(beta, channel));
  Value scale64 = mul(gammaC, inv);
  Value scale = narrow(scale64);
  Value shifted = mul(mul(batchMean, gammaC), inv);
  Value offset32 = narrow(sub(betaC, shifted));
  forEachElement(ValueRange{}, [&](Value at, Value valid, ValueRange) {
    Value v = load(x, at);
    Value scaled = mul(v, scale);
    Value result = add(scaled, offset32);
    storeValid(valid, [&] { store(result, y, at); });
    return SmallVector<Value>{};
  });
}

void ChannelEmitter::emitBackwardEnd(Value sumGy, Value sumGyXhat) {
  Value gyT = args[0], x = args[1], gamma = args[2], gx = args[5],
        ggamma = args[6], gbeta = args[7];
  onFirstThread([&] {
    storeGrad(narrow(sumGyXhat), ggamma, channel);
    storeGrad(narrow(sumGy), gbeta, channel);
  });
  // gx = gamma invstd / n (n gy - sum gy - xhat sum(gy xhat))
  double count = double(g.getCount());
  Value n = f64(count);
  Value gammaC = wide(load(gamma, channel));
  Value scale = div(mul(gammaC, invstd), n);
  forEachElement(ValueRange{}, [&](Value at, Value valid, ValueRange) {
    Value gy = wide(load(gyT, at));
    Value xv = wide(load(x, at));
    Value xhat = mul(sub(xv, mean), invstd);
    Value centered = sub(mul(n, gy), sumGy);
    Value projected = sub(centered, mul(xhat, sumGyXhat));
    Value v = narrow(mul(scale, projected));
    storeValid(valid, [&] { storeGrad(v, gx, at); });
    return SmallVector<Value>{};
  });
}

void ChannelEmitter::emitEval() {
  auto [scale, shift] = emitEvalAffine(b, loc, spec, args, channel);
  forEachElement(ValueRange{}, [&](Value at, Value valid, ValueRange) {
    Value v = load(args[0], at);
    Value scaled = mul(v, scale);
    Value result = add(scaled, shift);
    storeValid(valid, [&] { store(result, args[5], at); });
    return SmallVector<Value>{};
  });
}

void ChannelEmitter::emit() {
  if (spec.kind == OpKernelKind::BatchNormEval)
    return emitEval();
  auto [first, second] = emitPartialSums();
  auto [total1, total2] = emitBlockSums(first, second);
  if (spec.kind == OpKernelKind::BatchNorm)
    return emitForwardEnd(total1, total2);
  emitBackwardEnd(total1, total2);
}

void mlir::snn::emitBatchNormGPUChannel(OpBuilder &b, Location loc,
                                        const OpKernelSpec &spec,
                                        ValueRange args, Value scratch,
                                        Value channel, Value lane) {
  ChannelEmitter(b, loc, spec, args, scratch, channel, lane).emit();
}

void mlir::snn::emitBatchNormHostChannel(OpBuilder &b, Location loc,
                                         const OpKernelSpec &spec,
                                         ValueRange args, Value channel) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  ChannelEmitter(b, loc, spec, args, Value(), channel, zero).emit();
}

void mlir::snn::emitBatchNormEvalElement(OpBuilder &b, Location loc,
                                         const OpKernelSpec &spec,
                                         ValueRange args, Value i) {
  const BatchNormGeometry &g = spec.batchNorm;
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value rows = g.spatial == 1 ? i
                              : Value(arith::DivUIOp::create(b, loc, i,
                                                             idx(g.spatial)));
  Value channel = arith::RemUIOp::create(b, loc, rows, idx(g.channels));
  // Every element recomputes its channel's affine: cheaper on the GPU than
  // a pass of its own.
  auto [scale, shift] = emitEvalAffine(b, loc, spec, args, channel);
  Value x = memref::LoadOp::create(b, loc, args[0], ValueRange{i});
  Value scaled = arith::MulFOp::create(b, loc, x, scale);
  Value y = arith::AddFOp::create(b, loc, scaled, shift);
  memref::StoreOp::create(b, loc, y, args[5], ValueRange{i});
}
