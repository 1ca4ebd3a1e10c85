//===- NeuronKernels.h - neuron kernels of a compiled module ----*- C++ -*-===//

#ifndef SNN_LIB_TARGET_MODULE_NEURONKERNELS_H
#define SNN_LIB_TARGET_MODULE_NEURONKERNELS_H

#include "ManifestBuilder.h"
#include "RowSpikeBits.h"

#include <map>

namespace mlir::snn {

/// Which kernels ModuleKernels builds.
struct ModuleKernelOptions {
  /// GPU kernels: a cubin per chip of `chips` and PTX.
  bool cuda = true;
  std::vector<std::string> chips;
  /// CPU kernels: a shared library for this machine's architecture with the
  /// neuron and op kernels.
  bool host = true;
  /// Replaces dynamic dims.
  int64_t batch = 0;
  /// The kernels write and read the saved H in bf16 (the CPU ones in the
  /// runtime's f32 storage, rounded).
  bool savedHBf16 = false;
  /// lif/if kernels recompute H (NeuronStorage::recomputeChunk).
  int64_t recomputeChunk = 0;
  /// Which layers' training forward writes row bits (RowSpikeBits.h).
  RowSpikeBitsOptions rowBits;
};

/// The kernels of a compiled module: the neuron kernels of every entry
/// point (their ops are copied into one scratch function with the batch size
/// filled in, so that the programs of all entry points share one cubin) and
/// the op kernels that the manifest asks for. Names come first (prepare),
/// then the manifest, then the code (generate).
class ModuleKernels {
public:
  ModuleKernels(ArrayRef<func::FuncOp> funcs,
                const ModuleKernelOptions &options);
  ~ModuleKernels();

  /// Fills `kernels` with the names of the neuron kernels that generate()
  /// will build.
  LogicalResult prepare(NeuronKernelMap &kernels);
  /// Generates the neuron kernels and `ops` into `files`: "sm_XY" -> cubin,
  /// "ptx" -> PTX, "host" -> the CPU shared library, "host_triple" -> its
  /// target triple, "host_cpu" -> the CPU level it needs (absent for the
  /// baseline).
  LogicalResult generate(const OpKernelRegistry &ops,
                         std::map<std::string, std::string> &files);

private:
  SmallVector<func::FuncOp> funcs;
  ModuleKernelOptions options;
  OwningOpRef<ModuleOp> scratch;
  func::FuncOp kernelFunc;
  bool anyNeuronKernels = false;
  /// The first neuron op the generator has no kernels for, and why:
  /// reported by generate(), after the manifest's own (clearer) checks.
  Operation *unsupportedNeuron = nullptr;
  std::string unsupportedReason;
};

} // namespace mlir::snn

#endif // SNN_LIB_TARGET_MODULE_NEURONKERNELS_H
