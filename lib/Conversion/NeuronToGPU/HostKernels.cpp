//===- HostKernels.cpp - the neuron kernels compiled for the CPU ----------===//
//
// The CPU path of the neuron layers: the per-thread code of the GPU kernels,
// looped over the threads (as --snn-neuron-to-host does) with the steps
// outside blocks of threads (HostStepInterchange.cpp), lowered to LLVM with
// a thread's W = 8 lanes (4 on the GPU) as vector instructions (a pooled or
// batch-normed layer keeps the GPU's threads), optimized at O3 for the
// machine's architecture and linked into a shared library that the runtime
// loads with dlopen: the runtime needs no LLVM. On x86-64 the code is for
// x86-64-v3 (AVX2 and FMA: the fused multiply-adds of exp's approximation
// are single instructions, as on the GPU) when the compiling machine has it,
// else for the baseline; the runtime checks the level before it loads.
//
// Each kernel `name` is exported as `void name(void **args, int64_t begin,
// int64_t end)`, args[i] being the i-th tensor of the kernel ABI
// (docs/artifact-format.md), running its work items [begin, end), with
// `int64_t name_range[2]` = {items, grain} (HostKernelRange.h); the function
// with one argument per tensor stays internal. One entry point of one
// signature lets the runtime call every kernel through one function type and
// spread its items over threads.
//
//===----------------------------------------------------------------------===//

#include "NeuronKernelBuilder.h"
#include "snn/Conversion/NeuronToGPU/HostKernelRange.h"
#include "snn/Conversion/NeuronToGPU/NeuronToGPU.h"
#include "snn/Conversion/NeuronToGPU/OpKernels.h"
#include "snn/Conversion/NeuronToGPU/SparseKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mlir::snn;
using namespace mlir::snn::kernelgen;

/// Work worth a CPU thread of its own: about 16k neuron steps (tens of
/// microseconds), against the few microseconds of waking a thread.
static constexpr int64_t kNeuronStepsPerThread = 16384;

/// Neurons per work item of a plain layer: one AVX2 vector.
static constexpr int64_t kHostLanes = 8;
/// Neurons of a block of work items that take each step together
/// (interchangeHostSteps): 4 KiB of each tensor per step, read in order.
static constexpr int64_t kHostBlockNeurons = 1024;

/// The backward of a layer that computes its batch norm backward's sums: a
/// work item per run of spec.bnSegment thread slots, which runs them one
/// after the other into a buffer (idle slots: zeros) and adds their sums
/// with the GPU block's tree (the same bits), then stores the run's partial
/// sums.
static func::FuncOp buildBatchNormBackwardHostKernel(OpBuilder &b,
                                                     Location loc,
                                                     StringRef name,
                                                     const NeuronSpec &spec,
                                                     int64_t threadGrain) {
  int64_t segment = spec.bnSegment;
  int64_t runs = spec.getNumBatchNormSlots() / segment;
  func::FuncOp fn = createRangedHostFunc(
      b, loc, name,
      getKernelArgTypes(spec, KernelKind::Backward, b.getContext()), runs,
      llvm::divideCeilSigned(threadGrain, segment));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&fn.front());
  auto idx = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  ValueRange args = getHostTensorArgs(fn);
  // Sum k of thread j at k * segment + j; outside the loop, so that the
  // stack does not grow with the items.
  Value buffer = memref::AllocaOp::create(
      b, loc, MemRefType::get({2 * segment}, b.getF64Type()));
  {
    OpBuilder::InsertionGuard inner(b);
    scf::ForOp items = createHostRangeLoop(b, loc, fn, 0, runs);
    Value run = items.getInductionVar();
    scf::ForOp::create(
        b, loc, idx(0), idx(segment), idx(1), ValueRange{},
        [&](OpBuilder &, Location, Value j, ValueRange) {
          Value slot = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, run, idx(segment)), j);
          SmallVector<Value, 2> sums =
              buildBatchNormBackwardSlot(b, loc, spec, slot, args);
          for (auto [k, sum] : llvm::enumerate(sums))
            memref::StoreOp::create(
                b, loc, sum, buffer,
                ValueRange{arith::AddIOp::create(b, loc, j,
                                                 idx(int64_t(k) * segment))});
          scf::YieldOp::create(b, loc);
        });
    for (int64_t stride = segment / 2; stride >= 1; stride /= 2)
      scf::ForOp::create(
          b, loc, idx(0), idx(stride), idx(1), ValueRange{},
          [&](OpBuilder &, Location, Value j, ValueRange) {
            for (int64_t k = 0; k < 2; ++k) {
              Value at = arith::AddIOp::create(b, loc, j, idx(k * segment));
              Value other = arith::AddIOp::create(b, loc, at, idx(stride));
              Value mine =
                  memref::LoadOp::create(b, loc, buffer, ValueRange{at});
              Value theirs =
                  memref::LoadOp::create(b, loc, buffer, ValueRange{other});
              memref::StoreOp::create(
                  b, loc, arith::AddFOp::create(b, loc, mine, theirs), buffer,
                  ValueRange{at});
            }
            scf::YieldOp::create(b, loc);
          });
    SmallVector<Value, 2> totals{
        memref::LoadOp::create(b, loc, buffer, ValueRange{idx(0)}),
        memref::LoadOp::create(b, loc, buffer, ValueRange{idx(segment)})};
    storeBatchNormPartials(b, loc, spec, args, run, totals);
  }
  func::ReturnOp::create(b, loc);
  return fn;
}

/// A test hook: the host kernels run the per-thread code of the GPU kernels
/// (4 lanes, inputs loaded ahead, pipelined scans) instead of the host's,
/// so that CPU tests check the code paths that otherwise only a GPU runs.
static llvm::cl::opt<bool> clHostGpuThreadCode(
    "snn-host-gpu-thread-code",
    llvm::cl::desc("Build the host neuron kernels from the GPU kernels' "
                   "per-thread code (testing)"),
    llvm::cl::init(false));

func::FuncOp kernelgen::buildHostKernel(OpBuilder &b, Location loc,
                                        StringRef name,
                                        const NeuronSpec &layerSpec,
                                        KernelKind kind) {
  MLIRContext *ctx = b.getContext();
  NeuronSpec spec = layerSpec;
  // Layers that write row bits or count their output keep the host's code:
  // their GPU forms combine lanes across threads (shuffles).
  spec.host = !clHostGpuThreadCode || spec.rowSpikeBits || spec.gradRowBits ||
              spec.countsSpikes || spec.countsGrad;
  if (spec.host && !spec.pool && !spec.bn && !spec.learnsLeak())
    spec.lanes = kHostLanes;
  int64_t threads = spec.getNumThreads();
  int64_t stepsPerThread = spec.numSteps * spec.getWidth();
  int64_t grain = llvm::divideCeilSigned(kNeuronStepsPerThread, stepsPerThread);
  // plif's backward adds every neuron's share of the weight gradient into
  // one sum: on one CPU thread, in item order, so the bits do not depend on
  // the thread count.
  if (kind == KernelKind::Backward && spec.plifWeightSize > 0)
    grain = std::max<int64_t>(grain, threads);
  if (kind == KernelKind::Backward && spec.fusesBatchNormBackward())
    return buildBatchNormBackwardHostKernel(b, loc, name, spec, grain);
  func::FuncOp fn = createRangedHostFunc(
      b, loc, name, getKernelArgTypes(spec, kind, ctx), threads, grain);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&fn.front());
  int64_t blockItems =
      std::max<int64_t>(kHostBlockNeurons / spec.getWidth(), 1);
  // Not the inference forward of a few steps: its T strided streams of x
  // and s are few enough for the prefetchers, and the state buffer's round
  // trips cost more than they save (T = 4: 4.4 -> 4.6 ms per call).
  bool interchangeSteps = kind != KernelKind::Forward || spec.numSteps > 4;
  // The grid's threads [begin, end), one after the other.
  if (spec.countsOutput(kind)) {
    // The range's count, then the decision (its last two arguments).
    ValueRange args = getHostTensorArgs(fn);
    auto [first, last] = getHostRangeBounds(b, loc, fn, 0, threads);
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
    auto loop = scf::ForOp::create(
        b, loc, first, last, arith::ConstantIndexOp::create(b, loc, 1),
        ValueRange{zero});
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(loop.getBody());
      Value count;
      buildNeuronThread(b, loc, spec, kind, loop.getInductionVar(),
                        args.drop_back(2), &count);
      scf::YieldOp::create(
          b, loc,
          ValueRange{arith::AddIOp::create(b, loc, loop.getRegionIterArg(0),
                                           count)});
    }
    Value total = loop.getResult(0);
    if (interchangeSteps)
      if (FailureOr<scf::ForOp> blocks = interchangeHostSteps(loop, blockItems);
          succeeded(blocks))
        total = blocks->getResult(0);
    Value items = arith::IndexCastOp::create(
        b, loc, b.getI32Type(), arith::SubIOp::create(b, loc, last, first));
    emitHostCountDecision(b, loc, total, items, threads,
                          args[args.size() - 2], args.back());
  } else {
    scf::ForOp loop;
    {
      OpBuilder::InsertionGuard inner(b);
      loop = createHostRangeLoop(b, loc, fn, 0, threads);
      buildNeuronThread(b, loc, spec, kind, loop.getInductionVar(),
                        getHostTensorArgs(fn));
    }
    if (interchangeSteps)
      (void)interchangeHostSteps(loop, blockItems);
  }
  func::ReturnOp::create(b, loc);
  return fn;
}

/// A kernel's work items and the fewest worth a CPU thread (HostKernelRange.h).
using HostRanges = llvm::StringMap<std::pair<int64_t, int64_t>>;

/// Renames every kernel `name` of the lowered module to an internal
/// `name_args` and adds the exported `void name(void **args, int64_t begin,
/// int64_t end)` that calls it, and the exported constant `int64_t
/// name_range[2]` = {items, grain}.
static void addPackedEntryPoints(ModuleOp module, ArrayRef<std::string> names,
                                 const HostRanges &ranges) {
  MLIRContext *ctx = module.getContext();
  SymbolTable symbols(module);
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i64 = IntegerType::get(ctx, 64);
  for (const std::string &name : names) {
    auto impl = symbols.lookup<LLVM::LLVMFuncOp>(name);
    if (!impl)
      continue;
    if (failed(symbols.rename(impl, name + "_args")))
      continue;
    impl.setLinkage(LLVM::Linkage::Internal);
    Location loc = impl.getLoc();
    auto entry = LLVM::LLVMFuncOp::create(
        b, loc, name,
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                    {ptr, i64, i64}));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(entry.addEntryBlock(b));
      Value args = entry.getArgument(0);
      SmallVector<Value> operands;
      // The tensors, then begin and end.
      for (unsigned i = 0, e = impl.getNumArguments() - 2; i < e; ++i) {
        Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, args,
                                         ArrayRef<LLVM::GEPArg>{int32_t(i)});
        operands.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
      }
      operands.push_back(entry.getArgument(1));
      operands.push_back(entry.getArgument(2));
      LLVM::CallOp::create(b, loc, impl, operands);
      LLVM::ReturnOp::create(b, loc, ValueRange{});
    }
    auto [items, grain] = ranges.lookup(name);
    auto arrayType = LLVM::LLVMArrayType::get(i64, 2);
    LLVM::GlobalOp::create(
        b, loc, arrayType, /*isConstant=*/true, LLVM::Linkage::External,
        name + "_range",
        DenseElementsAttr::get(RankedTensorType::get({2}, i64),
                               ArrayRef<int64_t>{items, grain}));
  }
}

/// The CPU level to compile for: "x86-64-v3" on an x86-64 machine with AVX2
/// and FMA, else the architecture's baseline ("").
static std::string getHostCPULevel(const llvm::Triple &triple) {
  if (triple.getArch() != llvm::Triple::x86_64)
    return "";
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  for (const char *feature :
       {"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe"})
    if (!features.lookup(feature))
      return "";
  return "x86-64-v3";
}

/// Translates the LLVM-dialect `module` to an ELF object for `cpu` of the
/// machine's architecture, position independent, optimized at O3.
static FailureOr<SmallVector<char, 0>>
emitObject(ModuleOp module, const llvm::Triple &triple, StringRef cpu) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError() << "no LLVM target for the CPU kernels ("
                              << triple.str() << "): " << error;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, /*Features=*/"", llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return module.emitError()
           << "cannot create an LLVM target machine for " << triple.str();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "snn_host_kernels");
  if (!llvmModule)
    return module.emitError() << "cannot translate the CPU kernels to LLVM IR";
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());
  if (llvm::Error err = makeOptimizingTransformer(
          /*optLevel=*/3, /*sizeLevel=*/0, machine.get())(llvmModule.get()))
    return module.emitError() << "LLVM optimization of the CPU kernels failed: "
                              << llvm::toString(std::move(err));

  SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return module.emitError()
           << "LLVM cannot emit an object file for " << triple.str();
  codegen.run(*llvmModule);
  return object;
}

/// The linker that makes the shared library: GNU ld, else LLVM's.
static std::string findLinker() {
  for (const char *name : {"ld", "ld.lld", "ld.lld-22"})
    if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name))
      return *path;
  return "";
}

/// Links `object` into a shared library (no C library: the kernels call
/// nothing) and returns its bytes.
static FailureOr<std::string> linkSharedLibrary(ModuleOp module,
                                                ArrayRef<char> object) {
  std::string linker = findLinker();
  if (linker.empty())
    return module.emitError()
           << "the CPU neuron kernels need a linker to become a shared "
              "library: install binutils (ld) or lld, or compile with "
              "target=cuda (no CPU kernels: the module then runs on GPUs "
              "only)";
  SmallString<128> objectPath, libraryPath;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "snn-host-kernels", "o", fd, objectPath))
    return module.emitError()
           << "cannot create a temporary file: " << ec.message();
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(object.data(), object.size());
  }
  llvm::FileRemover removeObject(objectPath);
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "snn-host-kernels", "so", libraryPath))
    return module.emitError()
           << "cannot create a temporary file: " << ec.message();
  llvm::FileRemover removeLibrary(libraryPath);

  SmallVector<StringRef> args{linker, "-shared",   "-z",      "noexecstack",
                              "-o",   libraryPath, objectPath};
  std::string message;
  int rc =
      llvm::sys::ExecuteAndWait(linker, args, std::nullopt, {}, 0, 0, &message);
  if (rc != 0)
    return module.emitError() << "linking the CPU neuron kernels with "
                              << linker << " failed (exit " << rc << ")"
                              << (message.empty() ? "" : ": ") << message;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> library =
      llvm::MemoryBuffer::getFile(libraryPath);
  if (!library)
    return module.emitError() << "cannot read the linked CPU kernels: "
                              << library.getError().message();
  return (*library)->getBuffer().str();
}

FailureOr<HostKernelLibrary>
snn::generateHostNeuronKernels(func::FuncOp func, int64_t recomputeChunk,
                               ArrayRef<NamedOpKernel> opKernels,
                               bool bf16H) {
  MLIRContext *ctx = func->getContext();
  DialectRegistry registry;
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadDialect<arith::ArithDialect, func::FuncDialect, LLVM::LLVMDialect,
                   math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                   vector::VectorDialect>();

  Location loc = func.getLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder b = OpBuilder::atBlockEnd(module->getBody());
  HostKernelLibrary library;
  std::vector<std::string> names;
  const KernelKind kinds[] = {KernelKind::ForwardSaveH, KernelKind::Forward,
                              KernelKind::Backward, KernelKind::ForwardRecord};
  NeuronStorage storage;
  storage.recomputeChunk = recomputeChunk;
  storage.bf16HInF32 = bf16H;
  forEachKernelOp(
      func,
      [&](Operation *op, unsigned index, const NeuronSpec &spec) {
        NeuronKernel kernel;
        kernel.blockSize = kNeuronKernelBlockSize;
        kernel.gridSize = llvm::divideCeilSigned(spec.getNumThreads(),
                                                 kNeuronKernelBlockSize);
        kernel.bwdGridSize = llvm::divideCeilSigned(
            spec.getNumBackwardThreads(), kNeuronKernelBlockSize);
        for (KernelKind kind : kinds) {
          if (!spec.hasKernel(kind))
            continue;
          std::string name =
              getKernelName(func.getSymName(), index, spec, kind);
          if (!spec.sharesKernels) {
            buildHostKernel(b, op->getLoc(), name, spec, kind);
            names.push_back(name);
          }
          (kind == KernelKind::ForwardSaveH    ? kernel.fwdName
           : kind == KernelKind::Forward       ? kernel.fwdInferName
           : kind == KernelKind::ForwardRecord ? kernel.fwdRecordName
                                               : kernel.bwdName) = name;
        }
        library.kernels[op] = std::move(kernel);
      },
      storage);
  for (const NamedOpKernel &kernel : opKernels) {
    buildOpHostKernel(b, loc, kernel.name, kernel.spec);
    names.push_back(kernel.name);
  }
  if (names.empty())
    return library;

  HostRanges ranges;
  for (auto fn : module->getOps<func::FuncOp>())
    ranges[fn.getSymName()] = getHostRange(fn);

  PassManager pm(ctx);
  if (failed(expandMathOps(*module)) ||
      failed(expandBF16Conversions(*module)) ||
      failed(parsePassPipeline(
          "convert-scf-to-cf,convert-vector-to-llvm,convert-math-to-llvm,"
          "expand-strided-metadata,finalize-memref-to-llvm,"
          "convert-arith-to-llvm,convert-cf-to-llvm,"
          "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
          "reconcile-unrealized-casts",
          pm, llvm::errs())) ||
      failed(pm.run(*module)))
    return func.emitError() << "failed to lower the CPU neuron kernels to LLVM";
  addPackedEntryPoints(*module, names, ranges);

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string cpu = getHostCPULevel(triple);
  FailureOr<SmallVector<char, 0>> object = emitObject(*module, triple, cpu);
  if (failed(object))
    return failure();
  FailureOr<std::string> shared = linkSharedLibrary(*module, *object);
  if (failed(shared))
    return failure();
  library.sharedLibrary = std::move(*shared);
  library.triple = triple.str();
  library.cpu = cpu;
  return library;
}
