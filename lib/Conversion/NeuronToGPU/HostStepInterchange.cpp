//===- HostStepInterchange.cpp - CPU neuron kernels: steps outside items --===//
//
// A GPU neuron thread scans its T steps with the state in registers; looped
// over the threads on the CPU, that reads each tensor T times at a stride of
// B F floats: a new page and a cache miss per step, which the prefetchers do
// not follow (the SHD layer's backward ran at a sixth of the memory
// bandwidth). Here the loop over a block of items moves inside the step
// loop: at each step the block's items read consecutive memory, and each
// item's loop-carried state waits in a small stack buffer between steps.
// Items are GPU threads, independent by construction, so any order of them
// computes the same bits.
//
//===----------------------------------------------------------------------===//

#include "NeuronKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

/// Whether `op` (and what it holds) at most reads memory.
static bool onlyReads(Operation *op) {
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  return effects && llvm::all_of(*effects, [](const auto &effect) {
           return isa<MemoryEffects::Read>(effect.getEffect());
         });
}

/// Whether the loop over the blocks can have `bound` of the step loop:
/// defined outside `items`, or a constant inside (cloned by hoistBound).
static bool isHoistable(Value bound, scf::ForOp items) {
  Operation *def = bound.getDefiningOp();
  return !def || !items->isAncestor(def) ||
         def->hasTrait<OpTrait::ConstantLike>();
}

static Value hoistBound(OpBuilder &b, Value bound, scf::ForOp items) {
  Operation *def = bound.getDefiningOp();
  if (!def || !items->isAncestor(def))
    return bound;
  return b.clone(*def)->getResult(0);
}

FailureOr<scf::ForOp>
mlir::snn::kernelgen::interchangeHostSteps(scf::ForOp items,
                                           int64_t blockItems) {
  // The item body: reads (the thread's prologue), one step loop, then the
  // rest (the epilogue). A prologue that writes (a backward that recomputes
  // its last chunk before its loop) keeps the loop as it is.
  Block *body = items.getBody();
  scf::ForOp steps;
  SmallVector<Operation *> prologue, epilogue;
  for (Operation &op : body->without_terminator()) {
    if (auto loop = dyn_cast<scf::ForOp>(op); loop && !steps) {
      steps = loop;
      continue;
    }
    if (!steps && !onlyReads(&op))
      return failure();
    (steps ? epilogue : prologue).push_back(&op);
  }
  if (!steps || !llvm::all_of(steps->getOperands().take_front(3),
                              [&](Value v) { return isHoistable(v, items); }))
    return failure();
  for (Value state : steps.getInitArgs())
    if (!MemRefType::isValidElementType(state.getType()))
      return failure();

  Location loc = items.getLoc();
  OpBuilder b(items);
  auto idx = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value lower = hoistBound(b, steps.getLowerBound(), items);
  Value upper = hoistBound(b, steps.getUpperBound(), items);
  Value stride = hoistBound(b, steps.getStep(), items);
  // A buffer per state value: the block's items, one slot each.
  SmallVector<Value> buffers;
  for (Value state : steps.getInitArgs())
    buffers.push_back(memref::AllocaOp::create(
        b, loc, MemRefType::get({blockItems}, state.getType())));

  Value itemsEnd = items.getUpperBound();
  auto blocks = scf::ForOp::create(b, loc, items.getLowerBound(), itemsEnd,
                                   idx(blockItems), items.getInitArgs());
  // Without carried values the loop comes with its terminator.
  if (blocks.getBody()->mightHaveTerminator())
    blocks.getBody()->getTerminator()->erase();
  b.setInsertionPointToStart(blocks.getBody());
  Value first = blocks.getInductionVar();
  Value count = arith::MinUIOp::create(
      b, loc, idx(blockItems), arith::SubIOp::create(b, loc, itemsEnd, first));
  // Runs `fn(slot, mapping)` for each item of the block, its prologue
  // cloned into `mapping` (reads only: cheap to repeat at every step).
  auto forEachItem = [&](ValueRange init,
                         function_ref<SmallVector<Value>(Value, IRMapping &)>
                             fn) {
    return scf::ForOp::create(
        b, loc, idx(0), count, idx(1), init,
        [&](OpBuilder &nested, Location, Value slot, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          IRMapping mapping;
          mapping.map(items.getInductionVar(),
                      arith::AddIOp::create(b, loc, first, slot));
          mapping.map(items.getRegionIterArgs(), carried);
          for (Operation *op : prologue)
            b.clone(*op, mapping);
          SmallVector<Value> results = fn(slot, mapping);
          scf::YieldOp::create(b, loc, results);
        });
  };
  auto storeState = [&](ValueRange values, Value slot, OpBuilder &at) {
    for (auto [value, buffer] : llvm::zip(values, buffers))
      memref::StoreOp::create(at, loc, value, buffer, slot);
  };
  auto loadState = [&](Value slot, OpBuilder &at) {
    SmallVector<Value> values;
    for (Value buffer : buffers)
      values.push_back(memref::LoadOp::create(at, loc, buffer, slot));
    return values;
  };

  // The initial states, the steps with the block's items inside, then the
  // epilogues (carrying the item loop's values, in item order).
  forEachItem({}, [&](Value slot, IRMapping &mapping) {
    SmallVector<Value> init;
    for (Value v : steps.getInitArgs())
      init.push_back(mapping.lookupOrDefault(v));
    storeState(init, slot, b);
    return SmallVector<Value>();
  });
  scf::ForOp::create(
      b, loc, lower, upper, stride, ValueRange{},
      [&](OpBuilder &outer, Location, Value t, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(outer.getInsertionBlock(),
                            outer.getInsertionPoint());
        forEachItem({}, [&](Value slot, IRMapping &mapping) {
          mapping.map(steps.getInductionVar(), t);
          mapping.map(steps.getRegionIterArgs(), loadState(slot, b));
          for (Operation &op : steps.getBody()->without_terminator())
            b.clone(op, mapping);
          SmallVector<Value> next;
          for (Value v : steps.getBody()->getTerminator()->getOperands())
            next.push_back(mapping.lookupOrDefault(v));
          storeState(next, slot, b);
          return SmallVector<Value>();
        });
        scf::YieldOp::create(b, loc);
      });
  scf::ForOp epilogues = forEachItem(
      blocks.getRegionIterArgs(), [&](Value slot, IRMapping &mapping) {
        mapping.map(steps.getResults(), loadState(slot, b));
        for (Operation *op : epilogue)
          b.clone(*op, mapping);
        SmallVector<Value> carried;
        for (Value v : body->getTerminator()->getOperands())
          carried.push_back(mapping.lookupOrDefault(v));
        return carried;
      });
  scf::YieldOp::create(b, loc, epilogues.getResults());
  items->replaceAllUsesWith(blocks->getResults());
  items.erase();
  return blocks;
}
