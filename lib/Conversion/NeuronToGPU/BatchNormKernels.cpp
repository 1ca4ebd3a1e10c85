//===- BatchNormKernels.cpp - generated batch norm kernels ----------------===//
//
// The code of the batch norm kernels (BatchNormKernels.h), with the
// semantics of docs/artifact-format.md's `batch_norm` and `batch_norm_bwd`:
// training statistics over M*S, the biased variance normalizes, the
// unbiased one enters the running variance, r = (1 - m) r + m stat. Sums
// are f64 within a part, stored as f32 (high, low) pairs (48 bits) and
// combined in f64. The variance uses shifted sums, sum(x - K) and
// sum((x - K)^2) with K the channel's first element: one pass over x, and
// no cancellation when the mean is large against the spread. The
// per-channel constants are computed in f64 and rounded once; the training
// normalize is x * scale + shift in f32, the gradient gx = A gy + B xhat +
// D in f64 (A, B, D per channel), rounded once.
//
// Channels-last maps (S = 1, x is [rows, C]) have their own statistics
// blocks: a block covers a part's rows and all channels, consecutive
// threads on consecutive channels (4 at a time when C % 4 == 0), so reads
// are coalesced; the threads of a channel are then added in a fixed order,
// and the scratch layout (and apply) is the one of the other maps. Their
// many parts are added by a finish block per channel (a fixed tree), where
// the other maps' finish runs a thread per channel over its few parts.
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/BatchNormKernels.h"
#include "snn/Conversion/NeuronToGPU/KernelArith.h"
#include "BlockSum.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::snn;

/// Elements a statistics block sums (the runtime's former kernels' split):
/// about 8K per block and at least ~2048 blocks when the channels allow.
static constexpr int64_t kElementsPerPart = 8192;
static constexpr int64_t kMinStatsBlocks = 2048;
/// Channels-last statistics: about 2K elements per block at least (small
/// maps still fill a GPU) and at most 512 parts (a finish block per channel
/// adds them, 2 per thread). Measured on an H100, VGG-11 channels-last step:
/// 64 parts 2.92 ms, 128 2.70, 512 2.66, 1024 2.78.
static constexpr int64_t kChannelsLastElementsPerPart = 2048;
static constexpr int64_t kMaxChannelsLastParts = 512;
/// Rows a channels-last statistics thread loads before adding them.
static constexpr int64_t kChannelsLastUnroll = 4;

/// Channels a thread of a channels-last statistics block reads at once.
static int64_t getChannelWidth(const BatchNormGeometry &g) {
  return g.channels % 4 == 0 ? 4 : 1;
}

/// Whether the statistics blocks cover all channels of a part's rows: the
/// channels are contiguous and one block's threads span them.
static bool isChannelsLast(const BatchNormGeometry &g) {
  return g.spatial == 1 &&
         g.channels / getChannelWidth(g) <= kOpKernelBlockSize;
}

/// Parts up to which one GPU thread adds a channel's parts in the finish
/// kernel. A neuron backward that sums the batch norm's backward writes a
/// part per sample (64 for VGG-11 at batch 64), which one thread adds in
/// a chain of dependent loads (+20-30 us per layer on an H100): more parts
/// are added by a block per channel, as channels-last maps' are (so are
/// the parts of a statistics kernel over few channels of large maps: it
/// makes up to 2048 / C parts).
static constexpr int64_t kMaxPartsPerFinishThread = 32;

/// Whether the GPU finish kernel runs a block per channel.
static bool hasFinishBlocks(const BatchNormGeometry &g) {
  return isChannelsLast(g) || g.parts > kMaxPartsPerFinishThread;
}

SmallVector<OpKernelSpec, 3>
mlir::snn::makeBatchNormKernelSpecs(ArrayRef<int64_t> input,
                                    int64_t spatialRank, bool training,
                                    bool backward, double eps, double momentum,
                                    bool accumulate) {
  OpKernelSpec spec;
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
  int64_t want =
      isChannelsLast(g)
          ? std::min(llvm::divideCeilSigned(g.getElements(),
                                            kChannelsLastElementsPerPart),
                     kMaxChannelsLastParts)
          : std::min(llvm::divideCeilSigned(g.getCount(), kElementsPerPart),
                     llvm::divideCeilSigned(kMinStatsBlocks, g.channels));
  want = std::max<int64_t>(1, want);
  g.rowsPerPart = llvm::divideCeilSigned(g.rows, want);
  g.parts = llvm::divideCeilSigned(g.rows, g.rowsPerPart);
  g.width = g.spatial % 4 == 0 ? 4 : 1;
  spec.sizes = {g.getElements()};

  SmallVector<OpKernelSpec, 3> specs;
  auto add = [&](OpKernelKind kind) {
    specs.push_back(spec);
    specs.back().kind = kind;
  };
  if (backward) {
    add(OpKernelKind::BatchNormBwdStats);
    add(OpKernelKind::BatchNormBwdFinish);
    add(OpKernelKind::BatchNormBwdApply);
  } else if (training) {
    add(OpKernelKind::BatchNormStats);
    add(OpKernelKind::BatchNormFinish);
    add(OpKernelKind::BatchNormApply);
  } else {
    add(OpKernelKind::BatchNormEval);
  }
  return specs;
}

int64_t mlir::snn::getBatchNormScratchElements(const BatchNormGeometry &g) {
  return getBatchNormTermOffset(g) + 3 * g.channels;
}

int64_t mlir::snn::getBatchNormTermOffset(const BatchNormGeometry &g) {
  return 4 * g.channels * g.parts;
}

bool mlir::snn::isBatchNorm(const OpKernelSpec &spec) {
  // Batch norm's kinds are consecutive in OpKernelKind.
  return spec.kind >= OpKernelKind::BatchNormStats &&
         spec.kind <= OpKernelKind::BatchNormBwdApply;
}

namespace {
/// What a batch norm kernel's tensor holds: one value per element of x,
/// per channel, or the shared scratch.
enum class Role { Element, Channel, Scratch };
} // namespace

static SmallVector<Role, 8> getRoles(OpKernelKind kind) {
  using R = Role;
  switch (kind) {
  case OpKernelKind::BatchNormStats:
    return {R::Element, R::Scratch};
  case OpKernelKind::BatchNormFinish:
    return {R::Element, R::Channel, R::Channel, R::Channel,
            R::Channel, R::Channel, R::Channel, R::Scratch};
  case OpKernelKind::BatchNormApply:
    return {R::Element, R::Scratch, R::Element};
  case OpKernelKind::BatchNormEval:
    return {R::Element, R::Channel, R::Channel,
            R::Channel, R::Channel, R::Element};
  case OpKernelKind::BatchNormBwdStats:
    return {R::Element, R::Element, R::Channel, R::Channel, R::Scratch};
  case OpKernelKind::BatchNormBwdFinish:
    return {R::Channel, R::Channel, R::Scratch, R::Channel, R::Channel};
  case OpKernelKind::BatchNormBwdApply:
    return {R::Element, R::Element, R::Channel,
            R::Channel, R::Scratch, R::Element};
  default:
    llvm_unreachable("not a batch norm kernel");
  }
}

unsigned mlir::snn::getBatchNormTensorCount(const OpKernelSpec &spec) {
  return getRoles(spec.kind).size();
}

int64_t mlir::snn::getBatchNormTensorSize(const OpKernelSpec &spec,
                                          unsigned tensor) {
  const BatchNormGeometry &g = spec.batchNorm;
  switch (getRoles(spec.kind)[tensor]) {
  case Role::Element:
    return g.getElements();
  case Role::Channel:
    return g.channels;
  case Role::Scratch:
    return getBatchNormScratchElements(g);
  }
  llvm_unreachable("unknown role");
}

static bool isStats(const OpKernelSpec &spec) {
  return spec.kind == OpKernelKind::BatchNormStats ||
         spec.kind == OpKernelKind::BatchNormBwdStats;
}

static bool isFinish(const OpKernelSpec &spec) {
  return spec.kind == OpKernelKind::BatchNormFinish ||
         spec.kind == OpKernelKind::BatchNormBwdFinish;
}

/// Threads of an elementwise (finish, apply, eval) kernel on the GPU.
static int64_t getThreadCount(const OpKernelSpec &spec, int64_t width) {
  const BatchNormGeometry &g = spec.batchNorm;
  return isFinish(spec) ? g.channels : g.getElements() / width;
}

int64_t mlir::snn::getBatchNormGridSize(const OpKernelSpec &spec) {
  const BatchNormGeometry &g = spec.batchNorm;
  if (isStats(spec))
    return isChannelsLast(g) ? g.parts : g.channels * g.parts;
  if (isFinish(spec) && hasFinishBlocks(g))
    return g.channels;
  return llvm::divideCeilSigned(getThreadCount(spec, g.width),
                                kOpKernelBlockSize);
}

MemRefType mlir::snn::getBatchNormSharedType(const OpKernelSpec &spec,
                                             MLIRContext *ctx) {
  const BatchNormGeometry &g = spec.batchNorm;
  if (!isStats(spec) && !(isFinish(spec) && hasFinishBlocks(g)))
    return nullptr;
  auto workgroup = gpu::AddressSpaceAttr::get(
      ctx, gpu::GPUDialect::getWorkgroupAddressSpace());
  // Two sums per thread, of each of its channels on channels-last maps
  // (their finish: of its parts).
  int64_t sums =
      2 * (isStats(spec) && isChannelsLast(g) ? getChannelWidth(g) : 1);
  return MemRefType::get({sums * kOpKernelBlockSize}, Float64Type::get(ctx),
                         MemRefLayoutAttrInterface(), workgroup);
}

namespace {
/// Emits the code of one batch norm kernel: on the GPU as block `block`,
/// thread `lane`; on the host (no shared memory) one work item, a block or
/// a thread run by one CPU thread. Index arithmetic is in i32 when x has fewer than 2^31 elements.
class BatchNormEmitter : KernelArith {
public:
  BatchNormEmitter(OpBuilder &b, Location loc, const OpKernelSpec &spec,
                   ValueRange args, bool gpu)
      : KernelArith(b, loc), spec(spec), g(spec.batchNorm), args(args),
        gpu(gpu), width(gpu ? g.width : 1),
        it(g.getElements() + getBatchNormScratchElements(g) <
                   (int64_t(1) << 31)
               ? b.getI32Type()
               : b.getI64Type()) {}

  void emitGPU(Value shared, Value block, Value lane);
  /// Work item `item` (index) of the host function: a statistics block, or
  /// a thread of the other kernels, one element at a time.
  void emitHostItem(Value item);

private:
  /// Block `block` of a statistics kernel as thread `lane` of `threads`.
  void emitStatsBlock(Value block, Value lane, int64_t threads);
  /// Block `part` of a channels-last statistics kernel (GPU only): the
  /// part's rows, all channels.
  void emitChannelsLastStatsBlock(Value part, Value lane);
  /// Writes `sum1`, `sum2` of block (channel, part) `block` to the scratch
  /// as f32 (high, low) pairs.
  void emitPartSums(Value block, Value sum1, Value sum2);
  /// The block's totals of each thread's two sums (the host: the sums).
  std::pair<Value, Value> emitBlockSums(Value first, Value second,
                                        Value lane);
  /// Thread `i` of an elementwise kernel (i below getThreadCount()).
  void emitThread(Value i);
  /// Channel c's statistics (backward: gradient terms) from the sums of
  /// its parts.
  void emitFinish(Value c, Value sumShifted, Value sumSquares);
  void emitBwdFinish(Value c, Value sumGy, Value sumGyXhat);
  /// Block `c` of a channels-last finish kernel: the block's threads add
  /// channel c's parts, a tree adds the threads (its many parts would take
  /// one thread too long), thread 0 finishes the channel.
  void emitChannelsLastFinishBlock(Value c, Value lane);
  /// Elements [i W, (i + 1) W), all of one channel.
  void emitApply(Value i);
  /// Eval on the host: channel `c`'s affine once, then its elements.
  void emitEvalChannel(Value c);
  /// The two sums of channel `c`, combined over its parts (f64).
  std::pair<Value, Value> emitCombinedSums(Value c);
  /// Channel c's two sums over parts firstPart, firstPart + step, ...
  std::pair<Value, Value> emitPartSumsFrom(Value c, Value firstPart,
                                           int64_t step);
  /// The eval affine of channel `c` in f32 from the running statistics.
  std::pair<Value, Value> emitEvalAffine(Value c);

  // Integers of type `it`, converted to index at memory accesses.
  Value cst(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, it, v);
  }
  Value toIt(Value index) {
    return arith::IndexCastUIOp::create(b, loc, it, index);
  }
  Value toIndex(Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
  }
  Value addi(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value muli(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value divi(Value x, int64_t d) {
    return d == 1 ? x : Value(arith::DivUIOp::create(b, loc, x, cst(d)));
  }
  Value remi(Value x, int64_t d) {
    return arith::RemUIOp::create(b, loc, x, cst(d));
  }
  Value at(Value memref, Value i) { return load(memref, toIndex(i)); }
  void put(Value v, Value memref, Value i) { store(v, memref, toIndex(i)); }
  Value wide(Value v) {
    return arith::ExtFOp::create(b, loc, b.getF64Type(), v);
  }
  Value narrow(Value v) {
    return arith::TruncFOp::create(b, loc, b.getF32Type(), v);
  }
  /// `width` consecutive f32 elements of `memref` from element `i` (a
  /// multiple of width): one 16-byte access on the GPU when width is 4.
  SmallVector<Value, 4> loadLanes(Value memref, Value i);
  void storeLanes(ArrayRef<Value> lanes, Value memref, Value i);
  /// The channel of element `e`.
  Value channelOf(Value e) {
    return g.channels == 1 ? cst(0) : remi(divi(e, g.spatial), g.channels);
  }
  /// Runs `body` where `cond` holds.
  void when(Value cond, function_ref<void()> body) {
    auto guard = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
    OpBuilder::InsertionGuard ig(b);
    b.setInsertionPointToStart(guard.thenBlock());
    body();
  }
  /// Stores v into a per-channel gradient, added to it with accumulate.
  void storeGrad(Value v, Value memref, Value c) {
    if (spec.accumulate)
      v = add(at(memref, c), v);
    put(v, memref, c);
  }
  Value scratch() const {
    switch (spec.kind) {
    case OpKernelKind::BatchNormStats:
    case OpKernelKind::BatchNormApply:
      return args[1];
    case OpKernelKind::BatchNormFinish:
      return args[7];
    case OpKernelKind::BatchNormBwdStats:
      return args[4];
    case OpKernelKind::BatchNormBwdFinish:
      return args[2];
    case OpKernelKind::BatchNormBwdApply:
      return args[4];
    default:
      return Value();
    }
  }
  /// Element of the scratch holding term `k` of channel `c` (after the
  /// partial sums).
  Value termAt(int64_t k, Value c) {
    return addi(cst(getBatchNormTermOffset(g) + k * g.channels), c);
  }

  const OpKernelSpec &spec;
  const BatchNormGeometry &g;
  ValueRange args;
  bool gpu;
  int64_t width;
  Type it;
  Value shared;
};
} // namespace

SmallVector<Value, 4> BatchNormEmitter::loadLanes(Value memref, Value i) {
  if (width == 1)
    return {at(memref, i)};
  auto type = VectorType::get({width}, b.getF32Type());
  Value v = vector::LoadOp::create(b, loc, type, memref, toIndex(i),
                                   /*nontemporal=*/false,
                                   llvm::MaybeAlign(4 * width));
  SmallVector<Value, 4> lanes;
  for (int64_t e = 0; e < width; ++e)
    lanes.push_back(vector::ExtractOp::create(b, loc, v, e));
  return lanes;
}

void BatchNormEmitter::storeLanes(ArrayRef<Value> lanes, Value memref,
                                  Value i) {
  if (width == 1)
    return put(lanes[0], memref, i);
  auto type = VectorType::get({width}, b.getF32Type());
  Value v = vector::FromElementsOp::create(b, loc, type, lanes);
  vector::StoreOp::create(b, loc, v, memref, toIndex(i),
                          /*nontemporal=*/false, llvm::MaybeAlign(4 * width));
}

void BatchNormEmitter::emitStatsBlock(Value block, Value lane,
                                      int64_t threads) {
  bool forward = spec.kind == OpKernelKind::BatchNormStats;
  Value c = divi(block, g.parts);
  Value part = remi(block, g.parts);
  Value firstRow = muli(part, cst(g.rowsPerPart));
  Value rowsLeft = arith::SubIOp::create(b, loc, cst(g.rows), firstRow);
  Value rows = arith::MinUIOp::create(b, loc, rowsLeft, cst(g.rowsPerPart));
  int64_t packsPerRow = g.spatial / width;
  Value packs = toIndex(muli(rows, cst(packsPerRow)));
  Value shift, mean, invstd;
  if (forward) {
    shift = wide(at(args[0], muli(c, cst(g.spatial))));
  } else {
    mean = wide(at(args[2], c));
    invstd = wide(at(args[3], c));
  }
  Value zero = f64(0.0);
  auto loop = scf::ForOp::create(
      b, loc, toIndex(lane), packs,
      arith::ConstantIndexOp::create(b, loc, threads), ValueRange{zero, zero},
      [&](OpBuilder &, Location, Value j, ValueRange sums) {
        // Pack j of the part: row firstRow + j / packsPerRow, elements
        // from (j % packsPerRow) W of x[row, c, :].
        Value jj = toIt(j);
        Value row = addi(firstRow, divi(jj, packsPerRow));
        Value inRow = muli(remi(jj, packsPerRow), cst(width));
        Value plane = addi(muli(row, cst(g.channels)), c);
        Value e = addi(muli(plane, cst(g.spatial)), inRow);
        Value s1 = sums[0], s2 = sums[1];
        if (forward) {
          for (Value v : loadLanes(args[0], e)) {
            Value d = sub(wide(v), shift);
            s1 = add(s1, d);
            s2 = add(s2, mul(d, d));
          }
        } else {
          SmallVector<Value, 4> gys = loadLanes(args[0], e);
          SmallVector<Value, 4> xs = loadLanes(args[1], e);
          for (int64_t l = 0; l < width; ++l) {
            Value gy = wide(gys[l]);
            Value xhat = mul(sub(wide(xs[l]), mean), invstd);
            s1 = add(s1, gy);
            s2 = add(s2, mul(gy, xhat));
          }
        }
        scf::YieldOp::create(b, loc, ValueRange{s1, s2});
      });
  auto [total1, total2] =
      emitBlockSums(loop.getResult(0), loop.getResult(1), lane);
  auto write = [&] { emitPartSums(block, total1, total2); };
  if (!gpu)
    return write();
  when(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, cst(0)),
       write);
}

void BatchNormEmitter::emitPartSums(Value block, Value sum1, Value sum2) {
  Value base = muli(block, cst(4));
  int64_t k = 0;
  for (Value sum : {sum1, sum2}) {
    Value high = narrow(sum);
    Value low = narrow(sub(sum, wide(high)));
    put(high, scratch(), addi(base, cst(k++)));
    put(low, scratch(), addi(base, cst(k++)));
  }
}

void BatchNormEmitter::emitChannelsLastStatsBlock(Value part, Value lane) {
  bool forward = spec.kind == OpKernelKind::BatchNormStats;
  // Thread `lane` takes channels [group W, (group + 1) W) of rows slot,
  // slot + slots, ... of the part: a warp reads consecutive channels.
  width = getChannelWidth(g);
  int64_t threads = kOpKernelBlockSize, groups = g.channels / width;
  int64_t slots = threads / groups;
  Value group = remi(lane, groups);
  Value slot = divi(lane, groups);
  Value c0 = muli(group, cst(width));
  Value firstRow = muli(part, cst(g.rowsPerPart));
  Value rowsLeft = arith::SubIOp::create(b, loc, cst(g.rows), firstRow);
  Value rows = arith::MinUIOp::create(b, loc, rowsLeft, cst(g.rowsPerPart));
  // Threads past slots * groups have an empty loop.
  Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       lane, cst(slots * groups));
  Value end = arith::SelectOp::create(b, loc, active, rows, cst(0));
  // Per channel: the shift K (forward), mean and invstd (backward).
  SmallVector<Value, 4> shift, mean, invstd;
  for (int64_t l = 0; l < width; ++l) {
    Value c = addi(c0, cst(l));
    if (forward) {
      shift.push_back(wide(at(args[0], c)));
    } else {
      mean.push_back(wide(at(args[2], c)));
      invstd.push_back(wide(at(args[3], c)));
    }
  }
  // Sums: the first of each channel, then the second of each. A thread
  // loads kChannelsLastUnroll rows before it adds any (enough loads in
  // flight to stream a few parts per SM from memory); rows past the part's
  // end load the thread's first row and add +0.0, which leaves every sum
  // as the row-by-row loop in row order would have it.
  SmallVector<Value, 8> zeros(2 * width, f64(0.0));
  Value zero = f64(0.0);
  auto loop = scf::ForOp::create(
      b, loc, toIndex(slot), toIndex(end),
      arith::ConstantIndexOp::create(b, loc, slots * kChannelsLastUnroll),
      zeros, [&](OpBuilder &, Location, Value j, ValueRange sums) {
        SmallVector<Value, kChannelsLastUnroll> valid;
        SmallVector<SmallVector<Value, 4>, kChannelsLastUnroll> first, second;
        for (int64_t u = 0; u < kChannelsLastUnroll; ++u) {
          Value r = addi(toIt(j), cst(u * slots));
          valid.push_back(arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, r, end));
          Value row = addi(firstRow, arith::SelectOp::create(
                                         b, loc, valid.back(), r, slot));
          Value e = addi(muli(row, cst(g.channels)), c0);
          first.push_back(loadLanes(args[0], e));
          if (!forward)
            second.push_back(loadLanes(args[1], e));
        }
        SmallVector<Value, 8> next(sums);
        for (int64_t u = 0; u < kChannelsLastUnroll; ++u) {
          for (int64_t l = 0; l < width; ++l) {
            Value a, c;
            if (forward) {
              Value d = sub(wide(first[u][l]), shift[l]);
              a = d;
              c = mul(d, d);
            } else {
              Value gy = wide(first[u][l]);
              Value xhat =
                  mul(sub(wide(second[u][l]), mean[l]), invstd[l]);
              a = gy;
              c = mul(gy, xhat);
            }
            next[l] = add(next[l], arith::SelectOp::create(
                                       b, loc, valid[u], a, zero));
            next[width + l] = add(next[width + l], arith::SelectOp::create(
                                                       b, loc, valid[u], c,
                                                       zero));
          }
        }
        scf::YieldOp::create(b, loc, next);
      });
  // Sum k of thread t at shared[k threads + t]; the threads of a group
  // are added slot by slot (a fixed order) by the group's first thread.
  for (int64_t k = 0; k < 2 * width; ++k)
    store(loop.getResult(k), shared, toIndex(addi(cst(k * threads), lane)));
  gpu::BarrierOp::create(b, loc);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                      lane, cst(groups));
  when(first, [&] {
    SmallVector<Value, 8> totals;
    for (int64_t k = 0; k < 2 * width; ++k) {
      auto sum = scf::ForOp::create(
          b, loc, arith::ConstantIndexOp::create(b, loc, 0),
          arith::ConstantIndexOp::create(b, loc, slots),
          arith::ConstantIndexOp::create(b, loc, 1), ValueRange{f64(0.0)},
          [&](OpBuilder &, Location, Value s, ValueRange acc) {
            Value t = addi(muli(toIt(s), cst(groups)), lane);
            Value v = load(shared, toIndex(addi(cst(k * threads), t)));
            scf::YieldOp::create(b, loc, ValueRange{add(acc[0], v)});
          });
      totals.push_back(sum.getResult(0));
    }
    for (int64_t l = 0; l < width; ++l) {
      Value c = addi(c0, cst(l));
      Value block = addi(muli(c, cst(g.parts)), part);
      emitPartSums(block, totals[l], totals[width + l]);
    }
  });
}

std::pair<Value, Value> BatchNormEmitter::emitBlockSums(Value first,
                                                        Value second,
                                                        Value lane) {
  if (!gpu)
    return {first, second};
  SmallVector<Value> sums = emitBlockSum(b, loc, shared, toIndex(lane),
                                         kOpKernelBlockSize, {first, second});
  return {sums[0], sums[1]};
}

std::pair<Value, Value> BatchNormEmitter::emitCombinedSums(Value c) {
  return emitPartSumsFrom(c, cst(0), 1);
}

std::pair<Value, Value>
BatchNormEmitter::emitPartSumsFrom(Value c, Value firstPart, int64_t step) {
  Value zero = f64(0.0);
  Value base = muli(c, cst(4 * g.parts));
  Value first = toIndex(addi(base, muli(firstPart, cst(4))));
  Value last = toIndex(addi(base, cst(4 * g.parts)));
  auto loop = scf::ForOp::create(
      b, loc, first, last, arith::ConstantIndexOp::create(b, loc, 4 * step),
      ValueRange{zero, zero},
      [&](OpBuilder &, Location, Value k, ValueRange sums) {
        SmallVector<Value, 2> next;
        for (int64_t s = 0; s < 2; ++s) {
          Value i = toIt(k);
          Value high = wide(at(scratch(), addi(i, cst(2 * s))));
          Value low = wide(at(scratch(), addi(i, cst(2 * s + 1))));
          next.push_back(add(sums[s], add(high, low)));
        }
        scf::YieldOp::create(b, loc, next);
      });
  return {loop.getResult(0), loop.getResult(1)};
}

void BatchNormEmitter::emitFinish(Value c, Value sumShifted,
                                  Value sumSquares) {
  Value x = args[0], gamma = args[1], beta = args[2], runMean = args[3],
        runVar = args[4], savedMean = args[5], savedInvstd = args[6];
  double count = double(g.getCount());
  Value n = f64(count);
  Value shift = wide(at(x, muli(c, cst(g.spatial))));
  Value offset = div(sumShifted, n);
  Value batchMean = add(shift, offset);
  Value meanSquare = div(sumSquares, n);
  Value offsetSquare = mul(offset, offset);
  // Rounding can make the difference slightly negative for constant input.
  Value var = arith::MaximumFOp::create(
      b, loc, sub(meanSquare, offsetSquare), f64(0.0));
  Value root = math::SqrtOp::create(b, loc, add(var, f64(g.eps)));
  Value inv = div(f64(1.0), root);
  Value unbiased = count > 1 ? mul(var, f64(count / (count - 1))) : var;
  Value keep = f64(1.0 - g.momentum), m = f64(g.momentum);
  auto update = [&](Value running, Value stat) {
    Value old = wide(at(running, c));
    Value decayed = mul(keep, old);
    Value next = add(decayed, mul(m, stat));
    put(narrow(next), running, c);
  };
  update(runMean, batchMean);
  update(runVar, unbiased);
  put(narrow(batchMean), savedMean, c);
  put(narrow(inv), savedInvstd, c);
  Value gammaC = wide(at(gamma, c));
  Value betaC = wide(at(beta, c));
  Value scale = mul(gammaC, inv);
  Value shifted = mul(mul(batchMean, gammaC), inv);
  put(narrow(scale), scratch(), termAt(0, c));
  put(narrow(sub(betaC, shifted)), scratch(), termAt(1, c));
}

void BatchNormEmitter::emitBwdFinish(Value c, Value sumGy,
                                     Value sumGyXhat) {
  Value gamma = args[0], invstd = args[1], ggamma = args[3], gbeta = args[4];
  storeGrad(narrow(sumGyXhat), ggamma, c);
  storeGrad(narrow(sumGy), gbeta, c);
  // gx = gamma invstd / n (n gy - sum gy - xhat sum(gy xhat))
  //    = A gy + B xhat + D.
  Value n = f64(double(g.getCount()));
  Value a = mul(wide(at(gamma, c)), wide(at(invstd, c)));
  Value perN = div(a, n);
  Value bTerm = arith::NegFOp::create(b, loc, mul(perN, sumGyXhat));
  Value dTerm = arith::NegFOp::create(b, loc, mul(perN, sumGy));
  put(narrow(a), scratch(), termAt(0, c));
  put(narrow(bTerm), scratch(), termAt(1, c));
  put(narrow(dTerm), scratch(), termAt(2, c));
}

std::pair<Value, Value> BatchNormEmitter::emitEvalAffine(Value c) {
  Value var = at(args[4], c);
  Value root = math::SqrtOp::create(b, loc, add(var, f32(g.eps)));
  Value scale = div(at(args[1], c), root);
  Value shifted = mul(at(args[3], c), scale);
  Value shift = sub(at(args[2], c), shifted);
  return {scale, shift};
}

void BatchNormEmitter::emitApply(Value i) {
  Value e = muli(i, cst(width));
  Value c = channelOf(e);
  if (spec.kind == OpKernelKind::BatchNormBwdApply) {
    Value gy = args[0], x = args[1], gx = args[5];
    Value mean = wide(at(args[2], c));
    Value invstd = wide(at(args[3], c));
    Value a = wide(at(scratch(), termAt(0, c)));
    Value bTerm = wide(at(scratch(), termAt(1, c)));
    Value dTerm = wide(at(scratch(), termAt(2, c)));
    SmallVector<Value, 4> gys = loadLanes(gy, e), xs = loadLanes(x, e);
    SmallVector<Value, 4> old;
    if (spec.accumulate)
      old = loadLanes(gx, e);
    SmallVector<Value, 4> out;
    for (int64_t l = 0; l < width; ++l) {
      Value xhat = mul(sub(wide(xs[l]), mean), invstd);
      Value v = add(add(mul(a, wide(gys[l])), mul(bTerm, xhat)), dTerm);
      out.push_back(spec.accumulate ? add(old[l], narrow(v)) : narrow(v));
    }
    return storeLanes(out, gx, e);
  }
  Value scale, shift;
  if (spec.kind == OpKernelKind::BatchNormEval) {
    std::tie(scale, shift) = emitEvalAffine(c);
  } else {
    scale = at(scratch(), termAt(0, c));
    shift = at(scratch(), termAt(1, c));
  }
  Value y = spec.kind == OpKernelKind::BatchNormEval ? args[5] : args[2];
  SmallVector<Value, 4> out;
  for (Value v : loadLanes(args[0], e)) {
    Value scaled = mul(v, scale);
    out.push_back(add(scaled, shift));
  }
  storeLanes(out, y, e);
}

void BatchNormEmitter::emitEvalChannel(Value c) {
  auto [scale, shift] = emitEvalAffine(c);
  // x[m, c, s] = x[(m C + c) S + s], m below rows, s below S.
  scf::ForOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, 0),
      arith::ConstantIndexOp::create(b, loc, g.rows * g.spatial),
      arith::ConstantIndexOp::create(b, loc, 1), ValueRange{},
      [&](OpBuilder &, Location, Value j, ValueRange) {
        Value jj = toIt(j);
        Value plane = addi(muli(divi(jj, g.spatial), cst(g.channels)), c);
        Value e = addi(muli(plane, cst(g.spatial)), remi(jj, g.spatial));
        put(add(mul(at(args[0], e), scale), shift), args[5], e);
        scf::YieldOp::create(b, loc);
      });
}

void BatchNormEmitter::emitThread(Value i) {
  if (!isFinish(spec))
    return emitApply(i);
  auto [first, second] = emitCombinedSums(i);
  if (spec.kind == OpKernelKind::BatchNormFinish)
    return emitFinish(i, first, second);
  emitBwdFinish(i, first, second);
}

void BatchNormEmitter::emitChannelsLastFinishBlock(Value c, Value lane) {
  auto [part1, part2] = emitPartSumsFrom(c, lane, kOpKernelBlockSize);
  auto [sum1, sum2] = emitBlockSums(part1, part2, lane);
  when(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, cst(0)),
       [&] {
         if (spec.kind == OpKernelKind::BatchNormFinish)
           return emitFinish(c, sum1, sum2);
         emitBwdFinish(c, sum1, sum2);
       });
}

void BatchNormEmitter::emitGPU(Value sharedMemory, Value block, Value lane) {
  shared = sharedMemory;
  Value blockIt = toIt(block), laneIt = toIt(lane);
  if (isStats(spec) && isChannelsLast(g))
    return emitChannelsLastStatsBlock(blockIt, laneIt);
  if (isFinish(spec) && hasFinishBlocks(g))
    return emitChannelsLastFinishBlock(blockIt, laneIt);
  if (isStats(spec))
    return emitStatsBlock(blockIt, laneIt, kOpKernelBlockSize);
  Value i = addi(muli(blockIt, cst(kOpKernelBlockSize)), laneIt);
  int64_t threads = getThreadCount(spec, width);
  if (threads % kOpKernelBlockSize == 0)
    return emitThread(i);
  when(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i,
                             cst(threads)),
       [&] { emitThread(i); });
}

void BatchNormEmitter::emitHostItem(Value item) {
  if (isStats(spec))
    return emitStatsBlock(toIt(item), cst(0), 1);
  if (spec.kind == OpKernelKind::BatchNormEval)
    return emitEvalChannel(toIt(item));
  emitThread(toIt(item));
}

void mlir::snn::emitBatchNormGPUKernel(OpBuilder &b, Location loc,
                                       const OpKernelSpec &spec,
                                       ValueRange args, Value shared,
                                       Value block, Value lane) {
  BatchNormEmitter(b, loc, spec, args, /*gpu=*/true)
      .emitGPU(shared, block, lane);
}

int64_t mlir::snn::getBatchNormHostItems(const OpKernelSpec &spec) {
  const BatchNormGeometry &g = spec.batchNorm;
  if (isStats(spec))
    return g.channels * g.parts;
  return spec.kind == OpKernelKind::BatchNormEval ? g.channels
                                                  : getThreadCount(spec, 1);
}

int64_t mlir::snn::getBatchNormHostItemWork(const OpKernelSpec &spec) {
  const BatchNormGeometry &g = spec.batchNorm;
  if (isStats(spec))
    return g.rowsPerPart * g.spatial;
  if (spec.kind == OpKernelKind::BatchNormEval)
    return g.rows * g.spatial;
  // A finish item reads its channel's partial sums.
  return isFinish(spec) ? 4 * g.parts : 1;
}

void mlir::snn::emitBatchNormHostItem(OpBuilder &b, Location loc,
                                      const OpKernelSpec &spec,
                                      ValueRange args, Value item) {
  BatchNormEmitter(b, loc, spec, args, /*gpu=*/false).emitHostItem(item);
}
