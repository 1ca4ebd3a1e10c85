//===- NeuronKernels.h - neuron kernels of a compiled module ----*- C++ -*-===//

#ifndef SNN_LIB_TARGET_MODULE_NEURONKERNELS_H
#define SNN_LIB_TARGET_MODULE_NEURONKERNELS_H

#include "ManifestBuilder.h"

#include <map>

namespace mlir::snn {

/// Which kernels generateModuleKernels builds.
struct ModuleKernelOptions {
  /// GPU kernels: a cubin per chip of `chips` and PTX.
  bool cuda = true;
  std::vector<std::string> chips;
  /// CPU kernels: a shared library for this machine's architecture.
  bool host = true;
  /// Replaces dynamic dims.
  int64_t batch = 0;
  /// The GPU kernels write and read the saved H in bf16 (the CPU keeps H in
  /// f32 storage, so no CPU kernels are built then).
  bool savedHBf16 = false;
  /// lif/if kernels recompute H (NeuronStorage::recomputeChunk).
  int64_t recomputeChunk = 0;
};

/// Generates the kernels of every neuron op of `funcs` into one set of files,
/// so that the programs of all entry points share them. Fills `kernels` for
/// the ops that have kernels and `files` with "sm_XY" -> cubin, "ptx" -> PTX,
/// "host" -> the CPU shared library, "host_triple" -> its target triple and
/// "host_cpu" -> the CPU level it needs (absent for the baseline).
LogicalResult generateModuleKernels(ArrayRef<func::FuncOp> funcs,
                                    const ModuleKernelOptions &options,
                                    NeuronKernelMap &kernels,
                                    std::map<std::string, std::string> &files);

} // namespace mlir::snn

#endif // SNN_LIB_TARGET_MODULE_NEURONKERNELS_H
