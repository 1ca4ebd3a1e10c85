//===- OpKernels.cpp - elementwise and optimizer kernels ------------------===//
//
// The per-element code of the op kernels, shared by the GPU kernel (one
// thread per element, segments on block boundaries) and the host function
// (a loop per segment). The order of the floating-point operations is the
// order of the formulas of docs/artifact-format.md and of torch.optim's
// single-tensor path, in f32. What PyTorch computes on the host in double
// is computed in f64 here and rounded once to f32: the constants 1 - beta
// and 1 - dampening, AdamW's 1 - lr * weight_decay and the bias corrections
// 1 - beta^step (from the run values' step).
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/OpKernels.h"
#include "snn/Conversion/NeuronToGPU/BatchNormKernels.h"
#include "snn/Conversion/NeuronToGPU/EventLinearTiles.h"
#include "snn/Conversion/NeuronToGPU/HostKernelRange.h"
#include "snn/Conversion/NeuronToGPU/KernelArith.h"
#include "snn/Conversion/NeuronToGPU/LayerKernels.h"
#include "snn/Conversion/NeuronToGPU/LossKernels.h"
#include "snn/Conversion/NeuronToGPU/PoolKernels.h"
#include "snn/Conversion/NeuronToGPU/SparseKernels.h"
#include "snn/Conversion/NeuronToGPU/TransposeKernels.h"
#include "SpikeBitsKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::snn;

unsigned OpKernelSpec::getTensorsPerSegment() const {
  switch (kind) {
  case OpKernelKind::Add:
    return 3;
  case OpKernelKind::Scale:
    return 2;
  case OpKernelKind::SGD:
    return momentum != 0.0 ? 3 : 2;
  case OpKernelKind::Adam:
    return 4;
  case OpKernelKind::Dropout:
  case OpKernelKind::DropoutBwd:
    return 3;
  case OpKernelKind::Pool:
    return 2;
  case OpKernelKind::PoolBwd:
    return poolMode == PoolMode::Max ? 3 : 2;
  case OpKernelKind::SpikeDensity:
    return 3;
  case OpKernelKind::TransposeWeight:
    return 3;
  case OpKernelKind::EventLinear:
    return hasBias ? 5 : 4;
  case OpKernelKind::EventLinearBits:
  case OpKernelKind::CompactRows:
    return xValues ? 5 : 4;
  case OpKernelKind::CompactColumns:
    return 3;
  case OpKernelKind::EventLinearLists:
    return (xValues ? 6 : 5) + (columnSegment ? 1 : 0);
  case OpKernelKind::EventLinearTiles:
    return 4 + (xValues ? 1 : 0) + (hasBias ? 1 : 0);
  case OpKernelKind::EventLinearBand:
    return 5;
  case OpKernelKind::ThinWeightGradBits:
    return 3;
  case OpKernelKind::PackBits:
  case OpKernelKind::UnpackBits:
    return 2;
  case OpKernelKind::Loss:
    return lossGradient ? 5 : 4;
  case OpKernelKind::BiasAdd:
  case OpKernelKind::BiasGrad:
  case OpKernelKind::ChannelsFirst:
  case OpKernelKind::ChannelsLast:
  case OpKernelKind::Im2col:
  case OpKernelKind::Col2im:
  case OpKernelKind::TimeSum:
  case OpKernelKind::TimeBroadcast:
  case OpKernelKind::Transpose:
    return 2;
  default: // batch norm
    return getBatchNormTensorCount(*this);
  }
}

int64_t OpKernelSpec::getTensorSize(unsigned segment, unsigned tensor) const {
  if (kind == OpKernelKind::Pool)
    return tensor == 0 ? pool.getInputElements() : pool.getOutputElements();
  if (kind == OpKernelKind::PoolBwd)
    return tensor == 0 ? pool.getOutputElements() : pool.getInputElements();
  if (isBatchNorm(*this))
    return getBatchNormTensorSize(*this, tensor);
  if (kind == OpKernelKind::BiasAdd || kind == OpKernelKind::BiasGrad)
    return tensor == 0 ? channelGeometry.getElements()
                       : channelGeometry.channels;
  if (kind == OpKernelKind::TimeSum || kind == OpKernelKind::TimeBroadcast)
    return (tensor == 0) == (kind == OpKernelKind::TimeSum)
               ? channelGeometry.getElements()
               : channelGeometry.channels;
  if (kind == OpKernelKind::Im2col || kind == OpKernelKind::Col2im)
    return (tensor == 0) == (kind == OpKernelKind::Im2col)
               ? columns.getInputElements()
               : columns.getColumnElements();
  if (kind == OpKernelKind::Loss) {
    // y, labels, loss, (gy,) correct
    if (tensor == 0 || (lossGradient && tensor == 3))
      return loss.getElements();
    return tensor == 1 ? loss.batch : 1;
  }
  return sizes[segment];
}

StringRef OpKernelSpec::getKindName() const {
  switch (kind) {
  case OpKernelKind::Add:
    return "add";
  case OpKernelKind::Scale:
    return "scale";
  case OpKernelKind::SGD:
    return "sgd";
  case OpKernelKind::Adam:
    return "adam";
  case OpKernelKind::Dropout:
    return "dropout";
  case OpKernelKind::DropoutBwd:
    return "dropout_bwd";
  case OpKernelKind::Pool:
  case OpKernelKind::PoolBwd: {
    static const char *names[2][3] = {
        {"avg_pool", "sum_pool", "max_pool"},
        {"avg_pool_bwd", "sum_pool_bwd", "max_pool_bwd"}};
    return names[kind == OpKernelKind::PoolBwd][static_cast<int>(poolMode)];
  }
  case OpKernelKind::SpikeDensity:
    return "spike_density";
  case OpKernelKind::TransposeWeight:
    return "transpose_weight";
  case OpKernelKind::EventLinear:
    return "event_linear";
  case OpKernelKind::EventLinearBits:
    return "event_weight_grad_bits";
  case OpKernelKind::CompactRows:
    return "compact_rows";
  case OpKernelKind::CompactColumns:
    return "compact_columns";
  case OpKernelKind::EventLinearLists:
    return "event_weight_grad_lists";
  case OpKernelKind::EventLinearTiles:
    return "event_linear_tiles";
  case OpKernelKind::EventLinearBand:
    return "event_linear_band";
  case OpKernelKind::ThinWeightGradBits:
    return "thin_weight_grad_bits";
  case OpKernelKind::EventConv2d:
    return "event_conv2d";
  case OpKernelKind::EventConv2dWeightGrad:
    return "event_conv2d_weight_grad";
  case OpKernelKind::PackBits:
    return "pack_bits";
  case OpKernelKind::UnpackBits:
    return "unpack_bits";
  case OpKernelKind::BatchNormStats:
    return "batch_norm_stats";
  case OpKernelKind::BatchNormFinish:
    return "batch_norm_finish";
  case OpKernelKind::BatchNormApply:
    return "batch_norm_apply";
  case OpKernelKind::BatchNormEval:
    return "batch_norm_eval";
  case OpKernelKind::BatchNormBwdStats:
    return "batch_norm_bwd_stats";
  case OpKernelKind::BatchNormBwdFinish:
    return "batch_norm_bwd_finish";
  case OpKernelKind::BatchNormBwdApply:
    return "batch_norm_bwd_apply";
  case OpKernelKind::Loss: {
    static const char *names[2][3] = {
        {"loss_ce_eval", "loss_mse_eval", "loss_ce_max_eval"},
        {"loss_ce", "loss_mse", "loss_ce_max"}};
    return names[lossGradient][static_cast<int>(lossMode)];
  }
  case OpKernelKind::BiasAdd:
    return "bias_add";
  case OpKernelKind::BiasGrad:
    return "bias_grad";
  case OpKernelKind::ChannelsFirst:
    return "channels_first";
  case OpKernelKind::ChannelsLast:
    return "channels_last";
  case OpKernelKind::Im2col:
    return columns.channelsLast ? "im2col_nhwc" : "im2col";
  case OpKernelKind::Col2im:
    return columns.channelsLast ? "col2im_nhwc" : "col2im";
  case OpKernelKind::TimeSum:
    return "time_sum";
  case OpKernelKind::TimeBroadcast:
    return "time_broadcast";
  case OpKernelKind::Transpose:
    return "transpose";
  }
  return "";
}

std::string OpKernelSpec::getKey() const {
  std::string key = getKindName().str();
  for (int64_t n : sizes)
    key += "," + std::to_string(n);
  // Attributes as f32, which is what the kernel uses (bias corrections: f64).
  key += llvm::formatv(";{0:e17},{1},{2:e17},{3:e17},{4:e17},{5},{6:e17},{7:"
                       "e17},{8:e17},{9},{10:e17},{11}",
                       scale, accumulate, momentum, dampening, weightDecay,
                       nesterov, beta1, beta2, eps, decoupled, p, seedIndex)
             .str();
  if (kind == OpKernelKind::Pool || kind == OpKernelKind::PoolBwd) {
    const PoolGeometry &g = pool;
    for (int64_t v : {g.planes, g.h, g.w, g.oh, g.ow, g.kh, g.kw, g.sh, g.sw,
                      g.ph, g.pw, g.channels})
      key += ";" + std::to_string(v);
  }
  if (isEventKernel(kind))
    key += llvm::formatv(";{0},{1},{2},{3},{4},{5},{6},{7},{8},{9},{10}", rows,
                         inFeatures, outFeatures, hasBias, xValues, tileColumns,
                         columnSegment, xBits, countsNonzeros, weightStrips,
                         xBinary)
               .str();
  if (kind == OpKernelKind::EventLinearBand)
    key += llvm::formatv(";{0:e17},{1:e17}", float(bandVTh), float(band)).str();
  if (transposeBatch != 1)
    key += ";batch" + std::to_string(transposeBatch);
  key += ";" + std::to_string(packedElements);
  if (isBatchNorm(*this)) {
    const BatchNormGeometry &g = batchNorm;
    key += llvm::formatv(";{0},{1},{2},{3},{4},{5},{6:e17},{7:e17}", g.rows,
                         g.channels, g.spatial, g.parts, g.rowsPerPart,
                         g.width, g.eps, g.momentum)
               .str();
  }
  if (kind == OpKernelKind::Loss)
    key += llvm::formatv(";{0},{1},{2}", loss.steps, loss.batch, loss.classes)
               .str();
  if (kind == OpKernelKind::TimeSum || kind == OpKernelKind::TimeBroadcast)
    key += llvm::formatv(";{0},{1}", channelGeometry.rows,
                         channelGeometry.channels)
               .str();
  if (kind == OpKernelKind::Transpose) {
    for (int64_t d : transpose.shape)
      key += ";" + std::to_string(d);
    key += ";to";
    for (int64_t p : transpose.permutation)
      key += ";" + std::to_string(p);
  }
  if (isLayerKernel(kind) || kind == OpKernelKind::EventConv2d ||
      kind == OpKernelKind::EventConv2dWeightGrad) {
    const ChannelGeometry &c = channelGeometry;
    const ConvColumnsGeometry &g = columns;
    for (int64_t v : {c.rows, c.channels, c.inner, g.images, g.channels, g.h,
                      g.w, g.oh, g.ow, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh,
                      g.dw, int64_t(g.channelsLast)})
      key += ";" + std::to_string(v);
  }
  return key;
}

int64_t OpKernelSpec::getBlockSize() const {
  if (isEventKernel(kind))
    return getEventKernelBlockSize(*this);
  return kOpKernelBlockSize;
}

int64_t OpKernelSpec::getDynamicSharedBytes() const {
  return kind == OpKernelKind::EventLinearTiles ? getEventTileSharedBytes(*this)
                                                : 0;
}

int64_t OpKernelSpec::getGridSize() const {
  if (isEventKernel(kind))
    return getEventKernelGridSize(*this);
  if (isBatchNorm(*this))
    return getBatchNormGridSize(*this);
  if (kind == OpKernelKind::Loss)
    return 1;
  if (kind == OpKernelKind::BiasGrad)
    return channelGeometry.channels;
  int64_t blocks = 0;
  for (int64_t n : sizes)
    blocks += llvm::divideCeilSigned(n, kOpKernelBlockSize);
  return blocks;
}

SmallVector<Type> mlir::snn::getOpKernelArgTypes(const OpKernelSpec &spec,
                                                 MLIRContext *ctx, bool host) {
  if (isEventKernel(spec.kind))
    return getEventKernelArgTypes(spec, ctx);
  SmallVector<Type> types;
  Type f32 = Float32Type::get(ctx);
  if (isSpikeBitsKernel(spec))
    return getSpikeBitsArgTypes(spec, ctx);
  Type mask = host ? f32 : IntegerType::get(ctx, 8);
  Type label = IntegerType::get(ctx, 32);
  for (unsigned s = 0; s < spec.sizes.size(); ++s)
    for (unsigned i = 0; i < spec.getTensorsPerSegment(); ++i)
      types.push_back(MemRefType::get(
          {spec.getTensorSize(s, i)},
          static_cast<int>(i) == spec.getMaskTensor() ? mask
          : isLossKernel(spec) && i == 1              ? label
                                                      : f32));
  if (spec.usesRunValues())
    types.push_back(MemRefType::get({4}, IntegerType::get(ctx, 32)));
  return types;
}

std::string OpKernelRegistry::request(const OpKernelSpec &spec) {
  std::string key = spec.getKey();
  auto it = byKey.find(key);
  if (it != byKey.end())
    return it->second;
  std::string name =
      ("snn_op" + Twine(kernels.size()) + "_" + spec.getKindName()).str();
  byKey[key] = name;
  kernels.push_back({name, spec});
  return name;
}

namespace {
/// Emits the per-element code of one kernel.
class ElementEmitter : KernelArith {
public:
  ElementEmitter(OpBuilder &b, Location loc, const OpKernelSpec &spec)
      : KernelArith(b, loc), spec(spec) {}

  /// Reads the run values (learning rate, step) and derives what every
  /// element uses; call once, before the segments.
  void emitPrologue(Value runValues);
  /// The code of element `i` of the segment whose tensors are `args`.
  void emitElement(ValueRange args, Value i);

private:
  /// base^e for e >= 0 in f64, by squaring.
  Value powInt(Value base, Value e);

  void emitSGD(ValueRange args, Value i);
  void emitAdam(ValueRange args, Value i);
  void emitDropout(ValueRange args, Value i);
  void emitDropoutBwd(ValueRange args, Value i);
  void emitTimeSum(ValueRange args, Value i);
  void emitTimeBroadcast(ValueRange args, Value i);
  Value i64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  }
  /// Whether mask element i is set (an i8 or a 0/1 float slot).
  Value loadMask(Value mask, Value i);
  void storeMask(Value keep, Value mask, Value i);

  const OpKernelSpec &spec;
  Value lr, first, stepSize, root2, seed;
};
} // namespace

Value ElementEmitter::powInt(Value base, Value e) {
  Type f64Type = b.getF64Type(), i64 = b.getI64Type();
  auto loop = scf::WhileOp::create(
      b, loc, TypeRange{f64Type, f64Type, i64}, ValueRange{f64(1.0), base, e},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value zero = arith::ConstantIntOp::create(nb, l, i64, 0);
        Value more = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sgt,
                                           args[2], zero);
        scf::ConditionOp::create(nb, l, more, args);
      },
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value one = arith::ConstantIntOp::create(nb, l, i64, 1);
        Value bit = arith::AndIOp::create(nb, l, args[2], one);
        Value odd = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ne, bit,
                                          arith::ConstantIntOp::create(nb, l, i64, 0));
        Value times = arith::MulFOp::create(nb, l, args[0], args[1]);
        Value acc = arith::SelectOp::create(nb, l, odd, times, args[0]);
        Value sq = arith::MulFOp::create(nb, l, args[1], args[1]);
        Value rest = arith::ShRSIOp::create(nb, l, args[2], one);
        scf::YieldOp::create(nb, l, ValueRange{acc, sq, rest});
      });
  return loop.getResult(0);
}

void ElementEmitter::emitPrologue(Value runValues) {
  if (!spec.usesRunValues())
    return;
  auto word = [&](int64_t k) {
    return memref::LoadOp::create(
        b, loc, runValues,
        ValueRange{arith::ConstantIndexOp::create(b, loc, k)});
  };
  if (spec.kind == OpKernelKind::Dropout) {
    // Words 2, 3: this step's seed (low, high); the op's stream as the
    // runtime's dropout always had it.
    Value low = arith::ExtUIOp::create(b, loc, b.getI64Type(), word(2));
    Value high = arith::ExtUIOp::create(b, loc, b.getI64Type(), word(3));
    Value step = arith::OrIOp::create(
        b, loc, low, arith::ShLIOp::create(b, loc, high, i64(32)));
    Value mixed = arith::MulIOp::create(b, loc, step,
                                        i64(int64_t(0x100000001B3ull)));
    seed = arith::AddIOp::create(b, loc, mixed, i64(spec.seedIndex));
    return;
  }
  // Word 0: the learning rate (f32 bits); word 1: the 1-based step.
  lr = arith::BitcastOp::create(b, loc, b.getF32Type(), word(0));
  Value step = arith::ExtUIOp::create(b, loc, b.getI64Type(), word(1));
  if (spec.kind == OpKernelKind::SGD) {
    // The momentum buffer starts as the gradient.
    first = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ule, step,
        arith::ConstantIntOp::create(b, loc, b.getI64Type(), 1));
    return;
  }
  auto correction = [&](double beta) {
    Value power = powInt(f64(beta), step);
    Value c = sub(f64(1.0), power);
    return arith::TruncFOp::create(b, loc, b.getF32Type(), c);
  };
  Value c1 = correction(spec.beta1), c2 = correction(spec.beta2);
  stepSize = div(lr, c1);
  root2 = math::SqrtOp::create(b, loc, c2);
}

// One statement per operation: the IR does not depend on the C++ compiler's
// order of evaluating arguments.

void ElementEmitter::emitSGD(ValueRange args, Value i) {
  Value param = args[0], grad = args[1];
  Value g = load(grad, i);
  if (spec.weightDecay != 0.0) {
    Value wd = f32(spec.weightDecay);
    Value p = load(param, i);
    g = add(g, mul(wd, p));
  }
  if (spec.momentum != 0.0) {
    Value buf = args[2];
    Value momentum = f32(spec.momentum);
    Value old = load(buf, i);
    Value decayed = mul(momentum, old);
    Value damp = f32(1.0 - spec.dampening);
    Value later = add(decayed, mul(damp, g));
    Value bv = arith::SelectOp::create(b, loc, first, g, later);
    store(bv, buf, i);
    g = spec.nesterov ? add(g, mul(momentum, bv)) : bv;
  }
  Value p = load(param, i);
  Value delta = mul(lr, g);
  store(sub(p, delta), param, i);
}

void ElementEmitter::emitAdam(ValueRange args, Value i) {
  Value param = args[0], grad = args[1], m = args[2], v = args[3];
  Value p = load(param, i);
  Value g = load(grad, i);
  if (spec.weightDecay != 0.0) {
    if (spec.decoupled) {
      // 1 - lr * weight_decay in f64, as PyTorch computes it on the host.
      Value lr64 = arith::ExtFOp::create(b, loc, b.getF64Type(), lr);
      Value wd = f64(spec.weightDecay);
      Value keep = sub(f64(1.0), mul(lr64, wd));
      p = mul(p, arith::TruncFOp::create(b, loc, b.getF32Type(), keep));
    } else {
      Value wd = f32(spec.weightDecay);
      g = add(g, mul(wd, p));
    }
  }
  Value beta1 = f32(spec.beta1), rest1 = f32(1.0 - spec.beta1);
  Value mOld = load(m, i);
  Value mDecayed = mul(beta1, mOld);
  Value mi = add(mDecayed, mul(rest1, g));
  Value beta2 = f32(spec.beta2), rest2 = f32(1.0 - spec.beta2);
  Value vOld = load(v, i);
  Value vDecayed = mul(beta2, vOld);
  Value vi = add(vDecayed, mul(mul(rest2, g), g));
  store(mi, m, i);
  store(vi, v, i);
  Value root = math::SqrtOp::create(b, loc, vi);
  Value eps = f32(spec.eps);
  Value denom = add(div(root, root2), eps);
  Value step = mul(stepSize, div(mi, denom));
  store(sub(p, step), param, i);
}

Value ElementEmitter::loadMask(Value mask, Value i) {
  Value m = load(mask, i);
  if (isa<FloatType>(m.getType()))
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, m,
                                 f32(0.0));
  Value zero = arith::ConstantIntOp::create(b, loc, m.getType(), 0);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, m, zero);
}

void ElementEmitter::storeMask(Value keep, Value mask, Value i) {
  Type elem = cast<MemRefType>(mask.getType()).getElementType();
  Value v = isa<FloatType>(elem)
                ? Value(arith::UIToFPOp::create(b, loc, elem, keep))
                : Value(arith::ExtUIOp::create(b, loc, elem, keep));
  store(v, mask, i);
}

void ElementEmitter::emitDropout(ValueRange args, Value i) {
  Value x = args[0], y = args[1], mask = args[2];
  // A counter-based uniform in [0, 1) from (seed, i): splitmix64's mixing,
  // the top 24 bits.
  Value index = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), i);
  Value counter = arith::AddIOp::create(b, loc, index, i64(1));
  Value z = arith::AddIOp::create(
      b, loc, seed,
      arith::MulIOp::create(b, loc, counter,
                            i64(int64_t(0x9E3779B97F4A7C15ull))));
  auto mix = [&](Value v, int64_t shift, uint64_t factor) {
    Value shifted = arith::ShRUIOp::create(b, loc, v, i64(shift));
    Value folded = arith::XOrIOp::create(b, loc, v, shifted);
    return arith::MulIOp::create(b, loc, folded, i64(int64_t(factor)));
  };
  z = mix(z, 30, 0xBF58476D1CE4E5B9ull);
  z = mix(z, 27, 0x94D049BB133111EBull);
  z = arith::XOrIOp::create(b, loc, z,
                            arith::ShRUIOp::create(b, loc, z, i64(31)));
  Value top = arith::ShRUIOp::create(b, loc, z, i64(40));
  Value bits = arith::UIToFPOp::create(b, loc, b.getF32Type(), top);
  Value u = mul(bits, f32(1.0 / 16777216.0));
  Value keep = f32(1.0f - float(spec.p));
  Value kept =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, u, keep);
  storeMask(kept, mask, i);
  Value xv = load(x, i);
  Value scaled = div(xv, keep);
  store(arith::SelectOp::create(b, loc, kept, scaled, f32(0.0)), y, i);
}

void ElementEmitter::emitDropoutBwd(ValueRange args, Value i) {
  Value gy = args[0], mask = args[1], gx = args[2];
  Value kept = loadMask(mask, i);
  Value keep = f32(1.0f - float(spec.p));
  Value g = load(gy, i);
  Value scaled = div(g, keep);
  Value v = arith::SelectOp::create(b, loc, kept, scaled, f32(0.0));
  if (spec.accumulate) {
    Value old = load(gx, i);
    v = add(old, v);
  }
  store(v, gx, i);
}

/// y[i] = scale * sum over t of x[t, i], the sum in f64 in step order (as
/// the losses' time means). An iteration loads the x of `unroll` steps
/// (the largest divisor of T up to 10) before it adds them in order: the
/// SHD readout's sum (2560 threads, T = 100) is bound by one load latency
/// per step otherwise (5.7 us on an H100). Same additions in the same order.
void ElementEmitter::emitTimeSum(ValueRange args, Value i) {
  const ChannelGeometry &g = spec.channelGeometry;
  int64_t unroll = getLargestDivisorAtMost(g.rows, 10);
  Value row = arith::ConstantIndexOp::create(b, loc, g.channels);
  auto loop = scf::ForOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, 0),
      arith::ConstantIndexOp::create(b, loc, g.rows),
      arith::ConstantIndexOp::create(b, loc, unroll), ValueRange{f64(0.0)},
      [&](OpBuilder &nb, Location l, Value first, ValueRange acc) {
        SmallVector<Value> loaded;
        for (int64_t u = 0; u < unroll; ++u) {
          Value t = u == 0 ? first
                           : arith::AddIOp::create(
                                 nb, l, first,
                                 arith::ConstantIndexOp::create(nb, l, u));
          Value at = arith::AddIOp::create(
              nb, l, arith::MulIOp::create(nb, l, t, row), i);
          loaded.push_back(
              memref::LoadOp::create(nb, l, args[0], ValueRange{at}));
        }
        Value sum = acc[0];
        for (Value x : loaded)
          sum = arith::AddFOp::create(
              nb, l, sum, arith::ExtFOp::create(nb, l, nb.getF64Type(), x));
        scf::YieldOp::create(nb, l, ValueRange{sum});
      });
  Value scaled = mul(f64(spec.scale), loop.getResult(0));
  store(arith::TruncFOp::create(b, loc, b.getF32Type(), scaled), args[1], i);
}

/// y[t, i] = scale * x[i] (the product in f64, as time_sum's).
void ElementEmitter::emitTimeBroadcast(ValueRange args, Value i) {
  Value row =
      arith::ConstantIndexOp::create(b, loc, spec.channelGeometry.channels);
  Value x = load(args[0], arith::RemUIOp::create(b, loc, i, row));
  Value wide = arith::ExtFOp::create(b, loc, b.getF64Type(), x);
  Value scaled = mul(f64(spec.scale), wide);
  store(arith::TruncFOp::create(b, loc, b.getF32Type(), scaled), args[1], i);
}

void ElementEmitter::emitElement(ValueRange args, Value i) {
  switch (spec.kind) {
  case OpKernelKind::Add: {
    Value a = load(args[0], i);
    Value c = load(args[1], i);
    store(add(a, c), args[2], i);
    return;
  }
  case OpKernelKind::Scale: {
    Value scale = f32(spec.scale);
    Value v = mul(scale, load(args[0], i));
    if (spec.accumulate) {
      Value old = load(args[1], i);
      v = add(old, v);
    }
    store(v, args[1], i);
    return;
  }
  case OpKernelKind::SGD:
    return emitSGD(args, i);
  case OpKernelKind::Adam:
    return emitAdam(args, i);
  case OpKernelKind::Dropout:
    return emitDropout(args, i);
  case OpKernelKind::DropoutBwd:
    return emitDropoutBwd(args, i);
  case OpKernelKind::Pool:
  case OpKernelKind::PoolBwd:
    return emitPoolElement(b, loc, spec, args, i);
  case OpKernelKind::SpikeDensity:
  case OpKernelKind::TransposeWeight:
  case OpKernelKind::EventLinear:
  case OpKernelKind::EventLinearBits:
  case OpKernelKind::CompactRows:
  case OpKernelKind::CompactColumns:
  case OpKernelKind::EventLinearLists:
  case OpKernelKind::EventLinearTiles:
  case OpKernelKind::EventLinearBand:
  case OpKernelKind::ThinWeightGradBits:
    llvm_unreachable("event-driven kernels are built by SparseKernels.cpp");
  case OpKernelKind::PackBits:
  case OpKernelKind::UnpackBits:
    return emitSpikeBitsWord(b, loc, spec, args, i);
  case OpKernelKind::Loss:
    llvm_unreachable("losses are reductions, built by LossKernels.cpp");
  case OpKernelKind::BiasAdd:
  case OpKernelKind::ChannelsFirst:
  case OpKernelKind::ChannelsLast:
  case OpKernelKind::Im2col:
  case OpKernelKind::Col2im:
    return emitLayerElement(b, loc, spec, args, i);
  case OpKernelKind::BiasGrad:
    llvm_unreachable("the bias gradient is a reduction (LayerKernels.cpp)");
  case OpKernelKind::TimeSum:
    return emitTimeSum(args, i);
  case OpKernelKind::TimeBroadcast:
    return emitTimeBroadcast(args, i);
  case OpKernelKind::Transpose:
    return emitTransposeElement(b, loc, spec, args, i);
  default:
    llvm_unreachable("batch norm kernels are built by BatchNormKernels.cpp");
  }
}

/// The tensors of segment `s` among the kernel's arguments.
static ValueRange segmentArgs(const OpKernelSpec &spec, ValueRange args,
                              unsigned s) {
  unsigned k = spec.getTensorsPerSegment();
  return args.slice(s * k, k);
}

/// Emits, at the insertion point, the segments [s, end) of the GPU kernel:
/// a chain of block-range tests, the matching segment's element code inside.
static void emitSegmentChain(OpBuilder &b, Location loc,
                             const OpKernelSpec &spec, ElementEmitter &emit,
                             ValueRange args, Value block, Value lane,
                             unsigned s, int64_t firstBlock) {
  int64_t n = spec.sizes[s];
  int64_t blocks = llvm::divideCeilSigned(n, kOpKernelBlockSize);
  auto body = [&](OpBuilder &nb) {
    Value local = arith::SubIOp::create(
        nb, loc, block, arith::ConstantIndexOp::create(nb, loc, firstBlock));
    Value i = arith::AddIOp::create(
        nb, loc,
        arith::MulIOp::create(
            nb, loc, local,
            arith::ConstantIndexOp::create(nb, loc, kOpKernelBlockSize)),
        lane);
    if (n % kOpKernelBlockSize == 0) {
      emit.emitElement(segmentArgs(spec, args, s), i);
      return;
    }
    Value inRange =
        arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult, i,
                              arith::ConstantIndexOp::create(nb, loc, n));
    auto guard = scf::IfOp::create(nb, loc, inRange, /*withElse=*/false);
    OpBuilder::InsertionGuard g(nb);
    nb.setInsertionPointToStart(guard.thenBlock());
    emit.emitElement(segmentArgs(spec, args, s), i);
  };
  if (s + 1 == spec.sizes.size()) {
    body(b);
    return;
  }
  Value here = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ult, block,
      arith::ConstantIndexOp::create(b, loc, firstBlock + blocks));
  auto branch = scf::IfOp::create(b, loc, here, /*withElse=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(branch.thenBlock());
  body(b);
  b.setInsertionPointToStart(branch.elseBlock());
  emitSegmentChain(b, loc, spec, emit, args, block, lane, s + 1,
                   firstBlock + blocks);
}

gpu::GPUFuncOp mlir::snn::createOpGPUKernelFunc(OpBuilder &b, Location loc,
                                                StringRef name,
                                                const OpKernelSpec &spec) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Type> shared;
  if (isBatchNorm(spec))
    if (MemRefType type = getBatchNormSharedType(spec, ctx))
      shared.push_back(type);
  if (isLossKernel(spec))
    shared.push_back(getLossScratchType(spec, ctx));
  if (spec.kind == OpKernelKind::BiasGrad)
    shared.push_back(getBiasGradScratchType(ctx));
  auto kernel = gpu::GPUFuncOp::create(
      b, loc, name, FunctionType::get(ctx, getOpKernelArgTypes(spec, ctx), {}),
      shared);
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kernel.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr(
      {static_cast<int32_t>(spec.getBlockSize()), 1, 1}));
  return kernel;
}

gpu::GPUFuncOp mlir::snn::buildOpGPUKernel(OpBuilder &b, Location loc,
                                           StringRef name,
                                           const OpKernelSpec &spec) {
  if (isEventKernel(spec.kind))
    return buildEventGPUKernel(b, loc, name, spec);
  gpu::GPUFuncOp kernel = createOpGPUKernelFunc(b, loc, name, spec);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&kernel.front());
  // The block's arguments end with the workgroup memory.
  ValueRange args = kernel.getArguments().take_front(
      kernel.getFunctionType().getNumInputs());
  ElementEmitter emit(b, loc, spec);
  emit.emitPrologue(spec.usesRunValues() ? args.back() : Value());
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value lane = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  if (isBatchNorm(spec)) {
    ArrayRef<BlockArgument> shared = kernel.getWorkgroupAttributions();
    emitBatchNormGPUKernel(b, loc, spec, args,
                           shared.empty() ? Value() : Value(shared[0]), block,
                           lane);
  } else if (isLossKernel(spec))
    emitLossGPUBlock(b, loc, spec, args, kernel.getWorkgroupAttributions()[0],
                     lane);
  else if (spec.kind == OpKernelKind::BiasGrad)
    emitBiasGradGPUBlock(b, loc, spec, args,
                         kernel.getWorkgroupAttributions()[0], block, lane);
  else if (!spec.sizes.empty())
    emitSegmentChain(b, loc, spec, emit, args, block, lane, 0, 0);
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

/// Work worth a CPU thread of its own (tens of microseconds): elements of
/// an elementwise kernel; a pooling element costs its window's taps, a
/// spike word its 32 bits, a batch norm item the elements it reads.
static int64_t getHostGrain(const OpKernelSpec &spec) {
  constexpr int64_t kElementsPerThread = 16384;
  if (isBatchNorm(spec))
    return llvm::divideCeilSigned(kElementsPerThread,
                                  getBatchNormHostItemWork(spec));
  if (isSpikeBitsKernel(spec))
    return kElementsPerThread / 32;
  if (spec.kind == OpKernelKind::Pool || spec.kind == OpKernelKind::PoolBwd)
    return kElementsPerThread / std::max<int64_t>(1, spec.pool.kh * spec.pool.kw);
  if (spec.kind == OpKernelKind::Col2im)
    return kElementsPerThread /
           std::max<int64_t>(1, spec.columns.kh * spec.columns.kw);
  if (isLayerKernel(spec.kind) && getLayerHostRowLength(spec) > 1)
    return llvm::divideCeilSigned(kElementsPerThread,
                                  getLayerHostRowLength(spec));
  if (spec.kind == OpKernelKind::BiasGrad)
    return llvm::divideCeilSigned(
        kElementsPerThread * getBiasGradHostItems(spec),
        std::max<int64_t>(1, spec.channelGeometry.getElements()));
  return kElementsPerThread;
}

func::FuncOp mlir::snn::buildOpHostKernel(OpBuilder &b, Location loc,
                                          StringRef name,
                                          const OpKernelSpec &spec) {
  if (isEventKernel(spec.kind))
    return buildEventHostKernel(b, loc, name, spec);
  MLIRContext *ctx = b.getContext();
  // Work items: batch norm's own (getBatchNormHostItems), one for a loss,
  // else the elements of the segments one after the other.
  bool biasGrad = spec.kind == OpKernelKind::BiasGrad;
  // The layer kernels' rows (LayerKernels.h).
  int64_t hostRows =
      isLayerKernel(spec.kind) && !biasGrad ? getLayerHostRowLength(spec) : 1;
  int64_t items = isBatchNorm(spec)      ? getBatchNormHostItems(spec)
                  : isLossKernel(spec) ? 1
                  : biasGrad           ? getBiasGradHostItems(spec)
                  : hostRows > 1       ? spec.sizes.front() / hostRows
                                       : 0;
  if (!isBatchNorm(spec) && !isLossKernel(spec) && !biasGrad && hostRows == 1)
    for (int64_t n : spec.sizes)
      items += n;
  func::FuncOp fn = createRangedHostFunc(
      b, loc, name, getOpKernelArgTypes(spec, ctx, /*host=*/true), items,
      getHostGrain(spec));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&fn.front());
  ValueRange args = getHostTensorArgs(fn);
  ElementEmitter emit(b, loc, spec);
  emit.emitPrologue(spec.usesRunValues() ? args.back() : Value());
  if (isBatchNorm(spec)) {
    OpBuilder::InsertionGuard inner(b);
    scf::ForOp loop =
        createHostRangeLoop(b, loc, fn, 0, getBatchNormHostItems(spec));
    emitBatchNormHostItem(b, loc, spec, args, loop.getInductionVar());
  } else if (biasGrad) {
    OpBuilder::InsertionGuard inner(b);
    scf::ForOp loop = createHostRangeLoop(b, loc, fn, 0, items);
    emitBiasGradHostItem(b, loc, spec, args, loop.getInductionVar());
  } else if (hostRows > 1) {
    OpBuilder::InsertionGuard inner(b);
    scf::ForOp loop = createHostRangeLoop(b, loc, fn, 0, items);
    emitLayerHostRow(b, loc, spec, args, loop.getInductionVar());
  } else if (isLossKernel(spec)) {
    // The whole batch is one work item (its reduction has a fixed order).
    OpBuilder::InsertionGuard inner(b);
    createHostRangeLoop(b, loc, fn, 0, 1);
    emitLossHost(b, loc, spec, args);
  } else {
    int64_t offset = 0;
    for (auto [s, n] : llvm::enumerate(spec.sizes)) {
      OpBuilder::InsertionGuard inner(b);
      scf::ForOp loop = createHostRangeLoop(b, loc, fn, offset, n);
      emit.emitElement(segmentArgs(spec, args, s), loop.getInductionVar());
      offset += n;
    }
  }
  func::ReturnOp::create(b, loc);
  return fn;
}
