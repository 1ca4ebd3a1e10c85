//===- NeuronToGPU.cpp - neuron layers as gpu.func kernels ----------------===//
//
// Builds one kernel per neuron layer and direction: thread i of the 1-d grid
// owns neurons [W i, W i + W) and runs the per-thread code of
// NeuronKernelBody.cpp. Memref arguments are static and `llvm.noalias`, so
// that the bare-pointer lowering gives one `float*` per tensor and read-only
// tensors go through the non-coherent cache (ld.global.nc).
//
//===----------------------------------------------------------------------===//

#include "BlockSum.h"
#include "NeuronKernelBuilder.h"
#include "snn/Conversion/NeuronToGPU/SparseKernels.h"
#include "snn/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

#include <map>

namespace mlir::snn {
#define GEN_PASS_DEF_SNNNEURONTOGPU
#include "snn/Conversion/Passes.h.inc"
} // namespace mlir::snn

using namespace mlir;
using namespace mlir::snn;
using namespace mlir::snn::kernelgen;

unsigned kernelgen::forEachKernelOp(
    func::FuncOp func,
    function_ref<void(Operation *, unsigned, const NeuronSpec &)> fn,
    const NeuronStorage &storage) {
  // Step ops are counted apart, so that the multi-step layers' names do not
  // depend on the time loops around them.
  unsigned index = 0, stepIndex = 0, skipped = 0;
  // The first step op of each kind: its name, attributes and operand types.
  std::map<std::string, unsigned> firstStep;
  func.walk([&](NeuronOpInterface neuron) {
    bool step = neuron.isStepForm();
    std::string why;
    if (std::optional<NeuronSpec> spec = getNeuronSpec(neuron, why)) {
      // A step keeps its H and spikes in f32 tensors of one step.
      spec->storage = step ? NeuronStorage() : storage;
      // --snn-fuse may have chosen to recompute this layer's H.
      if (!step)
        spec->storage.recomputeChunk =
            getRecomputeChunk(neuron, storage.recomputeChunk);
      // Packed spikes (--snn-neuron-to-gpu only) are not counted.
      if (spec->packsSpikes())
        spec->countsSpikes = false;
      unsigned at = step ? stepIndex : index;
      if (step) {
        std::string key;
        llvm::raw_string_ostream os(key);
        os << neuron->getName() << neuron->getAttrDictionary();
        for (Type type : neuron->getOperandTypes())
          os << type;
        auto [first, inserted] = firstStep.try_emplace(key, at);
        spec->sharesKernels = !inserted;
        at = first->second;
      }
      fn(neuron, at, *spec);
    } else {
      ++skipped;
    }
    ++(step ? stepIndex : index);
  });
  return skipped;
}

/// The backward of a layer that computes its batch norm backward's sums: a
/// thread per slot (spec.bnPlaneSlots per channel plane), every thread of
/// the block in the tree (idle slots add zeros), and the first thread of
/// each run of spec.bnSegment slots stores the run's sums.
static void buildBatchNormBackwardThread(OpBuilder &b, Location loc,
                                         ValueRange args, Value shared,
                                         const NeuronSpec &spec,
                                         int64_t blockSize, Value slot,
                                         Value lane) {
  IndexMath m{b, loc};
  SmallVector<Value, 2> sums =
      buildBatchNormBackwardSlot(b, loc, spec, slot, args);
  int64_t segment = spec.bnSegment;
  SmallVector<Value> totals =
      emitSegmentedBlockSum(b, loc, shared, lane, blockSize, segment, sums);
  // The runs past the layer have nothing to store.
  Value run = m.divU(slot, segment);
  Value leads = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      m.remU(slot, segment), m.index(0));
  Value inLayer = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ult, run,
      m.index(spec.getNumBatchNormSlots() / segment));
  auto store = scf::IfOp::create(
      b, loc, arith::AndIOp::create(b, loc, leads, inLayer),
      /*withElse=*/false);
  OpBuilder::InsertionGuard ig(b);
  b.setInsertionPointToStart(store.thenBlock());
  storeBatchNormPartials(b, loc, spec, args, run, totals);
}

/// A kernel that counts the nonzeros it writes for an event-driven layer
/// (spec.countsOutput): the threads past the layer count zero, then every
/// thread of the block takes part in the count's warp sums and the last
/// block writes the decision (its last two arguments).
static void buildCountingThread(OpBuilder &b, Location loc,
                                const NeuronSpec &spec, KernelKind kind,
                                int64_t blockSize, Value thread, Value lane,
                                ValueRange args) {
  ValueRange tensors = args.drop_back(2);
  Value count;
  if (spec.getNumThreads() % blockSize == 0) {
    buildNeuronThread(b, loc, spec, kind, thread, tensors, &count);
  } else {
    Value inRange = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ult, thread,
        arith::ConstantIndexOp::create(b, loc, spec.getNumThreads()));
    auto guardIf = scf::IfOp::create(b, loc, TypeRange{b.getI32Type()},
                                     inRange, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(guardIf.thenBlock());
      Value inside;
      buildNeuronThread(b, loc, spec, kind, thread, tensors, &inside);
      scf::YieldOp::create(b, loc, inside);
      b.setInsertionPointToStart(guardIf.elseBlock());
      scf::YieldOp::create(
          b, loc, ValueRange{arith::ConstantIntOp::create(b, loc, 0, 32)});
    }
    count = guardIf.getResult(0);
  }
  emitGPUCountDecision(b, loc, count, lane,
                       llvm::divideCeilSigned(spec.getNumThreads(), blockSize),
                       args[args.size() - 2], args.back());
}

static gpu::GPUFuncOp buildKernel(OpBuilder &b, Location loc, StringRef name,
                                  const NeuronSpec &spec, KernelKind kind,
                                  int64_t blockSize) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Type> argTypes = getKernelArgTypes(spec, kind, ctx);
  // The tree of the batch norm backward's sums: two f64 a thread.
  bool sums = kind == KernelKind::Backward && spec.fusesBatchNormBackward();
  SmallVector<Type, 1> shared;
  if (sums)
    shared.push_back(MemRefType::get(
        {2 * blockSize}, b.getF64Type(), MemRefLayoutAttrInterface(),
        gpu::AddressSpaceAttr::get(
            ctx, gpu::GPUDialect::getWorkgroupAddressSpace())));
  auto kernel = gpu::GPUFuncOp::create(
      b, loc, name, FunctionType::get(ctx, argTypes, {}), shared);
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  kernel.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({static_cast<int32_t>(blockSize), 1, 1}));
  // Every tensor is a distinct buffer (the runtime never aliases them).
  for (unsigned i = 0, e = argTypes.size(); i < e; ++i)
    kernel.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                      b.getUnitAttr());

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&kernel.front());
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value lane = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value first = arith::MulIOp::create(
      b, loc, block, arith::ConstantIndexOp::create(b, loc, blockSize));
  Value thread = arith::AddIOp::create(b, loc, first, lane);
  ValueRange args = kernel.getArguments().take_front(argTypes.size());
  if (sums) {
    buildBatchNormBackwardThread(b, loc, args,
                                 kernel.getWorkgroupAttributions().front(),
                                 spec, blockSize, thread, lane);
    gpu::ReturnOp::create(b, loc);
    return kernel;
  }
  if (spec.countsOutput(kind)) {
    buildCountingThread(b, loc, spec, kind, blockSize, thread, lane, args);
  } else if (spec.getNumThreads() % blockSize == 0) {
    buildNeuronThread(b, loc, spec, kind, thread, args);
  } else {
    Value inRange = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ult, thread,
        arith::ConstantIndexOp::create(b, loc, spec.getNumThreads()));
    auto guardIf = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
    b.setInsertionPointToStart(guardIf.thenBlock());
    buildNeuronThread(b, loc, spec, kind, thread, args);
    b.setInsertionPointAfter(guardIf);
  }
  gpu::ReturnOp::create(b, loc);
  return kernel;
}

FailureOr<std::vector<NeuronOpKernels>>
kernelgen::buildGPUKernels(gpu::GPUModuleOp gpuModule, func::FuncOp func,
                        ArrayRef<KernelKind> kinds, int64_t blockSize,
                        bool perLayerBlocks, const NeuronStorage &storage,
                        unsigned &numSkipped) {
  SymbolTable symbols(gpuModule);
  OpBuilder b = OpBuilder::atBlockEnd(gpuModule.getBody());
  std::vector<NeuronOpKernels> result;
  bool failed = false;
  int64_t defaultBlockSize = blockSize;
  numSkipped = forEachKernelOp(func, [&](Operation *op, unsigned index,
                                         const NeuronSpec &spec) {
    int64_t blockSize = perLayerBlocks ? spec.getBlockSize(defaultBlockSize)
                                       : defaultBlockSize;
    NeuronOpKernels kernels{
        op, spec, {},
        llvm::divideCeilSigned(spec.getNumThreads(), blockSize),
        llvm::divideCeilSigned(spec.getNumBackwardThreads(), blockSize),
        blockSize};
    for (KernelKind kind : kinds) {
      if (!spec.hasKernel(kind))
        continue;
      std::string name = getKernelName(func.getSymName(), index, spec, kind);
      if (spec.sharesKernels) {
        kernels.names.emplace_back(kind, name);
        continue;
      }
      if (symbols.lookup(name)) {
        op->emitError() << "gpu.module @" << gpuModule.getSymName()
                        << " already has a kernel named '" << name
                        << "'; generate the neuron kernels once per module";
        failed = true;
        return;
      }
      // A run of the batch norm backward's sums lies in one block.
      if (kind == KernelKind::Backward && spec.fusesBatchNormBackward() &&
          (blockSize % spec.bnSegment != 0 ||
           !llvm::isPowerOf2_64(blockSize))) {
        op->emitError() << "a layer whose neuron backward computes its "
                           "batch norm backward's sums needs a power-of-two "
                           "block size that is a multiple of "
                        << spec.bnSegment << ", not " << blockSize;
        failed = true;
        return;
      }
      gpu::GPUFuncOp kernel =
          buildKernel(b, op->getLoc(), name, spec, kind, blockSize);
      symbols.insert(kernel);
      kernels.names.emplace_back(kind, name);
    }
    result.push_back(std::move(kernels));
  }, storage);
  if (failed)
    return failure();
  return result;
}

namespace {
struct SNNNeuronToGPUPass
    : public snn::impl::SNNNeuronToGPUBase<SNNNeuronToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (blockSize <= 0 || blockSize > 1024 || blockSize % 32 != 0) {
      module.emitError() << "--snn-neuron-to-gpu: block-size="
                         << static_cast<int64_t>(blockSize)
                         << " is not a multiple of 32 in [32, 1024]";
      return signalPassFailure();
    }
    FailureOr<NeuronStorage> storage =
        parseNeuronStorage(module, hDType, spikeBits, recomputeChunk);
    if (failed(storage))
      return signalPassFailure();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    bool any = false;
    for (func::FuncOp func : funcs) {
      if (failed(checkStorageSupported(func, *storage)))
        return signalPassFailure();
      forEachKernelOp(func, [&](Operation *, unsigned, const NeuronSpec &) {
        any = true;
      });
    }
    if (!any)
      return;

    MLIRContext *ctx = module.getContext();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>("snn_kernels");
    if (!gpuModule) {
      OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
      gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), "snn_kernels");
    }
    SmallVector<KernelKind> kinds = getKernelKinds(saveH, backward);
    for (func::FuncOp func : funcs) {
      unsigned skipped = 0;
      FailureOr<std::vector<NeuronOpKernels>> built =
          buildGPUKernels(gpuModule, func, kinds, blockSize,
                          /*perLayerBlocks=*/false, *storage,
                          skipped);
      if (failed(built))
        return signalPassFailure();
      numKernels += built->size() * kinds.size();
      numSkipped += skipped;
    }
    if (failed(expandMathOps(gpuModule)))
      return signalPassFailure();
  }
};
} // namespace
