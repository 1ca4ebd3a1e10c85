//===- SNNCompile.cpp - the --snn-compile pass ----------------------------===//

#include "snn/Dialect/SNN/IR/FusedBatchNorm.h"
#include "snn/Dialect/SNN/Transforms/Passes.h"
#include "snn/Target/Module/ModuleEmitter.h"

namespace mlir::snn {
#define GEN_PASS_DEF_SNNCOMPILE
#include "snn/Dialect/SNN/Transforms/Passes.h.inc"
} // namespace mlir::snn

using namespace mlir;
using namespace mlir::snn;

namespace {
struct SNNCompilePass : public snn::impl::SNNCompileBase<SNNCompilePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ModuleCompileOptions options;
    options.outputDir = output;
    std::optional<ModuleTarget> parsed = parseModuleTarget(target);
    if (!parsed) {
      module.emitError() << "snn-compile: unknown target '" << target
                         << "'; use cpu, cuda or all";
      return signalPassFailure();
    }
    options.target = *parsed;
    if (!chips.empty())
      options.chips.assign(chips.begin(), chips.end());
    if (batch < 0) {
      module.emitError() << "snn-compile: batch must be positive, got "
                         << batch;
      return signalPassFailure();
    }
    options.batch = batch;
    if (savedH != "f32" && savedH != "bf16") {
      module.emitError() << "snn-compile: saved-h must be f32 or bf16, not '"
                         << savedH << "'";
      return signalPassFailure();
    }
    options.savedHBf16 = savedH == "bf16";
    if (recompute < 0 || recompute > kMaxRecomputeChunk) {
      module.emitError() << "snn-compile: recompute must be in [0, "
                         << kMaxRecomputeChunk << "] (0: save H), not "
                         << static_cast<int64_t>(recompute);
      return signalPassFailure();
    }
    options.recomputeChunk = recompute;
    options.spikeBits = spikeBits;
    options.eventTiles = eventTiles;
    options.rowBits = rowBits;
    options.gradBits = gradBits;
    if (failed(compileToModuleDirectory(module, options)))
      return signalPassFailure();
    // The IR is only read.
    markAllAnalysesPreserved();
  }
};
} // namespace
