//===- FoldScaleChains.cpp - merge consecutive snn.scale ops --------------===//
//
// scale(scale(x, a), b) -> scale(x, a * b). Small on purpose: it is the worked
// example of docs/how-to-write-a-fusion-pass.md.
//
//===----------------------------------------------------------------------===//

#include "snn/Dialect/SNN/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::snn {
#define GEN_PASS_DEF_SNNFOLDSCALECHAINSPASS
#include "snn/Dialect/SNN/Transforms/Passes.h.inc"
} // namespace mlir::snn

using namespace mlir;
using namespace mlir::snn;

namespace {

/// Rewrites the outer scale of a chain; the inner one stays while it has
/// other users and is erased by the driver once it is dead.
struct MergeScaleOfScale : OpRewritePattern<ScaleOp> {
  MergeScaleOfScale(MLIRContext *ctx, llvm::Statistic &merged)
      : OpRewritePattern<ScaleOp>(ctx), merged(merged) {}

  LogicalResult matchAndRewrite(ScaleOp outer,
                                PatternRewriter &rewriter) const override {
    auto inner = outer.getInput().getDefiningOp<ScaleOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(outer, "input is not an snn.scale");
    double product = inner.getScale().convertToDouble() *
                     outer.getScale().convertToDouble();
    rewriter.modifyOpInPlace(outer, [&] {
      outer.getInputMutable().set(inner.getInput());
      outer.setScaleAttr(rewriter.getF64FloatAttr(product));
    });
    ++merged;
    return success();
  }

  llvm::Statistic &merged;
};

struct SNNFoldScaleChainsPass
    : snn::impl::SNNFoldScaleChainsPassBase<SNNFoldScaleChainsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MergeScaleOfScale>(&getContext(), numMerged);
    // The driver also runs ScaleOp::fold, which removes a product of 1.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
