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

LogicalResult mlir::snn::generateModuleKernels(
    ArrayRef<func::FuncOp> funcs, ArrayRef<std::string> chips, int64_t batch,
    bool savedHBf16, NeuronKernelMap &kernels, std::map<std::string, std::string> &blobs) {
  assert(!funcs.empty() && "no entry point");
#ifndef SNN_HAVE_NEURON_TO_GPU
  (void)chips;
  (void)batch;
  (void)savedHBf16;
  (void)kernels;
  (void)blobs;
  func::FuncOp first = funcs.front();
  return first.emitError()
         << "this snn-opt was built without the neuron kernel generator "
            "(lib/Conversion/NeuronToGPU); compile with target=cpu";
#else
  func::FuncOp first = funcs.front();
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
        argTypes.push_back(withBatch(operand.getType(), batch));
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
      state.addTypes(withBatch(type, batch));
    state.addAttributes(op->getAttrs());
    originalOf[b.create(state)] = op;
  }
  func::ReturnOp::create(b, loc);

  NeuronStorage storage;
  storage.bf16H = savedHBf16;
  FailureOr<NeuronKernelBundle> bundle =
      generateNeuronKernels(kernelFunc, chips, /*emitBinary=*/true, storage);
  if (failed(bundle))
    return failure();
  for (auto &[copy, kernel] : bundle->kernels) {
    NeuronKernelRef ref;
    ref.fwd = kernel.fwdName;
    ref.fwdInfer = kernel.fwdInferName;
    ref.bwd = kernel.bwdName;
    ref.block = kernel.blockSize;
    ref.grid = kernel.gridSize;
    ref.hDType = savedHBf16 ? "bf16" : "f32";
    kernels[originalOf.lookup(copy)] = std::move(ref);
  }
  for (const auto &blob : bundle->blobs)
    blobs[blob.getKey().str()] = blob.getValue();
  // A manifest that names kernels must ship them.
  if (!bundle->kernels.empty() && !blobs.count("ptx"))
    return first.emitError()
           << "the neuron kernel generator returned no PTX for "
           << bundle->kernels.size()
           << " neuron layer(s); compile with target=cpu to leave the "
              "neuron layers to the runtime's built-in kernels";
  return success();
#endif
}
