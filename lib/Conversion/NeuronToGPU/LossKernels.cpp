//===- LossKernels.cpp - generated loss kernels ---------------------------===//
//
// The code of the loss kernels (LossKernels.h), with the semantics of
// docs/artifact-format.md's loss ops and the order of operations of the
// float64 reference (python/snnref/losses.py): per sample, m[c] (time mean
// or maximum of y), its first argmax, then CE = (log(sum_c exp(m[c] - max))
// + max) - m[label] or MSE = sum_c (m[c] - onehot[c])^2, all in f64; the
// gradient dL/dm / divisor is rounded once to f32 and spread over the steps
// (divided by T) or put at the first step that reaches the maximum.
// On the GPU, when m and the per-sample values fit in shared memory
// (kMaxStagedValues), the block computes them in stages: m[s, c] and
// exp(m[s, c] - max) with a thread per (s, c), the per-sample max, sums
// and loss with a thread per sample, the gradient with a thread per
// (s, c) again. A thread per sample alone runs C exps and T C loads in a
// chain (the SHD loss: 11.7 us on an H100 for 128 x 20). Each value is
// the same expression in the same order as in the per-sample form, so the
// bits are the same. Elsewhere (the host, larger batches) m[c] is
// recomputed where it is needed: a thread keeps no per-class array.
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/LossKernels.h"
#include "snn/Conversion/NeuronToGPU/KernelArith.h"
#include "BlockSum.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::snn;

std::optional<OpKernelSpec> mlir::snn::makeLossKernelSpec(
    StringRef kind, ArrayRef<int64_t> output, bool gradient) {
  auto mode = llvm::StringSwitch<std::optional<LossMode>>(kind)
                  .Cases({"loss_ce_rate", "loss_ce_membrane"}, LossMode::CE)
                  .Case("loss_mse_rate", LossMode::MSE)
                  .Case("loss_ce_membrane_max", LossMode::CEMax)
                  .Default(std::nullopt);
  if (!mode || output.size() < 3)
    return std::nullopt;
  OpKernelSpec spec;
  spec.kind = OpKernelKind::Loss;
  spec.lossMode = *mode;
  spec.lossGradient = gradient;
  LossGeometry &g = spec.loss;
  g.steps = output[0];
  g.batch = output[1];
  g.classes = 1;
  for (int64_t d : output.drop_front(2))
    g.classes *= d;
  spec.sizes = {g.batch};
  return spec;
}

namespace {
/// The block's partial sums: loss, hits, samples counted.
constexpr int64_t kPartials = 3;
/// The f64 values of the staged form's shared arrays at most (32 KiB; the
/// block sum's scratch comes on top): m or exp(m - max) per (s, c), and
/// per sample its max, m[label] (then the sum of the exps) and its hit.
constexpr int64_t kMaxStagedValues = 4096;
constexpr int64_t kPerSampleValues = 3;

int64_t getStagedValues(const LossGeometry &g) {
  return g.batch * g.classes + kPerSampleValues * g.batch;
}
bool isStaged(const LossGeometry &g) {
  return getStagedValues(g) <= kMaxStagedValues;
}
} // namespace

MemRefType mlir::snn::getLossScratchType(const OpKernelSpec &spec,
                                         MLIRContext *ctx) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
  int64_t values = kPartials * kOpKernelBlockSize;
  if (isStaged(spec.loss))
    values += getStagedValues(spec.loss);
  return MemRefType::get({values}, Float64Type::get(ctx),
                         MemRefLayoutAttrInterface(), workgroup);
}

namespace {
/// Emits the code of a loss kernel over its arguments (y, labels, loss,
/// gy (with a gradient), correct).
class LossEmitter : KernelArith {
public:
  LossEmitter(OpBuilder &b, Location loc, const OpKernelSpec &spec,
              ValueRange args)
      : KernelArith(b, loc), spec(spec), g(spec.loss), y(args[0]),
        labels(args[1]), lossOut(args[2]),
        gy(spec.lossGradient ? args[3] : Value()),
        correctOut(args[spec.lossGradient ? 4 : 3]) {}

  /// This thread's sums (loss, hits, samples counted) over the samples
  /// first, first + step, ... below B.
  SmallVector<Value> emitSamples(Value first, int64_t step);
  /// Writes the loss (the mean) and the correct count from the batch's
  /// sums.
  void emitResult(ValueRange totals);
  /// The staged form (isStaged): the same sums as emitSamples(lane, block
  /// size), with m and the exps computed by all threads into `shared`
  /// (from offset `base`) and the gradient written a thread per (s, c).
  SmallVector<Value> emitStagedSamples(Value shared, int64_t base,
                                       Value lane);

private:
  /// Runs body(s, c, p) for the pairs p = s C + c from `lane` on, a
  /// thread per pair.
  void forEachPair(Value lane, function_ref<void(Value, Value, Value)> body);
  /// label[s], whether it names a class, and the class (0 if not).
  std::tuple<Value, Value, Value> emitLabel(Value s);
  /// The first maximum of m(c) over the classes, and 1.0 (f64) where it
  /// is at the label (a valid one), else 0.0.
  std::pair<Value, Value> emitFirstMax(function_ref<Value(Value)> m,
                                       Value valid, Value labelAt);
  /// Stores the gradient value v of (s, c) at every step (mean over time),
  /// or at the first step that reaches the maximum mc (CEMax).
  void emitSpread(Value v, Value s, Value c, Value mc);
  /// (loss, hit, counted) of sample s, and its gradient.
  SmallVector<Value> emitSample(Value s);
  void emitGradient(Value s, Value labelAt, Value valid, Value best,
                    Value sum);
  /// m[s, c]: the time mean (max: maximum) of y[:, s, c], f64.
  Value emitM(Value s, Value c);
  /// The index of y[t, s, c] from that of y[0, s, c].
  Value atStep(Value base, Value t) {
    Value offset = arith::MulIOp::create(b, loc, t, idx(g.batch * g.classes));
    return arith::AddIOp::create(b, loc, base, offset);
  }
  /// exp(x) for x <= 0 in f64: x = k ln2 + r, |r| <= ln2 / 2, a degree-13
  /// Taylor polynomial of exp(r) times 2^k (x clamped to -708: exp of less
  /// is below every sum it enters by 300 orders of magnitude).
  Value exp64(Value x);
  /// log(x) for a normal x > 0 in f64: x = 2^e f, f in [sqrt(1/2), sqrt(2)],
  /// log f = 2 atanh((f - 1) / (f + 1)) by its series to z^23.
  Value log64(Value x);
  /// The f64 value of the one-hot target of class c.
  Value target(Value c, Value labelAt, Value valid) {
    Value same =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c, labelAt);
    Value hit = arith::AndIOp::create(b, loc, same, valid);
    return arith::UIToFPOp::create(b, loc, b.getF64Type(), hit);
  }
  /// The loss divisor of the gradient: B, or B C for MSE.
  double getDivisor() const {
    return spec.lossMode == LossMode::MSE ? double(g.batch * g.classes)
                                          : double(g.batch);
  }
  /// What dL/dm is divided by before it is spread: the loss divisor, and
  /// T for a mean over time (each step gets dL/dm / T).
  double getGradientDivisor() const {
    bool maximum = spec.lossMode == LossMode::CEMax;
    return getDivisor() * (maximum ? 1.0 : double(g.steps));
  }
  Value wide(Value v) {
    return arith::ExtFOp::create(b, loc, b.getF64Type(), v);
  }
  Value narrow(Value v) {
    return arith::TruncFOp::create(b, loc, b.getF32Type(), v);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  /// A loop over [from, to) with f64 sums `init`; `body(i, sums)` returns
  /// the next sums.
  scf::ForOp loop(Value from, Value to, Value step, ValueRange init,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    return scf::ForOp::create(
        b, loc, from, to, step, init,
        [&](OpBuilder &, Location, Value i, ValueRange state) {
          scf::YieldOp::create(b, loc, body(i, state));
        });
  }

  const OpKernelSpec &spec;
  const LossGeometry &g;
  Value y, labels, lossOut, gy, correctOut;
};
} // namespace

Value LossEmitter::exp64(Value x) {
  const double ln2Hi = 6.93147180369123816490e-01;
  const double ln2Lo = 1.90821492927058770002e-10;
  x = arith::MaximumFOp::create(b, loc, x, f64(-708.0));
  // k = round(x / ln2): x <= 0, so truncating t - 1/2 rounds it.
  Value t = mul(x, f64(1.0 / M_LN2));
  Value k = arith::FPToSIOp::create(b, loc, b.getI64Type(),
                                    sub(t, f64(0.5)));
  Value kf = arith::SIToFPOp::create(b, loc, b.getF64Type(), k);
  Value r = sub(sub(x, mul(kf, f64(ln2Hi))), mul(kf, f64(ln2Lo)));
  double factorial = 1.0;
  SmallVector<double> coefficients;
  for (int n = 0; n <= 13; ++n) {
    factorial *= n ? double(n) : 1.0;
    coefficients.push_back(1.0 / factorial);
  }
  Value p = f64(coefficients.back());
  for (int n = 12; n >= 0; --n)
    p = add(mul(p, r), f64(coefficients[n]));
  // 2^k from its exponent bits (k >= -1022: a normal number).
  Value biased = arith::AddIOp::create(b, loc, k, i64(1023));
  Value bits = arith::ShLIOp::create(b, loc, biased, i64(52));
  Value scale = arith::BitcastOp::create(b, loc, b.getF64Type(), bits);
  return mul(p, scale);
}

Value LossEmitter::log64(Value x) {
  const double ln2Hi = 6.93147180369123816490e-01;
  const double ln2Lo = 1.90821492927058770002e-10;
  Value bits = arith::BitcastOp::create(b, loc, b.getI64Type(), x);
  Value exponentBits = arith::ShRUIOp::create(b, loc, bits, i64(52));
  Value e = arith::SubIOp::create(b, loc, exponentBits, i64(1023));
  Value mantissa =
      arith::AndIOp::create(b, loc, bits, i64((int64_t(1) << 52) - 1));
  Value oneBits = arith::OrIOp::create(b, loc, mantissa, i64(int64_t(1023) << 52));
  Value f = arith::BitcastOp::create(b, loc, b.getF64Type(), oneBits);
  Value big = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, f,
                                    f64(M_SQRT2));
  f = select(big, mul(f, f64(0.5)), f);
  Value eNext = arith::AddIOp::create(b, loc, e, i64(1));
  e = select(big, eNext, e);
  Value z = div(sub(f, f64(1.0)), add(f, f64(1.0)));
  Value z2 = mul(z, z);
  Value s = f64(1.0 / 23.0);
  for (int n = 21; n >= 1; n -= 2)
    s = add(mul(s, z2), f64(1.0 / double(n)));
  Value logF = mul(mul(f64(2.0), z), s);
  Value ef = arith::SIToFPOp::create(b, loc, b.getF64Type(), e);
  Value low = add(logF, mul(ef, f64(ln2Lo)));
  return add(mul(ef, f64(ln2Hi)), low);
}

Value LossEmitter::emitM(Value s, Value c) {
  Value row = arith::MulIOp::create(b, loc, s, idx(g.classes));
  Value base = arith::AddIOp::create(b, loc, row, c);
  Value first = wide(load(y, base));
  bool maximum = spec.lossMode == LossMode::CEMax;
  auto steps = loop(idx(1), idx(g.steps), idx(1), ValueRange{first},
                    [&](Value t, ValueRange acc) {
                      Value v = wide(load(y, atStep(base, t)));
                      if (!maximum)
                        return SmallVector<Value>{add(acc[0], v)};
                      Value greater = arith::CmpFOp::create(
                          b, loc, arith::CmpFPredicate::OGT, v, acc[0]);
                      return SmallVector<Value>{select(greater, v, acc[0])};
                    });
  Value m = steps.getResult(0);
  return maximum ? m : div(m, f64(double(g.steps)));
}

std::tuple<Value, Value, Value> LossEmitter::emitLabel(Value s) {
  Value label = load(labels, s);
  Type i32 = label.getType();
  Value classes = arith::ConstantIntOp::create(b, loc, i32, g.classes);
  // A negative label is a large unsigned number: outside too.
  Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                      label, classes);
  Value zero32 = arith::ConstantIntOp::create(b, loc, i32, 0);
  Value labelAt = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                             select(valid, label, zero32));
  return {label, valid, labelAt};
}

std::pair<Value, Value>
LossEmitter::emitFirstMax(function_ref<Value(Value)> m, Value valid,
                          Value labelAt) {
  Value m0 = m(idx(0));
  auto argmax = scf::ForOp::create(
      b, loc, idx(1), idx(g.classes), idx(1), ValueRange{m0, idx(0)},
      [&](OpBuilder &, Location, Value c, ValueRange state) {
        Value mc = m(c);
        Value take = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                           mc, state[0]);
        scf::YieldOp::create(
            b, loc, ValueRange{select(take, mc, state[0]),
                               select(take, c, state[1])});
      });
  Value found = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      argmax.getResult(1), labelAt);
  Value hit = arith::UIToFPOp::create(
      b, loc, b.getF64Type(), arith::AndIOp::create(b, loc, found, valid));
  return {argmax.getResult(0), hit};
}

SmallVector<Value> LossEmitter::emitSample(Value s) {
  auto [label, valid, labelAt] = emitLabel(s);
  Type i32 = label.getType();
  auto [best, hit] =
      emitFirstMax([&](Value c) { return emitM(s, c); }, valid, labelAt);
  Value loss, sum;
  if (spec.lossMode == LossMode::MSE) {
    loss = loop(idx(0), idx(g.classes), idx(1), ValueRange{f64(0.0)},
                [&](Value c, ValueRange acc) {
                  Value d = sub(emitM(s, c), target(c, labelAt, valid));
                  return SmallVector<Value>{add(acc[0], mul(d, d))};
                })
               .getResult(0);
  } else {
    sum = loop(idx(0), idx(g.classes), idx(1), ValueRange{f64(0.0)},
               [&](Value c, ValueRange acc) {
                 Value e = exp64(sub(emitM(s, c), best));
                 return SmallVector<Value>{add(acc[0], e)};
               })
              .getResult(0);
    Value lse = add(log64(sum), best);
    loss = sub(lse, emitM(s, labelAt));
  }
  loss = select(valid, loss, f64(std::numeric_limits<double>::quiet_NaN()));
  Value counted = f64(1.0);
  if (spec.lossGradient) {
    emitGradient(s, labelAt, valid, best, sum);
  } else {
    // Evaluation: a label of -1 is a padding sample, skipped.
    Value minusOne = arith::ConstantIntOp::create(b, loc, i32, -1);
    Value padding = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          label, minusOne);
    loss = select(padding, f64(0.0), loss);
    counted = select(padding, f64(0.0), counted);
  }
  return {loss, hit, counted};
}

void LossEmitter::emitGradient(Value s, Value labelAt, Value valid,
                               Value best, Value sum) {
  double divisor = getGradientDivisor();
  loop(idx(0), idx(g.classes), idx(1), ValueRange{}, [&](Value c, ValueRange) {
    Value mc = emitM(s, c);
    Value goal = target(c, labelAt, valid);
    Value grad;
    if (spec.lossMode == LossMode::MSE) {
      grad = mul(f64(2.0), sub(mc, goal));
    } else {
      Value softmax = div(exp64(sub(mc, best)), sum);
      grad = sub(softmax, goal);
    }
    emitSpread(narrow(div(grad, f64(divisor))), s, c, mc);
    return SmallVector<Value>{};
  });
}

void LossEmitter::emitSpread(Value v, Value s, Value c, Value mc) {
  Value row = arith::MulIOp::create(b, loc, s, idx(g.classes));
  Value base = arith::AddIOp::create(b, loc, row, c);
  if (spec.lossMode != LossMode::CEMax) {
    loop(idx(0), idx(g.steps), idx(1), ValueRange{}, [&](Value t, ValueRange) {
      store(v, gy, atStep(base, t));
      return SmallVector<Value>{};
    });
    return;
  }
  // dL/dm at the first step that reaches the maximum, 0 elsewhere.
  Value none = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
  Value zero = f32(0.0);
  scf::ForOp::create(
      b, loc, idx(0), idx(g.steps), idx(1), ValueRange{none},
      [&](OpBuilder &, Location, Value t, ValueRange state) {
        Value at = atStep(base, t);
        Value yv = wide(load(y, at));
        Value reaches = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OEQ, yv, mc);
        Value before = arith::XOrIOp::create(
            b, loc, state[0],
            arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
        Value first = arith::AndIOp::create(b, loc, reaches, before);
        store(select(first, v, zero), gy, at);
        Value done = arith::OrIOp::create(b, loc, state[0], first);
        scf::YieldOp::create(b, loc, ValueRange{done});
      });
}

SmallVector<Value> LossEmitter::emitSamples(Value first, int64_t step) {
  Value zero = f64(0.0);
  auto samples = loop(first, idx(g.batch), idx(step),
                      ValueRange{zero, zero, zero},
                      [&](Value s, ValueRange sums) {
                        SmallVector<Value> sample = emitSample(s);
                        SmallVector<Value> next;
                        for (int k = 0; k < kPartials; ++k)
                          next.push_back(add(sums[k], sample[k]));
                        return next;
                      });
  return SmallVector<Value>(samples.getResults());
}

void LossEmitter::emitResult(ValueRange totals) {
  Value divisor = f64(getDivisor());
  if (!spec.lossGradient) {
    // The mean over the samples that have a label.
    divisor = totals[2];
    if (spec.lossMode == LossMode::MSE)
      divisor = mul(divisor, f64(double(g.classes)));
  }
  store(narrow(div(totals[0], divisor)), lossOut, idx(0));
  store(narrow(totals[1]), correctOut, idx(0));
}

void LossEmitter::forEachPair(Value lane,
                              function_ref<void(Value, Value, Value)> body) {
  loop(lane, idx(g.batch * g.classes), idx(kOpKernelBlockSize), ValueRange{},
       [&](Value p, ValueRange) {
         Value s = arith::DivUIOp::create(b, loc, p, idx(g.classes));
         Value c = arith::RemUIOp::create(b, loc, p, idx(g.classes));
         body(s, c, p);
         return SmallVector<Value>{};
       });
}

SmallVector<Value> LossEmitter::emitStagedSamples(Value shared, int64_t base,
                                                  Value lane) {
  // m[s, c] (CE: then exp(m - max)) at base + s C + c; per sample s its
  // max, m[label] (CE: then the sum of the exps) and hit after them.
  int64_t pairs = g.batch * g.classes;
  auto at = [&](int64_t offset, Value i) { return addI(idx(base + offset), i); };
  auto sampleAt = [&](int64_t array, Value s) {
    return at(pairs + array * g.batch, s);
  };
  enum { kBest = 0, kLabelM = 1, kHit = 2 };
  bool ce = spec.lossMode != LossMode::MSE;
  forEachPair(lane, [&](Value s, Value c, Value p) {
    store(emitM(s, c), shared, at(0, p));
  });
  gpu::BarrierOp::create(b, loc);
  // Per sample: the first maximum of m, m[label], the hit.
  loop(lane, idx(g.batch), idx(kOpKernelBlockSize), ValueRange{},
       [&](Value s, ValueRange) {
         auto [label, valid, labelAt] = emitLabel(s);
         Value row = mulI(s, idx(g.classes));
         auto [best, hit] = emitFirstMax(
             [&](Value c) { return load(shared, at(0, addI(row, c))); },
             valid, labelAt);
         store(best, shared, sampleAt(kBest, s));
         store(load(shared, at(0, addI(row, labelAt))), shared,
               sampleAt(kLabelM, s));
         store(hit, shared, sampleAt(kHit, s));
         return SmallVector<Value>{};
       });
  gpu::BarrierOp::create(b, loc);
  if (ce) {
    forEachPair(lane, [&](Value s, Value, Value p) {
      Value m = load(shared, at(0, p));
      Value best = load(shared, sampleAt(kBest, s));
      store(exp64(sub(m, best)), shared, at(0, p));
    });
    gpu::BarrierOp::create(b, loc);
  }
  // Per sample, in emitSamples' order: the loss and this thread's sums.
  Value zero = f64(0.0);
  auto samples = loop(
      lane, idx(g.batch), idx(kOpKernelBlockSize), ValueRange{zero, zero, zero},
      [&](Value s, ValueRange sums) {
        auto [label, valid, labelAt] = emitLabel(s);
        Value row = mulI(s, idx(g.classes));
        Value loss;
        if (!ce) {
          loss = loop(idx(0), idx(g.classes), idx(1), ValueRange{f64(0.0)},
                      [&](Value c, ValueRange acc) {
                        Value m = load(shared, at(0, addI(row, c)));
                        Value d = sub(m, target(c, labelAt, valid));
                        return SmallVector<Value>{add(acc[0], mul(d, d))};
                      })
                     .getResult(0);
        } else {
          Value sum =
              loop(idx(0), idx(g.classes), idx(1), ValueRange{f64(0.0)},
                   [&](Value c, ValueRange acc) {
                     Value e = load(shared, at(0, addI(row, c)));
                     return SmallVector<Value>{add(acc[0], e)};
                   })
                  .getResult(0);
          Value lse = add(log64(sum), load(shared, sampleAt(kBest, s)));
          loss = sub(lse, load(shared, sampleAt(kLabelM, s)));
          store(sum, shared, sampleAt(kLabelM, s));
        }
        loss = select(valid, loss,
                      f64(std::numeric_limits<double>::quiet_NaN()));
        Value hit = load(shared, sampleAt(kHit, s));
        Value counted = f64(1.0);
        if (!spec.lossGradient) {
          Type i32 = label.getType();
          Value minusOne = arith::ConstantIntOp::create(b, loc, i32, -1);
          Value padding = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::eq, label, minusOne);
          loss = select(padding, f64(0.0), loss);
          counted = select(padding, f64(0.0), counted);
        }
        return SmallVector<Value>{add(sums[0], loss), add(sums[1], hit),
                                  add(sums[2], counted)};
      });
  SmallVector<Value> partials(samples.getResults());
  if (!spec.lossGradient)
    return partials;
  gpu::BarrierOp::create(b, loc);
  double divisor = getGradientDivisor();
  forEachPair(lane, [&](Value s, Value c, Value p) {
    auto [label, valid, labelAt] = emitLabel(s);
    Value goal = target(c, labelAt, valid);
    Value grad;
    if (!ce) {
      grad = mul(f64(2.0), sub(load(shared, at(0, p)), goal));
    } else {
      Value sum = load(shared, sampleAt(kLabelM, s));
      grad = sub(div(load(shared, at(0, p)), sum), goal);
    }
    // CEMax compares y with m, which the exps replaced: computed again.
    Value mc = spec.lossMode == LossMode::CEMax ? emitM(s, c) : Value();
    emitSpread(narrow(div(grad, f64(divisor))), s, c, mc);
  });
  return partials;
}

void mlir::snn::emitLossGPUBlock(OpBuilder &b, Location loc,
                                 const OpKernelSpec &spec, ValueRange args,
                                 Value scratch, Value lane) {
  LossEmitter emitter(b, loc, spec, args);
  constexpr int64_t kScratch = kPartials * kOpKernelBlockSize;
  SmallVector<Value> partials =
      isStaged(spec.loss)
          ? emitter.emitStagedSamples(scratch, kScratch, lane)
          : emitter.emitSamples(lane, kOpKernelBlockSize);
  SmallVector<Value> totals =
      emitBlockSum(b, loc, scratch, lane, kOpKernelBlockSize, partials);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, zero);
  auto guard = scf::IfOp::create(b, loc, first, /*withElse=*/false);
  OpBuilder::InsertionGuard ig(b);
  b.setInsertionPointToStart(guard.thenBlock());
  emitter.emitResult(totals);
}

void mlir::snn::emitLossHost(OpBuilder &b, Location loc,
                             const OpKernelSpec &spec, ValueRange args) {
  LossEmitter emitter(b, loc, spec, args);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  emitter.emitResult(emitter.emitSamples(zero, 1));
}
