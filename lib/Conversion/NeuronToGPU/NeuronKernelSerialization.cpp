//===- NeuronKernelSerialization.cpp - neuron kernels to PTX and cubin ----===//
//
// generateNeuronKernels: builds the kernels of a function in a scratch module,
// lowers them to NVVM with bare-pointer arguments, and serializes them with
// gpu-module-to-binary (PTX in-process; cubin through ptxas).
//
//===----------------------------------------------------------------------===//

#include "snn/Conversion/NeuronToGPU/NeuronToGPU.h"
#include "NeuronKernelBuilder.h"
#include "snn/Conversion/NeuronToGPU/OpKernels.h"

#include "mlir/IR/SymbolTable.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::snn;
using namespace mlir::snn::kernelgen;

static constexpr int64_t kBlockSize = kNeuronKernelBlockSize;

/// Parses "sm_XY" into XY.
static std::optional<unsigned> parseChip(StringRef chip) {
  unsigned sm = 0;
  if (!chip.consume_front("sm_") || chip.getAsInteger(10, sm) || sm < 50)
    return std::nullopt;
  return sm;
}

/// The CUDA toolkit whose ptxas serializes cubins, or "" when none is found.
static std::string findCudaToolkit() {
  for (const char *var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"}) {
    if (const char *dir = std::getenv(var)) {
      llvm::SmallString<128> ptxas(dir);
      llvm::sys::path::append(ptxas, "bin", "ptxas");
      if (llvm::sys::fs::can_execute(ptxas))
        return dir;
    }
  }
  if (llvm::ErrorOr<std::string> ptxas = llvm::sys::findProgramByName("ptxas"))
    return llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
        .str();
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return "/usr/local/cuda";
  return "";
}

/// Runs `pipeline` (passes on builtin.module, no anchor) on `module`;
/// diagnostics go to the context's handler.
static LogicalResult runPipeline(ModuleOp module, StringRef pipeline) {
  PassManager pm(module.getContext());
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    return failure();
  return pm.run(module);
}

/// Serializes the lowered `module` for `chips` in `format` (isa or bin) and
/// stores each object in `blobs` under `key(chip)`.
static LogicalResult
serialize(ModuleOp lowered, ArrayRef<std::string> chips, StringRef format,
          StringRef toolkit, function_ref<std::string(StringRef)> key,
          llvm::StringMap<std::string> &blobs) {
  OwningOpRef<ModuleOp> module = lowered.clone();
  MLIRContext *ctx = module->getContext();
  SmallVector<Attribute> targets;
  for (const std::string &chip : chips)
    targets.push_back(NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3,
                                                "nvptx64-nvidia-cuda", chip));
  module->walk([&](gpu::GPUModuleOp gpuModule) {
    gpuModule.setTargetsAttr(ArrayAttr::get(ctx, targets));
  });
  std::string pipeline =
      ("gpu-module-to-binary{format=" + format +
       (toolkit.empty() ? "" : " toolkit=" + toolkit) + "}")
          .str();
  if (failed(runPipeline(*module, pipeline)))
    return failure();
  module->walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      auto target = cast<NVVM::NVVMTargetAttr>(object.getTarget());
      blobs[key(target.getChip())] = object.getObject().getValue().str();
    }
  });
  return success();
}

FailureOr<NeuronKernelBundle>
snn::generateNeuronKernels(func::FuncOp func, ArrayRef<std::string> chips,
                           bool emitBinary, const NeuronStorage &storage,
                           ArrayRef<NamedOpKernel> opKernels) {
  if (chips.empty())
    return func.emitError()
           << "no GPU architecture to compile the neuron kernels for; give "
              "chips such as sm_80, sm_90";
  std::string oldest;
  unsigned oldestSM = ~0u;
  for (const std::string &chip : chips) {
    std::optional<unsigned> sm = parseChip(chip);
    if (!sm)
      return func.emitError()
             << "'" << chip
             << "' is not a CUDA architecture; write it as sm_XY, e.g. sm_90";
    if (*sm < oldestSM) {
      oldestSM = *sm;
      oldest = chip;
    }
  }

  // The NVVM target, the LLVM IR translations and the to-LLVM conversion
  // interfaces of the lowering, whatever the caller registered.
  MLIRContext *ctx = func->getContext();
  DialectRegistry registry;
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadDialect<arith::ArithDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                   math::MathDialect, memref::MemRefDialect,
                   NVVM::NVVMDialect, scf::SCFDialect, vector::VectorDialect>();

  Location loc = func.getLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  (*module)->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                     UnitAttr::get(ctx));
  OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
  auto gpuModule = gpu::GPUModuleOp::create(b, loc, "snn_kernels");
  b.setInsertionPointToEnd(gpuModule.getBody());
  SmallVector<KernelKind> kinds{KernelKind::ForwardSaveH, KernelKind::Forward,
                                KernelKind::Backward,
                                KernelKind::ForwardRecord};
  unsigned skipped = 0;
  FailureOr<std::vector<NeuronOpKernels>> built =
      buildGPUKernels(gpuModule, func, kinds, kBlockSize,
                      /*perLayerBlocks=*/true, storage, skipped);
  if (failed(built))
    return failure();

  NeuronKernelBundle bundle;
  for (const NeuronOpKernels &op : *built) {
    NeuronKernel kernel;
    kernel.blockSize = op.blockSize;
    kernel.gridSize = op.gridSize;
    kernel.bwdGridSize = op.bwdGridSize;
    for (const auto &[kind, name] : op.names) {
      if (kind == KernelKind::ForwardSaveH)
        kernel.fwdName = name;
      else if (kind == KernelKind::Forward)
        kernel.fwdInferName = name;
      else if (kind == KernelKind::ForwardRecord)
        kernel.fwdRecordName = name;
      else
        kernel.bwdName = name;
    }
    bundle.kernels[op.op] = std::move(kernel);
  }
  for (const NamedOpKernel &kernel : opKernels) {
    if (SymbolTable::lookupSymbolIn(gpuModule, kernel.name))
      return func.emitError() << "two kernels are named '" << kernel.name
                              << "'";
    buildOpGPUKernel(b, loc, kernel.name, kernel.spec);
  }
  if (built->empty() && opKernels.empty())
    return bundle;

  if (failed(expandMathOps(gpuModule)) ||
      failed(runPipeline(*module,
                         "convert-scf-to-cf,"
                         "gpu.module(convert-gpu-to-nvvm{"
                         "use-bare-ptr-memref-call-conv=1}),"
                         "reconcile-unrealized-casts")))
    return func.emitError() << "failed to lower the neuron kernels to NVVM";

  if (failed(serialize(*module, {oldest}, "isa", "",
                       [](StringRef) { return std::string("ptx"); },
                       bundle.blobs)))
    return func.emitError() << "failed to generate PTX for the neuron kernels";
  if (!emitBinary)
    return bundle;

  std::string toolkit = findCudaToolkit();
  if (toolkit.empty())
    return func.emitError()
           << "cubins for the neuron kernels need ptxas from the CUDA "
              "toolkit, which is not on PATH, in $CUDA_HOME/bin, "
              "$CUDA_PATH/bin or /usr/local/cuda/bin; install it or compile "
              "without binaries (PTX only)";
  if (failed(serialize(*module, chips, "bin", toolkit,
                       [](StringRef chip) { return chip.str(); },
                       bundle.blobs)))
    return func.emitError() << "ptxas (" << toolkit
                            << ") failed on the neuron kernels";
  return bundle;
}

std::string snn::getNeuronKernelUnsupportedReason(Operation *op) {
  std::string why;
  return getNeuronSpec(op, why) ? std::string() : why;
}

llvm::DenseMap<Operation *, NeuronKernel>
snn::getNeuronKernelNames(func::FuncOp func) {
  llvm::DenseMap<Operation *, NeuronKernel> kernels;
  forEachKernelOp(func, [&](Operation *op, unsigned index,
                            const NeuronSpec &spec) {
    NeuronKernel kernel;
    kernel.blockSize = spec.getBlockSize(kBlockSize);
    kernel.gridSize =
        llvm::divideCeilSigned(spec.getNumThreads(), kernel.blockSize);
    kernel.batchNormParts = spec.bnParts;
    kernel.bwdGridSize = llvm::divideCeilSigned(spec.getNumBackwardThreads(),
                                                kernel.blockSize);
    // Kinds a layer has no kernel of (a pooled layer's) keep an empty name.
    auto name = [&](KernelKind kind) {
      return spec.hasKernel(kind)
                 ? getKernelName(func.getSymName(), index, spec, kind)
                 : std::string();
    };
    kernel.fwdName = name(KernelKind::ForwardSaveH);
    kernel.fwdInferName = name(KernelKind::Forward);
    kernel.fwdRecordName = name(KernelKind::ForwardRecord);
    kernel.bwdName = name(KernelKind::Backward);
    kernels[op] = std::move(kernel);
  });
  return kernels;
}
