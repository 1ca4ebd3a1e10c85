//===- EventLinearTiles.cpp - event_linear over row lists, tiles shared ---===//
//
// EventLinearTiles.h. Why tiles: the per-row form reads, for every event,
// N weights from L2 (the transposed weight of the SHD net's hidden layer is
// 8.7 MB, L2-resident, but 12800 rows x 15 events x 5.9 KB is 1.1 GB of L2
// reads at 1% activity); a block that holds K x C weights in shared memory
// reads each event's C weights at shared-memory bandwidth instead.
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/EventLinearTiles.h"
#include "snn/Conversion/NeuronToGPU/HostKernelRange.h"
#include "snn/Conversion/NeuronToGPU/SparseKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::snn;

/// 16-byte pieces of the weight a GPU thread loads at once (loads in
/// flight before the stores to shared memory).
static constexpr int64_t kTileLoadsAtOnce = 8;

/// The slot of chunk `chunk` (4 floats: outputs 4 chunk .. + 3) of tile
/// row j, its chunks permuted by j / 4: chunk ^ (j / 4 mod C / 4). A
/// warp's stores of 8 consecutive quads of rows then hit 8 different
/// chunks (banks), and a row's chunks stay whole 16-byte vectors.
static Value tileSlot(OpBuilder &b, Location loc, Value j, Value chunk,
                      int64_t columns) {
  auto c = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value spin = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, j, c(2)), c(columns / 4 - 1));
  Value swizzled = arith::XOrIOp::create(b, loc, chunk, spin);
  return arith::AddIOp::create(b, loc,
                               arith::MulIOp::create(b, loc, j, c(columns)),
                               arith::MulIOp::create(b, loc, swizzled, c(4)));
}
/// List slots whose weight loads a GPU thread issues together.
static constexpr int64_t kSlotBatch = 8;

int64_t mlir::snn::getSharedMemoryLimit(llvm::ArrayRef<std::string> chips) {
  int64_t limit = 0;
  bool first = true;
  for (const std::string &chip : chips) {
    llvm::StringRef name(chip);
    int version = 0;
    if (!name.consume_front("sm_") ||
        name.take_while(llvm::isDigit).getAsInteger(10, version))
      version = 0;
    int64_t bytes = version >= 90 && version < 120     ? 227 * 1024
                    : version == 80 || version == 87   ? 163 * 1024
                    : version >= 86                    ? 99 * 1024
                    : version == 70 || version == 72   ? 96 * 1024
                    : version == 75                    ? 64 * 1024
                                                       : 48 * 1024;
    limit = first ? bytes : std::min(limit, bytes);
    first = false;
  }
  return limit;
}

int64_t mlir::snn::getEventTileColumns(int64_t inFeatures, int64_t outFeatures,
                                       int64_t sharedLimit) {
  if (outFeatures % 4 != 0 || inFeatures % 4 != 0 || inFeatures <= 0)
    return 0;
  for (int64_t columns : {32, 16, 8})
    if ((inFeatures + 1) * columns * 4 <= sharedLimit)
      return columns;
  return 0;
}

bool mlir::snn::runsAsEventTiles(int64_t inFeatures, int64_t outFeatures,
                                 int64_t sharedLimit) {
  constexpr int64_t kMinTileOutputs = 256;
  return sharedLimit > 0 && outFeatures >= kMinTileOutputs &&
         getEventTileColumns(inFeatures, outFeatures, sharedLimit) != 0;
}

int64_t mlir::snn::getEventTileSharedBytes(const OpKernelSpec &spec) {
  // K rows of the weight, then a row of zeros that slots past a list's
  // end read.
  return (spec.inFeatures + 1) * spec.tileColumns * 4;
}

namespace {
/// How a launch splits the work: `tiles` tiles of C output features, each
/// in `chunks` blocks of `rowsPerChunk` rows; in a block, groups of C / 4
/// threads take a row at a time (`rowsAtOnce` rows in flight).
struct TileGeometry {
  int64_t columns, groupThreads, rowsAtOnce, tiles, chunks, rowsPerChunk;
};
} // namespace

static TileGeometry getTileGeometry(const OpKernelSpec &spec) {
  TileGeometry g;
  g.columns = spec.tileColumns;
  g.groupThreads = g.columns / 4;
  g.rowsAtOnce = kEventTileThreads / g.groupThreads;
  g.tiles = getEventTileCount(spec);
  // Every block loads its tile once, so fewer, longer blocks load less;
  // but a last partial wave of blocks leaves SMs idle. On a GPU of 132 SMs
  // of 228 KiB shared memory each (1 KiB of it reserved per block): the
  // fewest chunks that fill at least one wave and keep 90% of the waves'
  // slots busy, else the best of up to 32.
  constexpr int64_t kSMs = 132, kSharedPerSM = 228 * 1024;
  int64_t perSM = std::clamp<int64_t>(
      kSharedPerSM / (getEventTileSharedBytes(spec) + 1024), 1,
      2048 / kEventTileThreads);
  int64_t slots = kSMs * perSM;
  int64_t most = std::max<int64_t>(
      1, llvm::divideCeilSigned(spec.rows, g.rowsAtOnce));
  double best = 0;
  g.chunks = 1;
  for (int64_t c = 1; c <= std::min<int64_t>(32, most); ++c) {
    int64_t blocks = g.tiles * c;
    double busy = double(blocks) /
                  double(llvm::divideCeilSigned(blocks, slots) * slots);
    if (busy > best + 1e-9) {
      best = busy;
      g.chunks = c;
    }
    if (blocks >= slots && busy >= 0.9) {
      g.chunks = c;
      break;
    }
  }
  g.rowsPerChunk = llvm::divideCeilSigned(spec.rows, g.chunks);
  g.chunks = llvm::divideCeilSigned(spec.rows, g.rowsPerChunk);
  return g;
}

int64_t mlir::snn::getEventTileCount(const OpKernelSpec &spec) {
  return llvm::divideCeilSigned(spec.outFeatures, spec.tileColumns);
}

int64_t mlir::snn::getEventTileGridSize(const OpKernelSpec &spec) {
  TileGeometry g = getTileGeometry(spec);
  return g.tiles * g.chunks;
}

namespace {
/// The arguments of event_linear_tiles (OpKernelSpec::getTensorsPerSegment).
struct TileArgs {
  Value columns, values, w, bias, decision, y;

  TileArgs(const OpKernelSpec &spec, ValueRange args) {
    unsigned i = 0;
    columns = args[i++];
    if (spec.xValues)
      values = args[i++];
    w = args[i++];
    if (spec.hasBias)
      bias = args[i++];
    decision = args[i++];
    y = args[i];
  }
};

/// Index arithmetic at one builder and location.
struct Ix {
  OpBuilder &b;
  Location loc;

  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t y) { return add(x, c(y)); }
  Value mul(Value x, int64_t y) {
    return arith::MulIOp::create(b, loc, x, c(y));
  }
  Value div(Value x, int64_t y) {
    return arith::DivUIOp::create(b, loc, x, c(y));
  }
  Value rem(Value x, int64_t y) {
    return arith::RemUIOp::create(b, loc, x, c(y));
  }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value ult(Value x, int64_t y) { return ult(x, c(y)); }
  /// Opens `if (cond)`; the insertion point goes inside.
  void openIf(Value cond) {
    auto op = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
    b.setInsertionPointToStart(op.thenBlock());
  }
  /// Opens `for (i = first; i < end; i += step)`; its induction variable.
  Value openFor(Value first, Value end, int64_t step) {
    auto loop = scf::ForOp::create(b, loc, first, end, c(step));
    b.setInsertionPointToStart(loop.getBody());
    return loop.getInductionVar();
  }
};
} // namespace

void mlir::snn::emitEventLinearTilesGPU(OpBuilder &b, Location loc,
                                        const OpKernelSpec &spec,
                                        ValueRange args, Value block,
                                        Value lane) {
  TileGeometry g = getTileGeometry(spec);
  int64_t m = spec.rows, k = spec.inFeatures, n = spec.outFeatures;
  int64_t c = g.columns;
  TileArgs a(spec, args);
  Ix ix{b, loc};
  auto shared = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  Value raw = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface(), shared));
  Value tile = memref::ViewOp::create(
      b, loc,
      MemRefType::get({(k + 1) * c}, b.getF32Type(),
                      MemRefLayoutAttrInterface(), shared),
      raw, ix.c(0), ValueRange{});
  auto vecType = VectorType::get({4}, b.getF32Type());
  llvm::MaybeAlign align(16);
  auto loadVec = [&](Value memref, Value at) -> Value {
    return vector::LoadOp::create(b, loc, vecType, memref, ValueRange{at},
                                  /*nontemporal=*/false, align);
  };
  auto storeVec = [&](Value v, Value memref, Value at) {
    vector::StoreOp::create(b, loc, v, memref, ValueRange{at},
                            /*nontemporal=*/false, align);
  };
  OpBuilder::InsertionGuard guard(b);
  // The decision is the same for the whole block: every thread reaches the
  // barrier below or none does.
  ix.openIf(emitEventPathChosen(b, loc, a.decision));
  Value tileIndex = ix.rem(block, g.tiles), chunk = ix.div(block, g.tiles);
  Value c0 = ix.mul(tileIndex, c);
  int64_t quads = g.groupThreads;
  {
    // The tile: w[c0 + cc, 4jq .. 4jq + 3] -> tile row 4jq + u, column cc.
    // A warp reads 8 quads of 4 rows (128 coalesced bytes of each); each
    // thread stores its 4 floats down a column. Swizzled: a tile row's
    // 4-float chunks are permuted (tileSlot), so that the 8 quads' stores
    // of a warp land in distinct banks and a row's chunks stay 16-byte
    // vectors for the adds below. kTileLoadsAtOnce loads in flight before
    // their stores. Reading w itself spares the transpose that a tile of
    // wt's rows needed every step (the weight changes every step).
    OpBuilder::InsertionGuard load(b);
    int64_t kQuads = k / 4, rowGroups = quads;
    int64_t total = rowGroups * llvm::divideCeilSigned(kQuads, 8) * 32;
    Value first = ix.openFor(lane, ix.c(total),
                             kEventTileThreads * kTileLoadsAtOnce);
    SmallVector<Value> loaded, valid, slots;
    for (int64_t u = 0; u < kTileLoadsAtOnce; ++u) {
      Value i = ix.add(first, u * kEventTileThreads);
      Value q = ix.rem(i, 8), r = ix.rem(ix.div(i, 8), 4);
      Value unit = ix.div(i, 32);
      Value group = ix.rem(unit, rowGroups);
      Value jq = ix.add(ix.mul(ix.div(unit, rowGroups), 8), q);
      Value cc = ix.add(ix.mul(group, 4), r);
      Value col = ix.add(c0, cc);
      valid.push_back(arith::AndIOp::create(
          b, loc, ix.ult(i, total),
          arith::AndIOp::create(b, loc, ix.ult(jq, kQuads), ix.ult(col, n))));
      Value at = ix.add(
          ix.mul(arith::MinUIOp::create(b, loc, col, ix.c(n - 1)), k),
          ix.mul(arith::MinUIOp::create(b, loc, jq, ix.c(kQuads - 1)), 4));
      loaded.push_back(loadVec(a.w, at));
      slots.push_back(ix.add(tileSlot(b, loc, ix.mul(jq, 4), group, c), r));
    }
    for (int64_t u = 0; u < kTileLoadsAtOnce; ++u) {
      OpBuilder::InsertionGuard store(b);
      ix.openIf(valid[u]);
      for (int64_t q = 0; q < 4; ++q)
        memref::StoreOp::create(b, loc,
                                vector::ExtractOp::create(b, loc, loaded[u], q),
                                tile, ValueRange{ix.add(slots[u], q * c)});
    }
  }
  {
    // Row K: zeros.
    OpBuilder::InsertionGuard zeros(b);
    ix.openIf(ix.ult(lane, quads));
    storeVec(arith::ConstantOp::create(
                 b, loc,
                 DenseElementsAttr::get(vecType, b.getF32FloatAttr(0.0f))),
             tile, ix.add(ix.c(k * c), ix.mul(lane, 4)));
  }
  gpu::BarrierOp::create(b, loc);

  Value sub = ix.rem(lane, quads), group = ix.div(lane, quads);
  Value offset = ix.mul(sub, 4);
  Value col = ix.add(c0, offset);
  Value inRange = ix.ult(col, n);
  Value rowBegin = ix.mul(chunk, g.rowsPerChunk);
  Value rowEnd = arith::MinUIOp::create(b, loc, ix.add(rowBegin, g.rowsPerChunk),
                                        ix.c(m));
  Type i1 = b.getI1Type(), indexType = b.getIndexType();
  Type i32 = b.getI32Type();
  auto slotVecType = VectorType::get({4}, i32);
  Value row = ix.openFor(ix.add(rowBegin, group), rowEnd, g.rowsAtOnce);
  Value listStart = ix.mul(row, k);
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(vecType, b.getF32FloatAttr(0.0f)));
  Value yes = arith::ConstantIntOp::create(b, loc, i1, 1);
  // The row's list 4 G slots at a time (G = C / 4, the group's threads)
  // until its -1 (or slot K): each thread loads 4 consecutive slots (16
  // bytes: the group's loads are one contiguous piece of the row) and
  // finds the first of them past the list's end; the group takes the
  // least of those (shuffles among its own lanes: the groups of a warp
  // may be at different rows), then passes the listed slots round, 8 at a
  // time, and adds their weights in list order. Slots past the end read
  // the tile's row of zeros.
  auto i32c = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, v);
  };
  Value laneInWarp = ix.rem(lane, 32);
  Value groupBase = arith::SubIOp::create(b, loc, laneInWarp, sub);
  Value groupMask = arith::ShLIOp::create(
      b, loc, i32c((int64_t(1) << quads) - 1),
      arith::IndexCastUIOp::create(b, loc, i32, groupBase));
  int64_t slotsAtOnce = 4 * quads;
  auto shuffle = [&](Value v, Value src, NVVM::ShflKind kind) -> Value {
    return NVVM::ShflOp::create(b, loc, v.getType(), groupMask, v, src,
                                i32c(0x1f), kind, UnitAttr());
  };
  auto walk = scf::WhileOp::create(
      b, loc, TypeRange{indexType, vecType, i1},
      ValueRange{ix.c(0), zero, yes},
      [&](OpBuilder &nb, Location l, ValueRange state) {
        scf::ConditionOp::create(nb, l, state[2], state);
      },
      [&](OpBuilder &nb, Location l, ValueRange state) {
        OpBuilder::InsertionGuard body(b);
        b.setInsertionPointToStart(nb.getInsertionBlock());
        Value p = state[0], acc = state[1];
        Value mine = ix.add(p, offset);
        Value at = ix.add(listStart,
                          arith::MinUIOp::create(b, loc, mine, ix.c(k - 4)));
        Value myColumns = vector::LoadOp::create(
            b, loc, slotVecType, a.columns, ValueRange{at},
            /*nontemporal=*/false, align);
        Value myValues = a.values ? loadVec(a.values, at) : Value();
        // The first of this thread's slots past the end (the group's
        // count of listed slots when it is the least), as i32.
        Value first = i32c(slotsAtOnce);
        for (int64_t q = 3; q >= 0; --q) {
          Value past = arith::OrIOp::create(
              b, loc,
              arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::slt,
                  vector::ExtractOp::create(b, loc, myColumns, q), i32c(0)),
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                    ix.add(mine, q), ix.c(k)));
          Value slot = arith::IndexCastUIOp::create(
              b, loc, i32, ix.add(offset, q));
          first = arith::SelectOp::create(b, loc, past, slot, first);
        }
        for (int64_t x = 1; x < quads; x *= 2)
          first = arith::MinUIOp::create(
              b, loc, first, shuffle(first, i32c(x), NVVM::ShflKind::bfly));
        Value listed = arith::IndexCastUIOp::create(b, loc, indexType, first);
        for (int64_t batch = 0; batch < slotsAtOnce; batch += kSlotBatch) {
          // The group's count is the same on its lanes: all of them enter.
          auto add = scf::IfOp::create(b, loc, TypeRange{vecType},
                                       ix.ult(ix.c(batch), listed),
                                       /*withElseRegion=*/true);
          OpBuilder::InsertionGuard branch(b);
          b.setInsertionPointToStart(add.thenBlock());
          SmallVector<Value> ws, values;
          for (int64_t u = batch; u < batch + kSlotBatch; ++u) {
            Value src = arith::IndexCastUIOp::create(
                b, loc, i32, ix.add(groupBase, u / 4));
            Value column = shuffle(
                vector::ExtractOp::create(b, loc, myColumns, u % 4), src,
                NVVM::ShflKind::idx);
            Value inList = ix.ult(ix.c(u), listed);
            Value j = arith::SelectOp::create(
                b, loc, inList,
                arith::IndexCastUIOp::create(b, loc, indexType, column),
                ix.c(k));
            ws.push_back(loadVec(tile, tileSlot(b, loc, j, sub, c)));
            if (myValues) {
              // A stale value past the end times the zero row could be
              // NaN: it is zeroed.
              Value v = shuffle(
                  vector::ExtractOp::create(b, loc, myValues, u % 4), src,
                  NVVM::ShflKind::idx);
              values.push_back(arith::SelectOp::create(
                  b, loc, inList, v,
                  arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f))));
            }
          }
          Value sum = acc;
          for (int64_t u = 0; u < kSlotBatch; ++u) {
            Value term =
                myValues ? arith::MulFOp::create(
                               b, loc,
                               vector::BroadcastOp::create(b, loc, vecType,
                                                           values[u]),
                               ws[u])
                         : ws[u];
            sum = arith::AddFOp::create(b, loc, sum, term);
          }
          scf::YieldOp::create(b, loc, ValueRange{sum});
          b.setInsertionPointToStart(add.elseBlock());
          scf::YieldOp::create(b, loc, ValueRange{acc});
          acc = add.getResult(0);
        }
        Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           first, i32c(slotsAtOnce));
        scf::YieldOp::create(b, loc,
                             ValueRange{ix.add(p, slotsAtOnce), acc, more});
      });
  Value sum = walk.getResult(1);
  ix.openIf(inRange);
  if (a.bias)
    sum = arith::AddFOp::create(b, loc, sum, loadVec(a.bias, col));
  storeVec(sum, a.y, ix.add(ix.mul(row, n), col));
}

void mlir::snn::emitEventLinearTilesHost(OpBuilder &b, Location loc,
                                         const OpKernelSpec &spec,
                                         func::FuncOp fn, ValueRange args) {
  int64_t m = spec.rows, k = spec.inFeatures, n = spec.outFeatures;
  int64_t c = spec.tileColumns;
  TileArgs a(spec, args);
  Ix ix{b, loc};
  auto load = [&](Value memref, Value at) -> Value {
    return memref::LoadOp::create(b, loc, memref, ValueRange{at});
  };
  auto store = [&](Value v, Value memref, Value at) {
    memref::StoreOp::create(b, loc, v, memref, ValueRange{at});
  };
  OpBuilder::InsertionGuard guard(b);
  // The GPU block's tile, on the stack: w[c0 .. c0 + C, :] transposed, so
  // that every event adds C contiguous weights (vectorized by LLVM).
  Value tile = memref::AllocaOp::create(
      b, loc, MemRefType::get({k * c}, b.getF32Type()));
  ix.openIf(emitEventPathChosen(b, loc, a.decision));
  Value tileIndex = createHostRangeLoop(b, loc, fn, 0, getEventTileCount(spec))
                        .getInductionVar();
  Value c0 = ix.mul(tileIndex, c);
  Value width = arith::MinUIOp::create(
      b, loc, ix.c(c), arith::SubIOp::create(b, loc, ix.c(n), c0));
  {
    OpBuilder::InsertionGuard copy(b);
    Value cc = ix.openFor(ix.c(0), width, 1);
    Value rowStart = ix.mul(ix.add(c0, cc), k);
    Value j = ix.openFor(ix.c(0), ix.c(k), 1);
    store(load(a.w, ix.add(rowStart, j)), tile, ix.add(ix.mul(j, c), cc));
  }
  // Per row: y[row, c0 ..] = the listed inputs' tile rows in list order
  // (times x's values), then + b: event_linear's sums.
  Value row = ix.openFor(ix.c(0), ix.c(m), 1);
  Value outStart = ix.add(ix.mul(row, n), c0), listStart = ix.mul(row, k);
  {
    OpBuilder::InsertionGuard inner(b);
    Value cc = ix.openFor(ix.c(0), width, 1);
    store(arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f)), a.y,
          ix.add(outStart, cc));
  }
  emitHostListWalk(b, loc, a.columns, listStart, k, [&](Value at) {
    Value j = arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                           load(a.columns, at));
    Value value = a.values ? load(a.values, at) : Value();
    Value tileRow = ix.mul(j, c);
    Value cc = ix.openFor(ix.c(0), width, 1);
    Value out = ix.add(outStart, cc);
    Value w = load(tile, ix.add(tileRow, cc));
    Value term = value ? arith::MulFOp::create(b, loc, value, w) : w;
    store(arith::AddFOp::create(b, loc, load(a.y, out), term), a.y, out);
  });
  if (a.bias) {
    Value cc = ix.openFor(ix.c(0), width, 1);
    Value out = ix.add(outStart, cc);
    store(arith::AddFOp::create(b, loc, load(a.y, out),
                                load(a.bias, ix.add(c0, cc))),
          a.y, out);
  }
}
