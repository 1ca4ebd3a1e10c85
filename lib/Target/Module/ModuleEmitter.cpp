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
#include "snn/Conversion/NeuronToGPU/EventLinearTiles.h"

#include "snn/Dialect/SNN/IR/SNNOps.h"

#include "llvm/ADT/StringSwitch.h"

#include <map>
#include <memory>
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

namespace {
/// The entry points one group of ranks runs: all ranks in a module without
/// a time split, else the ranks of one local length.
struct ProgramSet {
  func::FuncOp forward, trainStep;
  int64_t length = 0;
  SmallVector<int64_t> ranks;
};
} // namespace

/// The program sets of `module`: one, or one per local length of a time
/// split (--snn-split-time's @forward_t<L> and @train_step_t<L>).
static FailureOr<SmallVector<ProgramSet>> findProgramSets(ModuleOp module) {
  SmallVector<ProgramSet> sets;
  if (!module->hasAttr("snn.split_time")) {
    ProgramSet set;
    set.forward = module.lookupSymbol<func::FuncOp>("forward");
    set.trainStep = module.lookupSymbol<func::FuncOp>("train_step");
    if (!set.forward)
      return module.emitError()
             << "snn-compile found no entry point: the module needs a "
                "func.func @forward (input [T, B, ...] -> output)";
    sets.push_back(set);
    return sets;
  }
  std::map<int64_t, ProgramSet> byLength;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto length = func->getAttrOfType<IntegerAttr>("snn.time_length");
    auto ranks = func->getAttrOfType<DenseI64ArrayAttr>("snn.ranks");
    if (!length || !ranks)
      continue;
    ProgramSet &set = byLength[length.getInt()];
    set.length = length.getInt();
    set.ranks.assign(ranks.asArrayRef().begin(), ranks.asArrayRef().end());
    if (func.getSymName().starts_with("train_step_t"))
      set.trainStep = func;
    else
      set.forward = func;
  }
  for (auto &[length, set] : byLength) {
    if (!set.forward)
      return module.emitError()
             << "snn-compile: the time split has no @forward_t" << length
             << "; run --snn-split-time on a module with @forward";
    sets.push_back(set);
  }
  if (sets.empty())
    return module.emitError() << "snn-compile: the module is marked "
                                 "snn.split_time but has no per-rank "
                                 "functions (snn.time_length, snn.ranks)";
  return sets;
}

LogicalResult
mlir::snn::compileToModuleDirectory(ModuleOp module,
                                    const ModuleCompileOptions &options) {
  if (options.outputDir.empty())
    return module.emitError()
           << "snn-compile needs an output directory: "
              "--snn-compile=\"output=model.snnmod\"";
  // Event-driven convolutions have a CPU kernel only.
  if (options.target != ModuleTarget::Cpu) {
    WalkResult gpuConv = module.walk([](Operation *conv) {
      auto crossover = conv->getAttrOfType<FloatAttr>("event_driven");
      if (!isa<Conv2DOp, Conv2DBwdOp>(conv) || !crossover)
        return WalkResult::advance();
      conv->emitError() << "snn-compile: an event-driven convolution runs on "
                          "the CPU only; compile with target=cpu, or leave "
                          "convolutions dense (--snn-sparsify=\"target=cuda\" "
                          "does)";
      return WalkResult::interrupt();
    });
    if (gpuConv.wasInterrupted())
      return failure();
  }
  FailureOr<SmallVector<ProgramSet>> sets = findProgramSets(module);
  if (failed(sets))
    return failure();
  SmallVector<func::FuncOp> entries;
  for (const ProgramSet &set : *sets) {
    entries.push_back(set.forward);
    if (set.trainStep)
      entries.push_back(set.trainStep);
  }
  for (func::FuncOp func : entries)
    if (failed(checkMultiStepForm(
            func, llvm::any_of(*sets, [&](const ProgramSet &set) {
              return set.trainStep == func;
            }))))
      return failure();

  NeuronKernelMap kernels;
  std::map<std::string, std::string> blobs;
  ModuleKernelOptions kernelOptions;
  kernelOptions.cuda = options.target != ModuleTarget::Cpu;
  kernelOptions.chips = options.chips;
  kernelOptions.host = options.target != ModuleTarget::Cuda;
  kernelOptions.batch = options.batch;
  kernelOptions.savedHBf16 = options.savedHBf16;
  kernelOptions.recomputeChunk = options.recomputeChunk;
  int64_t tilesSharedLimit =
      options.target != ModuleTarget::Cpu && options.eventTiles
          ? getSharedMemoryLimit(options.chips)
          : 0;
  RowSpikeBitsOptions rowBits;
  rowBits.enabled = options.rowBits;
  rowBits.gradBits = options.gradBits;
  rowBits.sharedMemoryLimit = tilesSharedLimit;
  rowBits.spikeBits = options.spikeBits;
  rowBits.batch = options.batch;
  kernelOptions.rowBits = rowBits;
  ModuleKernels moduleKernels(entries, kernelOptions);
  if (failed(moduleKernels.prepare(kernels)))
    return failure();

  // The manifest names the op kernels it needs; then they are generated
  // with the neuron kernels into the same files.
  OpKernelRegistry opKernels;
  auto split = module->getAttrOfType<DictionaryAttr>("snn.split_time");
  std::vector<std::unique_ptr<ManifestBuilder>> builders;
  for (const ProgramSet &set : *sets) {
    auto builder = std::make_unique<ManifestBuilder>(
        options.batch, kernels, opKernels, options.savedHBf16,
        options.recomputeChunk, options.spikeBits);
    builder->setSharedMemoryLimit(tilesSharedLimit);
    builder->setRowSpikeBits(rowBits);
    if (split)
      builder->setTimeSplit(
          cast<IntegerAttr>(split.get("steps")).getInt());
    if (failed(builder->addInferProgram(set.forward)) ||
        (set.trainStep && failed(builder->addTrainPrograms(set.trainStep))))
      return failure();
    builder->addEvaluateProgram();
    builders.push_back(std::move(builder));
  }
  if (failed(moduleKernels.generate(opKernels, blobs)))
    return failure();

  std::vector<DirectoryFile> files;
  std::map<std::string, std::string> kernelFiles;
  for (auto &[key, blob] : blobs) {
    if (key == "host_triple" || key == "host_cpu") {
      kernelFiles[key] = blob;
      continue;
    }
    std::string name = key == "ptx"    ? "kernels.ptx"
                       : key == "host" ? "kernels.host.so"
                                       : "kernels." + key + ".cubin";
    kernelFiles[key] = name;
    files.emplace_back(name, std::move(blob));
  }
  llvm::json::Object manifest;
  SafetensorsWriter initFile = builders.front()->getInitFile();
  if (!split) {
    manifest = builders.front()->finish(kernelFiles);
  } else {
    // Rank r runs program_sets[ranks[r]].
    int64_t parts = cast<IntegerAttr>(split.get("parts")).getInt();
    std::vector<int64_t> setOfRank(parts, -1);
    llvm::json::Array programSets;
    for (auto [index, set] : llvm::enumerate(*sets)) {
      llvm::json::Object programs = builders[index]->finish(kernelFiles);
      programs["ranks"] = toArray(set.ranks);
      programSets.push_back(std::move(programs));
      for (int64_t rank : set.ranks)
        if (rank >= 0 && rank < parts)
          setOfRank[rank] = index;
      std::string clash = initFile.merge(builders[index]->getInitFile());
      if (!clash.empty())
        return module.emitError()
               << "snn-compile: the ranks' programs hold different values "
                  "named '"
               << clash << "' for init.safetensors";
    }
    if (llvm::is_contained(setOfRank, -1))
      return module.emitError()
             << "snn-compile: the time split of " << parts
             << " parts has a rank without functions (snn.ranks)";
    manifest = llvm::json::Object{
        {"format", "snn-module"},
        {"version", 1},
        {"split_time",
         llvm::json::Object{
             {"parts", parts},
             {"steps", cast<IntegerAttr>(split.get("steps")).getInt()},
             {"ranks", toArray(setOfRank)}}},
        {"program_sets", std::move(programSets)}};
  }
  files.emplace_back("manifest.json",
                     llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest)))
                             .str() +
                         "\n");
  if (!initFile.empty())
    files.emplace_back("init.safetensors", initFile.serialize());

  if (llvm::Error err = writeDirectoryAtomically(options.outputDir, files))
    return module.emitError()
           << "snn-compile: " << llvm::toString(std::move(err));
  return success();
}
