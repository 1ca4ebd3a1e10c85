//===- NeuronKernels.cpp - neuron kernels of a compiled module ------------===//
//
// The kernel generator works on one function. The neuron ops of every entry
// point are copied into one scratch function (with the batch size filled in)
// so that one cubin holds the kernels of the inference and the training
// programs, with distinct names.
//
//===----------------------------------------------------------------------===//

#include "NeuronKernels.h"
#include "NeuronSerialization.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#ifdef SNN_HAVE_NEURON_TO_GPU
#include "snn/Conversion/NeuronToGPU/NeuronToGPU.h"
#endif

using namespace mlir;
using namespace mlir::snn;

static Type withBatch(Type type, int64_t batch) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || ranked.hasStaticShape() || batch <= 0)
    return type;
  SmallVector<int64_t> shape(ranked.getShape());
  for (int64_t &d : shape)
    if (ShapedType::isDynamic(d))
      d = batch;
  return ranked.clone(shape);
}

ModuleKernels::ModuleKernels(ArrayRef<func::FuncOp> funcs,
                             const ModuleKernelOptions &options)
    : funcs(funcs), options(options) {}

ModuleKernels::~ModuleKernels() = default;

LogicalResult ModuleKernels::prepare(NeuronKernelMap &kernels) {
  assert(!funcs.empty() && "no entry point");
  func::FuncOp first = funcs.front();
  MLIRContext *ctx = first.getContext();
  Location loc = first.getLoc();
  scratch = ModuleOp::create(loc);
  OpBuilder b = OpBuilder::atBlockEnd(scratch->getBody());
  SmallVector<Operation *> originals;
  SmallVector<Type> argTypes;
  for (func::FuncOp func : funcs)
    func.walk([&](NeuronOpInterface op) {
      originals.push_back(op);
      for (Value operand : op->getOperands())
        argTypes.push_back(withBatch(operand.getType(), options.batch));
    });

  kernelFunc = func::FuncOp::create(b, loc, "kernels",
                                    FunctionType::get(ctx, argTypes, {}));
  Block *body = kernelFunc.addEntryBlock();
  b.setInsertionPointToStart(body);
  DenseMap<Operation *, Operation *> originalOf;
  unsigned nextArg = 0;
  for (Operation *op : originals) {
    OperationState state(op->getLoc(), op->getName());
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      state.addOperands(body->getArgument(nextArg++));
    for (Type type : op->getResultTypes())
      state.addTypes(withBatch(type, options.batch));
    state.addAttributes(op->getAttrs());
    Operation *copy = b.create(state);
#ifdef SNN_HAVE_NEURON_TO_GPU
    if (getFoldedStepAddend(op))
      copy->setAttr(kStepAddendAttrName, b.getUnitAttr());
    if (writesSpikeRowBits(op, options.rowBits))
      copy->setAttr(kSpikeRowBitsAttrName, b.getUnitAttr());
    if (writesGradRowBits(op, options.rowBits))
      copy->setAttr(kGradRowBitsAttrName, b.getUnitAttr());
#endif
    originalOf[copy] = op;
  }
  func::ReturnOp::create(b, loc);
  if (originals.empty())
    return success();
#ifndef SNN_HAVE_NEURON_TO_GPU
  (void)kernels;
  return first.emitError()
         << "this snn-opt was built without the kernel generator "
            "(lib/Conversion/NeuronToGPU)";
#else
  // The runtime runs a neuron layer only as its generated kernels.
  llvm::DenseMap<Operation *, NeuronKernel> names =
      getNeuronKernelNames(kernelFunc);
  for (Operation &copy : body->without_terminator())
    if (!names.count(&copy) && !unsupportedNeuron) {
      unsupportedNeuron = originalOf.lookup(&copy);
      unsupportedReason = getNeuronKernelUnsupportedReason(&copy);
    }
  // The GPU kernels and the CPU ones have the same names per op.
  for (auto &[copy, kernel] : names) {
    NeuronKernelRef ref;
    ref.fwd = kernel.fwdName;
    ref.fwdInfer = kernel.fwdInferName;
    ref.fwdRecord = kernel.fwdRecordName;
    ref.bwd = kernel.bwdName;
    ref.block = kernel.blockSize;
    ref.grid = kernel.gridSize;
    ref.batchNormParts = kernel.batchNormParts;
    ref.bwdGrid = kernel.bwdGridSize;
    ref.hDType = options.cuda && options.savedHBf16 ? "bf16" : "f32";
    kernels[originalOf.lookup(copy)] = std::move(ref);
    anyNeuronKernels = true;
  }
  return success();
#endif
}

LogicalResult
ModuleKernels::generate(const OpKernelRegistry &ops,
                        std::map<std::string, std::string> &files) {
  func::FuncOp first = funcs.front();
#ifndef SNN_HAVE_NEURON_TO_GPU
  (void)files;
  if (anyNeuronKernels || !ops.empty())
    return first.emitError()
           << "this snn-opt was built without the kernel generator "
              "(lib/Conversion/NeuronToGPU)";
  return success();
#else
  if (unsupportedNeuron)
    return unsupportedNeuron->emitError()
           << "snn-compile: the kernel generator cannot build this neuron "
              "layer's kernels ("
           << unsupportedReason
           << "), and the runtime runs neuron layers only as generated "
              "kernels";
  if (options.host && (anyNeuronKernels || !ops.empty())) {
    FailureOr<HostKernelLibrary> library = generateHostNeuronKernels(
        kernelFunc, options.recomputeChunk, ops.getKernels(),
        options.savedHBf16);
    if (failed(library))
      return failure();
    if (!library->sharedLibrary.empty()) {
      files["host"] = std::move(library->sharedLibrary);
      files["host_triple"] = library->triple;
      if (!library->cpu.empty())
        files["host_cpu"] = library->cpu;
    }
  }
  if (!options.cuda || (!anyNeuronKernels && ops.empty()))
    return success();
  NeuronStorage storage;
  storage.bf16H = options.savedHBf16;
  storage.recomputeChunk = options.recomputeChunk;
  FailureOr<NeuronKernelBundle> bundle =
      generateNeuronKernels(kernelFunc, options.chips, /*emitBinary=*/true,
                            storage, ops.getKernels());
  if (failed(bundle))
    return failure();
  for (const auto &blob : bundle->blobs)
    files[blob.getKey().str()] = blob.getValue();
  // A manifest that names kernels must ship them.
  if (!files.count("ptx"))
    return first.emitError()
           << "the kernel generator returned no PTX for "
           << bundle->kernels.size() << " neuron layer(s) and "
           << ops.getKernels().size()
           << " op kernel(s); compile with target=cpu";
  return success();
#endif
}
