//===- DumpNeuronKernels.cpp - write the neuron kernels of a function -----===//
//
// --snn-dump-neuron-kernels: the kernels of one function, serialized by
// generateNeuronKernels, as files a GPU test can load by name.
//
//===----------------------------------------------------------------------===//

#include "NeuronKernelBuilder.h"
#include "snn/Conversion/NeuronToGPU/NeuronToGPU.h"
#include "snn/Conversion/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::snn {
#define GEN_PASS_DEF_SNNDUMPNEURONKERNELS
#include "snn/Conversion/Passes.h.inc"
} // namespace mlir::snn

using namespace mlir;
using namespace mlir::snn;
using namespace mlir::snn::kernelgen;

static LogicalResult writeFile(Operation *anchor, StringRef dir,
                               StringRef name, StringRef bytes) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (!ec) {
    os << bytes;
    os.close();
    ec = os.error();
  }
  if (ec)
    return anchor->emitError()
           << "cannot write '" << path << "': " << ec.message();
  return success();
}

/// One kernels.json entry: names, launch configuration and sizes.
static llvm::json::Object describe(Operation *op, unsigned index,
                                   const NeuronSpec &spec,
                                   const NeuronKernel &kernel) {
  llvm::json::Object entry{
      {"index", index},
      {"op", op->getName().getStringRef()},
      {"fwd", kernel.fwdName},
      {"fwd_infer", kernel.fwdInferName},
      {"fwd_record", kernel.fwdRecordName},
      {"bwd", kernel.bwdName},
      {"block", kernel.blockSize},
      {"grid", kernel.gridSize},
      {"time_steps", spec.numSteps},
      {"neurons", spec.numNeurons},
      {"features", spec.numFeatures},
      {"neurons_per_thread", spec.getWidth()},
      {"tensor_params", static_cast<int64_t>(spec.getTensorParams().size())},
      {"h_dtype", spec.storage.bf16H ? "bf16" : "f32"},
      // 0: spikes are f32 0/1.
      {"spike_word_bits", spec.packsSpikes() ? spec.getSpikeWordBits() : 0},
      // 0: the forward saves H; else it saves membrane checkpoints.
      {"recompute_chunk", spec.recomputes() ? spec.storage.recomputeChunk : 0}};
  // A time-split layer: state (gradient) in and out after the tensors.
  if (spec.chainsState)
    entry["chains_state"] = true;
  return entry;
}

namespace {
struct SNNDumpNeuronKernelsPass
    : public snn::impl::SNNDumpNeuronKernelsBase<SNNDumpNeuronKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (outputDir.empty()) {
      module.emitError() << "--snn-dump-neuron-kernels needs output-dir=DIR";
      return signalPassFailure();
    }
    FailureOr<NeuronStorage> storage =
        parseNeuronStorage(module, hDType, spikeBits, recomputeChunk);
    if (failed(storage))
      return signalPassFailure();
    // The function with kernels: the named one, else the only one.
    func::FuncOp target;
    for (func::FuncOp func : module.getOps<func::FuncOp>()) {
      bool has = false;
      forEachKernelOp(func, [&](Operation *, unsigned, const NeuronSpec &) {
        has = true;
      });
      if (!funcName.empty() ? func.getSymName() != funcName : !has)
        continue;
      if (target) {
        module.emitError() << "several functions have neuron kernels ('"
                           << target.getSymName() << "', '"
                           << func.getSymName()
                           << "'); choose one with func=NAME";
        return signalPassFailure();
      }
      target = func;
    }
    if (!target) {
      module.emitError() << (funcName.empty()
                                 ? "no function has neuron layers with "
                                   "generated kernels"
                                 : "no function named '" + funcName + "'");
      return signalPassFailure();
    }

    if (failed(checkStorageSupported(target, *storage)))
      return signalPassFailure();
    SmallVector<std::string> chipList(chips.begin(), chips.end());
    if (chipList.empty())
      chipList = {"sm_80", "sm_90"};
    FailureOr<NeuronKernelBundle> bundle =
        generateNeuronKernels(target, chipList, emitBinary, *storage);
    if (failed(bundle))
      return signalPassFailure();

    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
      module.emitError() << "cannot create '" << outputDir
                         << "': " << ec.message();
      return signalPassFailure();
    }
    llvm::json::Array layers;
    forEachKernelOp(target, [&](Operation *op, unsigned index,
                                const NeuronSpec &spec) {
      layers.push_back(describe(op, index, spec, bundle->kernels.lookup(op)));
    }, *storage);
    llvm::json::Object files;
    for (const auto &blob : bundle->blobs) {
      std::string name = blob.getKey() == "ptx"
                             ? "kernels.ptx"
                             : "kernels." + blob.getKey().str() + ".cubin";
      if (failed(writeFile(module, outputDir, name, blob.getValue())))
        return signalPassFailure();
      files[blob.getKey()] = name;
    }
    std::string json;
    llvm::raw_string_ostream os(json);
    os << llvm::formatv(
        "{0:2}", llvm::json::Value(llvm::json::Object{
                     {"func", target.getSymName()},
                     {"files", std::move(files)},
                     {"layers", std::move(layers)}}));
    os << "\n";
    if (failed(writeFile(module, outputDir, "kernels.json", json)))
      return signalPassFailure();
  }
};
} // namespace
