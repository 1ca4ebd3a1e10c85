//===- NeuronKernels.cpp - neuron kernels of a compiled module ------------===//
//
// The kernel generator works on one function. The neuron ops of every entry
// point are copied into one scratch function (with the batch size filled in)
// so that one cubin holds the kernels of the inference and the training
// programs, with distinct names.
//
//===----------------------------------------------------------------------===//

#include "NeuronKernels.h"

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

/// Records the names of `bundle` under the original ops.
static void addKernelRefs(
    const llvm::DenseMap<Operation *, NeuronKernel> &bundle,
    const DenseMap<Operation *, Operation *> &originalOf, StringRef hDType,
    NeuronKernelMap &kernels) {
  for (auto &[copy, kernel] : bundle) {
    NeuronKernelRef ref;
    ref.fwd = kernel.fwdName;
    ref.fwdInfer = kernel.fwdInferName;
    ref.fwdRecord = kernel.fwdRecordName;
    ref.bwd = kernel.bwdName;
    ref.block = kernel.blockSize;
    ref.grid = kernel.gridSize;
    ref.hDType = hDType.str();
    kernels[originalOf.lookup(copy)] = std::move(ref);
  }
}

LogicalResult mlir::snn::generateModuleKernels(
    ArrayRef<func::FuncOp> funcs, const ModuleKernelOptions &options,
    NeuronKernelMap &kernels, std::map<std::string, std::string> &files) {
  assert(!funcs.empty() && "no entry point");
  func::FuncOp first = funcs.front();
#ifndef SNN_HAVE_NEURON_TO_GPU
  (void)options;
  (void)kernels;
  (void)files;
  return first.emitError()
         << "this snn-opt was built without the neuron kernel generator "
            "(lib/Conversion/NeuronToGPU); compile with target=cpu "
            "host-kernels=false";
#else
  MLIRContext *ctx = first.getContext();
  Location loc = first.getLoc();
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(loc);
  OpBuilder b = OpBuilder::atBlockEnd(scratch->getBody());
  SmallVector<Operation *> originals;
  SmallVector<Type> argTypes;
  for (func::FuncOp func : funcs)
    func.walk([&](NeuronOpInterface op) {
      // Step ops inside a recurrent time loop run the runtime's built-in
      // one-step kernel.
      if (op.isStepForm())
        return;
      originals.push_back(op);
      for (Value operand : op->getOperands())
        argTypes.push_back(withBatch(operand.getType(), options.batch));
    });
  if (originals.empty())
    return success();

  auto kernelFunc = func::FuncOp::create(b, loc, "kernels",
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
    originalOf[b.create(state)] = op;
  }
  func::ReturnOp::create(b, loc);

  // Both sets of kernels come from the same function: same names per op.
  if (options.host && !options.savedHBf16) {
    FailureOr<HostKernelLibrary> library =
        generateHostNeuronKernels(kernelFunc, options.recomputeChunk);
    if (failed(library))
      return failure();
    addKernelRefs(library->kernels, originalOf, "f32", kernels);
    if (!library->kernels.empty()) {
      files["host"] = std::move(library->sharedLibrary);
      files["host_triple"] = library->triple;
      if (!library->cpu.empty())
        files["host_cpu"] = library->cpu;
    }
  }
  if (!options.cuda)
    return success();
  NeuronStorage storage;
  storage.bf16H = options.savedHBf16;
  storage.recomputeChunk = options.recomputeChunk;
  FailureOr<NeuronKernelBundle> bundle = generateNeuronKernels(
      kernelFunc, options.chips, /*emitBinary=*/true, storage);
  if (failed(bundle))
    return failure();
  addKernelRefs(bundle->kernels, originalOf,
                options.savedHBf16 ? "bf16" : "f32", kernels);
  for (const auto &blob : bundle->blobs)
    files[blob.getKey().str()] = blob.getValue();
  // A manifest that names kernels must ship them.
  if (!bundle->kernels.empty() && !files.count("ptx"))
    return first.emitError()
           << "the neuron kernel generator returned no PTX for "
           << bundle->kernels.size()
           << " neuron layer(s); compile with target=cpu to leave the "
              "neuron layers to the runtime's built-in kernels";
  return success();
#endif
}
