//===- ChannelsLast.cpp - the --snn-channels-last pass --------------------===//
//
// Moves the activations of a function's convolution layers to [.., H, W, C]
// (cuDNN's fast layout). The convolutions anchor the rewrite: each gets its
// input in the new layout (through a transpose at the entry unless the
// value already has one) and its weight through a transpose to
// [O, KH, KW, I]. The layout then follows the activations: an op that reads
// a rewritten value and has a channels-last form (pools, batch norm,
// neurons, elementwise ops) is rebuilt on it; every other reader gets a
// transpose back. The rewritten originals are erased at the end, and the
// canonical folds of snn.transpose cancel what pairs remain.
//
//===----------------------------------------------------------------------===//

#include "snn/Dialect/SNN/IR/FusedBatchNorm.h"
#include "snn/Dialect/SNN/IR/FusedPool.h"
#include "snn/Dialect/SNN/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::snn {
#define GEN_PASS_DEF_SNNCHANNELSLASTPASS
#include "snn/Dialect/SNN/Transforms/Passes.h.inc"
} // namespace mlir::snn

using namespace mlir;
using namespace mlir::snn;

namespace {

/// [.., C, H, W] -> [.., H, W, C] of a rank-`rank` tensor, or its inverse.
SmallVector<int64_t> toChannelsLast(int64_t rank, bool inverse = false) {
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 3; ++d)
    perm.push_back(d);
  if (inverse)
    perm.append({rank - 1, rank - 3, rank - 2});
  else
    perm.append({rank - 2, rank - 1, rank - 3});
  return perm;
}

/// A static f32 [.., C, H, W] activation with at least one leading dim.
bool isSpatial(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() >= 4 && type.hasStaticShape();
}

RankedTensorType permuted(Value v, ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  return RankedTensorType::get(shape, type.getElementType());
}

/// Why the neuron layer `op` cannot run on channels-last activations (its
/// per-neuron data has the [C, H, W] feature shape), or an empty string.
std::string getNeuronFailure(Operation *op) {
  auto neuron = cast<NeuronOpInterface>(op);
  if (neuron.isStepForm())
    return "a step-form neuron";
  if (!getInitState(op).empty() || !getFinalState(op).empty())
    return "its state is chained (--snn-split-time)";
  for (NamedAttribute attr : op->getAttrs())
    if (isa<DenseElementsAttr>(attr.getValue()))
      return ("its '" + attr.getName().getValue() +
              "' has one value per neuron")
          .str();
  if (auto plif = dyn_cast<PLIFOp>(op))
    if (cast<RankedTensorType>(plif.getW().getType()).getNumElements() != 1)
      return "its leak 'w' has one value per neuron";
  return "";
}

/// Why the function is not a forward function the pass can rewrite (it
/// already has gradients or fused layers), or an empty string.
std::string getFunctionFailure(func::FuncOp func) {
  std::string failure;
  func.walk([&](Operation *op) {
    if (isa<NeuronBwdOp, BatchNormBwdOp, Conv2DBwdOp, LinearBwdOp,
            AvgPool2DBwdOp, SumPool2DBwdOp, MaxPool2DBwdOp>(op))
      failure = "the function already has gradients (run --snn-channels-last "
                "before --snn-autodiff)";
    else if (op->hasAttr(kFusedPoolAttrName) ||
             op->hasAttr(kFusedBatchNormAttrName))
      failure = "the function has fused layers (run --snn-channels-last "
                "before --snn-fuse)";
    return failure.empty() ? WalkResult::advance() : WalkResult::interrupt();
  });
  return failure;
}

class ChannelsLastRewriter {
public:
  ChannelsLastRewriter(func::FuncOp func) : func(func), b(func.getContext()) {}

  /// Rewrites the function; the number of rewritten ops.
  unsigned run();

private:
  /// The channels-last form of the [.., C, H, W] value `v`: its rewrite, or
  /// a transpose of it (one per value).
  Value getChannelsLast(Value v);
  /// The [O, KH, KW, I] form of a convolution weight (one per weight).
  Value getFilter(Value w);
  /// Clones `op` with `operands` (their channels-last forms) and its first
  /// result in channels-last; records the rewrite.
  Operation *rebuild(Operation *op, ArrayRef<Value> operands);
  /// Builds `op` on channels-last activations when its input has them (the
  /// convolutions: always); whether it did.
  bool visit(Operation *op);
  /// Puts a transpose back in front of every reader of a rewritten op that
  /// was not rewritten itself, then erases the originals.
  void finish();

  Value transposeAfter(Value v, ArrayRef<int64_t> perm) {
    OpBuilder::InsertionGuard guard(b);
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
    return TransposeOp::create(b, v.getLoc(), permuted(v, perm), v, perm);
  }

  func::FuncOp func;
  OpBuilder b;
  /// Original [.., C, H, W] value -> its [.., H, W, C] value.
  llvm::MapVector<Value, Value> channelsLast;
  DenseMap<Value, Value> filters;
  /// Rewritten originals -> their rebuilt op, in program order.
  llvm::MapVector<Operation *, Operation *> rewritten;
};

Value ChannelsLastRewriter::getChannelsLast(Value v) {
  if (Value last = channelsLast.lookup(v))
    return last;
  Value last = transposeAfter(
      v, toChannelsLast(cast<RankedTensorType>(v.getType()).getRank()));
  channelsLast[v] = last;
  return last;
}

Value ChannelsLastRewriter::getFilter(Value w) {
  if (Value f = filters.lookup(w))
    return f;
  Value f = transposeAfter(w, {0, 2, 3, 1});
  filters[w] = f;
  return f;
}

Operation *ChannelsLastRewriter::rebuild(Operation *op,
                                         ArrayRef<Value> operands) {
  b.setInsertionPoint(op);
  IRMapping mapping;
  for (auto [from, to] : llvm::zip(op->getOperands(), operands))
    mapping.map(from, to);
  Operation *clone = b.clone(*op, mapping);
  Value result = op->getResult(0);
  clone->getResult(0).setType(permuted(
      result, toChannelsLast(cast<RankedTensorType>(result.getType()).getRank())));
  channelsLast[result] = clone->getResult(0);
  rewritten[op] = clone;
  return clone;
}

bool ChannelsLastRewriter::visit(Operation *op) {
  auto mapped = [&](Value v) { return channelsLast.lookup(v); };
  return TypeSwitch<Operation *, bool>(op)
      .Case([&](Conv2DOp conv) {
        if (conv.getChannelsLast() || !isSpatial(conv.getInput()) ||
            !isSpatial(conv.getOutput()))
          return false;
        SmallVector<Value> operands(conv->getOperands());
        operands[0] = getChannelsLast(conv.getInput());
        operands[1] = getFilter(conv.getWeight());
        rebuild(op, operands)->setAttr(conv.getChannelsLastAttrName(),
                                       b.getUnitAttr());
        return true;
      })
      .Case<AvgPool2DOp, SumPool2DOp, MaxPool2DOp>([&](auto pool) {
        Value x = mapped(pool.getInput());
        if (!x || pool.getChannelsLast())
          return false;
        rebuild(op, {x})->setAttr(pool.getChannelsLastAttrName(),
                                  b.getUnitAttr());
        return true;
      })
      .Case([&](BatchNormOp bn) {
        Value x = mapped(bn.getInput());
        if (!x || bn.getSpatialRank() != 2)
          return false;
        SmallVector<Value> operands(bn->getOperands());
        operands[0] = x;
        rebuild(op, operands)
            ->setAttr(bn.getSpatialRankAttrName(), b.getI64IntegerAttr(0));
        return true;
      })
      .Case<ScaleOp, DropoutOp>([&](Operation *) {
        Value x = mapped(op->getOperand(0));
        if (!x)
          return false;
        rebuild(op, {x});
        return true;
      })
      .Case([&](AddOp add) {
        Value lhs = mapped(add.getLhs()), rhs = mapped(add.getRhs());
        if (!lhs && !rhs)
          return false;
        // One side in the new layout: the other follows it.
        rebuild(op, {lhs ? lhs : getChannelsLast(add.getLhs()),
                     rhs ? rhs : getChannelsLast(add.getRhs())});
        return true;
      })
      .Case([&](NeuronOpInterface neuron) {
        Value x = mapped(neuron.getInput());
        if (!x)
          return false;
        std::string failure = getNeuronFailure(op);
        if (!failure.empty()) {
          op->emitRemark() << "left in [.., C, H, W] by --snn-channels-last: "
                           << failure;
          return false;
        }
        SmallVector<Value> operands(op->getOperands());
        operands[0] = x;
        rebuild(op, operands);
        return true;
      })
      .Default([](Operation *) { return false; });
}

void ChannelsLastRewriter::finish() {
  // Readers that stay in [.., C, H, W]: a transpose back, one per value.
  for (auto [op, clone] : rewritten) {
    Value result = op->getResult(0);
    Value back;
    for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
      if (rewritten.contains(use.getOwner()))
        continue;
      if (!back) {
        Value last = clone->getResult(0);
        back = transposeAfter(
            last,
            toChannelsLast(cast<RankedTensorType>(last.getType()).getRank(),
                           /*inverse=*/true));
      }
      use.set(back);
    }
    // Other results (none of the rewritten ops has a layout-dependent one)
    // go to the clone.
    for (unsigned i = 1; i < op->getNumResults(); ++i)
      op->getResult(i).replaceAllUsesWith(clone->getResult(i));
  }
  // Users first: an original may read another's result.
  auto originals = rewritten.takeVector();
  for (auto &entry : llvm::reverse(originals))
    entry.first->erase();
}

unsigned ChannelsLastRewriter::run() {
  // The top-level ops in order: an op's inputs are rewritten before it.
  for (Operation &op : llvm::make_early_inc_range(func.getBody().getOps()))
    visit(&op);
  unsigned n = rewritten.size();
  finish();
  return n;
}

struct SNNChannelsLastPass
    : snn::impl::SNNChannelsLastPassBase<SNNChannelsLastPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (std::string failure = getFunctionFailure(func); !failure.empty()) {
      func.emitRemark() << "not rewritten to channels-last: " << failure;
      return;
    }
    unsigned rewrittenOps = ChannelsLastRewriter(func).run();
    if (rewrittenOps == 0) {
      func.emitRemark() << "not rewritten to channels-last: no snn.conv2d on "
                           "static [.., C, H, W] activations";
      return;
    }
    // Cancel the pairs (a transpose back read by a transpose forward); only
    // the transposes are visited, so nothing else of the function changes.
    SmallVector<Operation *> transposeOps;
    func.walk([&](TransposeOp op) { transposeOps.push_back(op); });
    RewritePatternSet patterns(&getContext());
    TransposeOp::getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(transposeOps, std::move(patterns), config);
    unsigned transposes = 0;
    func.walk([&](TransposeOp) { ++transposes; });
    numRewritten += rewrittenOps;
    numTransposes += transposes;
    func.emitRemark() << "rewritten to channels-last: " << rewrittenOps
                      << " ops, " << transposes << " transposes";
  }
};

} // namespace
