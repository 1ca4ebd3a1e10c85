//===- ModuleEmitter.cpp - compiled module directory writer ---------------===//
//
// Checks that the entry points are in the multi-step form, generates the
// neuron kernels, builds the manifest and writes the directory atomically.
//
//===----------------------------------------------------------------------===//

#include "snn/Target/Module/ModuleEmitter.h"

#include "ManifestBuilder.h"
#include "ModuleDirectory.h"
#include "NeuronKernels.h"

#include "snn/Dialect/SNN/IR/SNNOps.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::snn;

std::optional<ModuleTarget> mlir::snn::parseModuleTarget(StringRef name) {
  return llvm::StringSwitch<std::optional<ModuleTarget>>(name)
      .Case("cpu", ModuleTarget::Cpu)
      .Case("cuda", ModuleTarget::Cuda)
      .Case("all", ModuleTarget::All)
      .Default(std::nullopt);
}

/// A time loop can be fused when its only state is neuron state: each
/// loop-carried value flows through the state operand of a step neuron op.
static Operation *findRecurrentUse(TimeLoopOp loop) {
  Block &body = loop.getBodyBlock();
  unsigned numInputs = loop.getInputs().size();
  for (BlockArgument state : body.getArguments().drop_front(numInputs)) {
    for (OpOperand &use : state.getUses()) {
      auto neuron = dyn_cast<NeuronOpInterface>(use.getOwner());
      // Operand 0 is the input current; the others are states or weights.
      if (!neuron || use.getOperandNumber() == 0)
        return use.getOwner();
    }
  }
  return nullptr;
}

/// A step neuron's next state that the loop returns per step or after the
/// last step (a membrane or synaptic current as a model output): the
/// multi-step neuron ops return only their output, so temporal fusion keeps
/// such a neuron in the loop.
static Operation *findStateOutput(TimeLoopOp loop) {
  Block &body = loop.getBodyBlock();
  unsigned numOutputs = loop.getNumStepOutputs();
  for (auto [index, value] : llvm::enumerate(loop.getYield().getValues())) {
    auto neuron = value.getDefiningOp<NeuronOpInterface>();
    if (!neuron || !neuron.isStepForm() || neuron->getBlock() != &body)
      continue;
    unsigned firstState = neuron->getNumResults() - neuron.getNumStates();
    bool isState = cast<OpResult>(value).getResultNumber() >= firstState;
    // A leaky integrator's output is its membrane: fusion handles that.
    bool perStep = index < numOutputs && !isa<LIStepOp>(neuron);
    if (isState && (perStep || (index >= numOutputs &&
                                !loop->getResult(index).use_empty())))
      return neuron;
  }
  return nullptr;
}

/// The compiled module runs the multi-step form, plus the time loops that
/// --snn-temporal-fusion keeps in @forward: recurrent ones, and those that
/// return a neuron's state.
static LogicalResult checkMultiStepForm(func::FuncOp func, bool training) {
  WalkResult result = func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto loop = dyn_cast<TimeLoopOp>(op)) {
      Operation *user = findRecurrentUse(loop);
      if (!training && (user || findStateOutput(loop)))
        return WalkResult::skip(); // its step ops run in the loop's body
      if (user) {
        InFlightDiagnostic diag =
            loop.emitError()
            << "recurrent snn.time_loop (its state feeds '" << user->getName()
            << "') in @train_step: --snn-autodiff unrolls recurrent loops "
               "for training; run it instead of writing the loop here";
        diag.attachNote(user->getLoc()) << "the state is used here";
        return WalkResult::interrupt();
      }
      loop.emitError() << "snn-compile needs the multi-step form, but @"
                       << func.getSymName()
                       << " still has an snn.time_loop; run "
                          "--snn-temporal-fusion before --snn-compile";
      return WalkResult::interrupt();
    }
    // In @train_step, step neurons are the unrolled recurrent loops of
    // --snn-autodiff.
    if (auto neuron = dyn_cast<NeuronOpInterface>(op);
        neuron && neuron.isStepForm() && !training) {
      op->emitError() << "per-step neuron op '" << op->getName()
                      << "' outside the multi-step form; run "
                         "--snn-temporal-fusion before --snn-compile";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

LogicalResult
mlir::snn::compileToModuleDirectory(ModuleOp module,
                                    const ModuleCompileOptions &options) {
  if (options.outputDir.empty())
    return module.emitError()
           << "snn-compile needs an output directory: "
              "--snn-compile=\"output=model.snnmod\"";
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return module.emitError()
           << "snn-compile found no entry point: the module needs a "
              "func.func @forward (input [T, B, ...] -> output)";
  auto trainStep = module.lookupSymbol<func::FuncOp>("train_step");
  SmallVector<func::FuncOp> entries{forward};
  if (trainStep)
    entries.push_back(trainStep);
  for (func::FuncOp func : entries)
    if (failed(checkMultiStepForm(func, func == trainStep)))
      return failure();

  NeuronKernelMap kernels;
  std::map<std::string, std::string> blobs;
  ModuleKernelOptions kernelOptions;
  kernelOptions.cuda = options.target != ModuleTarget::Cpu;
  kernelOptions.chips = options.chips;
  kernelOptions.host = options.target != ModuleTarget::Cuda;
  kernelOptions.hostNeurons = options.hostKernels;
  kernelOptions.batch = options.batch;
  kernelOptions.savedHBf16 = options.savedHBf16;
  kernelOptions.recomputeChunk = options.recomputeChunk;
  ModuleKernels moduleKernels(entries, kernelOptions);
  if (failed(moduleKernels.prepare(kernels)))
    return failure();

  // The manifest names the op kernels it needs; then they are generated
  // with the neuron kernels into the same files.
  OpKernelRegistry opKernels;
  ManifestBuilder builder(options.batch, kernels, opKernels,
                          options.savedHBf16, options.recomputeChunk,
                          options.spikeBits);
  if (failed(builder.addInferProgram(forward)) ||
      (trainStep && failed(builder.addTrainPrograms(trainStep))))
    return failure();
  if (failed(moduleKernels.generate(opKernels, blobs)))
    return failure();

  std::vector<DirectoryFile> files;
  std::map<std::string, std::string> kernelFiles;
  for (auto &[key, blob] : blobs) {
    if (key == "host_triple" || key == "host_cpu" || key == "host_neurons") {
      kernelFiles[key] = blob;
      continue;
    }
    std::string name = key == "ptx"    ? "kernels.ptx"
                       : key == "host" ? "kernels.host.so"
                                       : "kernels." + key + ".cubin";
    kernelFiles[key] = name;
    files.emplace_back(name, std::move(blob));
  }
  llvm::json::Value manifest(builder.finish(kernelFiles));
  files.emplace_back("manifest.json",
                     llvm::formatv("{0:2}", manifest).str() + "\n");
  if (!builder.getInitFile().empty())
    files.emplace_back("init.safetensors", builder.getInitFile().serialize());

  if (llvm::Error err = writeDirectoryAtomically(options.outputDir, files))
    return module.emitError()
           << "snn-compile: " << llvm::toString(std::move(err));
  return success();
}
