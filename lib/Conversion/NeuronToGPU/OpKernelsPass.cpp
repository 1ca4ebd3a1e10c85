//===- OpKernelsPass.cpp - the --snn-op-kernels pass ----------------------===//
//
// Shows (and tests) the op kernels that --snn-compile generates, from the
// snn ops of the module: specs as the module compiler builds them, kernels
// added next to the functions.
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/BatchNormKernels.h"
#include "snn/Conversion/NeuronToGPU/LossKernels.h"
#include "snn/Conversion/NeuronToGPU/OpKernels.h"
#include "snn/Conversion/NeuronToGPU/PoolKernels.h"
#include "snn/Conversion/NeuronToGPU/TransposeKernels.h"
#include "snn/Conversion/Passes.h"
#include "snn/Dialect/SNN/IR/SNNOps.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::snn {
#define GEN_PASS_DEF_SNNOPKERNELS
#include "snn/Conversion/Passes.h.inc"
} // namespace mlir::snn

using namespace mlir;
using namespace mlir::snn;

/// The pooling kernel of a pooling op or of its gradient, or nullopt.
static std::optional<OpKernelSpec> getPoolSpec(Operation *op) {
  auto shape = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  std::optional<OpKernelSpec> spec;
  auto forward = [&](auto pool, PoolMode mode) {
    spec = makePoolKernelSpec(mode, /*backward=*/false, shape(pool.getInput()),
                              shape(pool.getOutput()), pool.getKernelSize(),
                              pool.getEffectiveStride(), pool.getPadding(),
                              /*accumulate=*/false, pool.getChannelsLast());
  };
  auto backward = [&](auto pool, PoolMode mode) {
    spec = makePoolKernelSpec(mode, /*backward=*/true,
                              shape(pool.getGradInput()),
                              shape(pool.getGradOutput()), pool.getKernelSize(),
                              pool.getEffectiveStride(), pool.getPadding(),
                              /*accumulate=*/false, pool.getChannelsLast());
  };
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](AvgPool2DOp p) { forward(p, PoolMode::Avg); })
      .Case([&](SumPool2DOp p) { forward(p, PoolMode::Sum); })
      .Case([&](MaxPool2DOp p) { forward(p, PoolMode::Max); })
      .Case([&](AvgPool2DBwdOp p) { backward(p, PoolMode::Avg); })
      .Case([&](SumPool2DBwdOp p) { backward(p, PoolMode::Sum); })
      .Case([&](MaxPool2DBwdOp p) { backward(p, PoolMode::Max); });
  return spec;
}

/// The batch norm kernels of a batch norm op or of its gradient (none for
/// other ops): a batch norm whose gradient is taken runs in training mode.
static SmallVector<OpKernelSpec, 3> getBatchNormSpecs(Operation *op) {
  auto shape = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  if (auto bn = dyn_cast<BatchNormOp>(op)) {
    bool training = llvm::any_of(bn->getUsers(), [&](Operation *user) {
      auto bwd = dyn_cast<BatchNormBwdOp>(user);
      return bwd && bwd.getForward() == bn.getOutput();
    });
    return makeBatchNormKernelSpecs(
        shape(bn.getInput()), bn.getSpatialRank(), training,
        /*backward=*/false, bn.getEps().convertToDouble(),
        bn.getMomentum().convertToDouble());
  }
  auto bwd = dyn_cast<BatchNormBwdOp>(op);
  auto forward = bwd ? bwd.getForward().getDefiningOp<BatchNormOp>() : nullptr;
  if (!forward)
    return {};
  return makeBatchNormKernelSpecs(shape(bwd.getInput()),
                                 forward.getSpatialRank(), /*training=*/true,
                                 /*backward=*/true);
}

/// The kernel of a loss op (its gradient written), or nullopt.
static std::optional<OpKernelSpec> getLossSpec(Operation *op, bool gradient) {
  if (!isa<LossCERateOp, LossMSERateOp, LossCEMembraneOp,
           LossCEMembraneMaxOp>(op))
    return std::nullopt;
  auto output = cast<RankedTensorType>(op->getOperand(0).getType());
  return makeLossKernelSpec(op->getName().stripDialect(), output.getShape(),
                            gradient);
}

/// Elements of a static tensor type, or nullopt.
static std::optional<int64_t> getNumElements(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !ranked.hasStaticShape())
    return std::nullopt;
  return ranked.getNumElements();
}

namespace {
struct SNNOpKernelsPass
    : public snn::impl::SNNOpKernelsBase<SNNOpKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpKernelRegistry registry;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      // Optimizer groups of this function, in the order of their first op.
      std::vector<OpKernelSpec> groups;
      llvm::StringMap<size_t> groupOf;
      int64_t opIndex = -1;
      func.walk([&](Operation *op) {
        ++opIndex;
        std::optional<int64_t> n = op->getNumResults()
                                       ? getNumElements(op->getResultTypes()[0])
                                       : std::nullopt;
        if (!n)
          return;
        OpKernelSpec spec;
        spec.sizes = {*n};
        if (std::optional<OpKernelSpec> pool = getPoolSpec(op)) {
          spec = *pool;
        } else if (auto transpose = dyn_cast<TransposeOp>(op)) {
          spec = makeTransposeKernelSpec(
              cast<RankedTensorType>(transpose.getInput().getType()).getShape(),
              transpose.getPermutation());
        } else if (SmallVector<OpKernelSpec, 3> bn = getBatchNormSpecs(op);
                   !bn.empty()) {
          for (const OpKernelSpec &stage : bn)
            registry.request(stage);
          return;
        } else if (std::optional<OpKernelSpec> loss = getLossSpec(op, true)) {
          // The training step's kernel, then the evaluation's (no gy).
          registry.request(*loss);
          spec = *getLossSpec(op, false);
        } else if (isa<AddOp, AccumulateOp>(op)) {
          spec.kind = OpKernelKind::Add;
        } else if (auto scale = dyn_cast<ScaleOp>(op)) {
          spec.kind = OpKernelKind::Scale;
          spec.scale = scale.getScale().convertToDouble();
        } else if (auto sgd = dyn_cast<SGDOp>(op)) {
          spec.kind = OpKernelKind::SGD;
          spec.momentum = sgd.getMomentum().convertToDouble();
          spec.dampening = sgd.getDampening().convertToDouble();
          spec.weightDecay = sgd.getWeightDecay().convertToDouble();
          spec.nesterov = sgd.getNesterov();
        } else if (auto dropout = dyn_cast<DropoutOp>(op)) {
          // As in a training step; the op's index in its function stands
          // for its index in the program.
          spec.kind = OpKernelKind::Dropout;
          spec.p = dropout.getP().convertToDouble();
          spec.seedIndex = opIndex;
        } else if (auto bwd = dyn_cast<DropoutBwdOp>(op)) {
          auto forward = bwd.getForward().getDefiningOp<DropoutOp>();
          if (!forward)
            return;
          spec.kind = OpKernelKind::DropoutBwd;
          spec.p = forward.getP().convertToDouble();
        } else if (auto adam = dyn_cast<AdamOp>(op)) {
          spec.kind = OpKernelKind::Adam;
          spec.beta1 = adam.getBeta1().convertToDouble();
          spec.beta2 = adam.getBeta2().convertToDouble();
          spec.eps = adam.getEps().convertToDouble();
          spec.weightDecay = adam.getWeightDecay().convertToDouble();
          spec.decoupled = adam.getDecoupled();
        } else {
          return;
        }
        if (spec.kind != OpKernelKind::SGD && spec.kind != OpKernelKind::Adam) {
          registry.request(spec);
          return;
        }
        OpKernelSpec hyper = spec;
        hyper.sizes.clear();
        auto [it, inserted] = groupOf.try_emplace(hyper.getKey(), groups.size());
        if (inserted)
          groups.push_back(hyper);
        groups[it->second].sizes.push_back(*n);
      });
      for (const OpKernelSpec &group : groups)
        registry.request(group);
    }
    if (registry.empty())
      return;

    OpBuilder b(module.getContext());
    Location loc = module.getLoc();
    SymbolTable symbols(module);
    if (host) {
      b.setInsertionPointToEnd(module.getBody());
      for (const NamedOpKernel &kernel : registry.getKernels()) {
        if (symbols.lookup(kernel.name)) {
          module.emitError() << "the module already has a symbol named '"
                             << kernel.name << "'";
          return signalPassFailure();
        }
        buildOpHostKernel(b, loc, kernel.name, kernel.spec);
        ++numKernels;
      }
      return;
    }
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>("snn_kernels");
    if (!gpuModule) {
      b.setInsertionPointToEnd(module.getBody());
      gpuModule = gpu::GPUModuleOp::create(b, loc, "snn_kernels");
    }
    SymbolTable kernels(gpuModule);
    b.setInsertionPointToEnd(gpuModule.getBody());
    for (const NamedOpKernel &kernel : registry.getKernels()) {
      if (kernels.lookup(kernel.name)) {
        gpuModule.emitError() << "gpu.module @snn_kernels already has a "
                                 "kernel named '"
                              << kernel.name << "'";
        return signalPassFailure();
      }
      buildOpGPUKernel(b, loc, kernel.name, kernel.spec);
      ++numKernels;
    }
  }
};
} // namespace
