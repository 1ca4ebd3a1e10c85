//===- NeuronToHost.cpp - neuron kernel bodies as host functions ----------===//
//
// The host twin of --snn-neuron-to-gpu: a func.func per kernel that loops over
// the kernel's threads and runs the same per-thread code, so that the
// arithmetic of the GPU kernels is tested where there is no GPU.
//
//===----------------------------------------------------------------------===//

#include "NeuronKernelBuilder.h"
#include "snn/Conversion/Passes.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::snn {
#define GEN_PASS_DEF_SNNNEURONTOHOST
#include "snn/Conversion/Passes.h.inc"
} // namespace mlir::snn

using namespace mlir;
using namespace mlir::snn;
using namespace mlir::snn::kernelgen;

namespace {
struct SNNNeuronToHostPass
    : public snn::impl::SNNNeuronToHostBase<SNNNeuronToHostPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<NeuronStorage> storage =
        parseNeuronStorage(module, hDType, spikeBits, recomputeChunk);
    if (failed(storage))
      return signalPassFailure();
    SymbolTable symbols(module);
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    SmallVector<KernelKind> kinds = getKernelKinds(saveH, backward);
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    SmallVector<Operation *> created;
    bool failed = false;
    for (func::FuncOp func : funcs) {
      if (mlir::failed(checkStorageSupported(func, *storage)))
        return signalPassFailure();
      forEachKernelOp(func, [&](Operation *op, unsigned index,
                                const NeuronSpec &spec) {
        for (KernelKind kind : kinds) {
          if (spec.sharesKernels)
            continue;
          std::string name =
              getKernelName(func.getSymName(), index, spec, kind);
          if (symbols.lookup(name)) {
            op->emitError() << "the module already has a function named '"
                            << name << "'";
            failed = true;
            return;
          }
          func::FuncOp fn = buildHostKernel(b, op->getLoc(), name, spec, kind);
          symbols.insert(fn);
          created.push_back(fn);
        }
      }, *storage);
      if (failed)
        return signalPassFailure();
    }
    for (Operation *fn : created)
      if (mlir::failed(expandMathOps(fn)) ||
          mlir::failed(expandBF16Conversions(fn)))
        return signalPassFailure();
  }
};
} // namespace
