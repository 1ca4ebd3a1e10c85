//===- NeuronKernels.h - neuron kernels of a compiled module ----*- C++ -*-===//

#ifndef SNN_LIB_TARGET_MODULE_NEURONKERNELS_H
#define SNN_LIB_TARGET_MODULE_NEURONKERNELS_H

#include "ManifestBuilder.h"

#include <map>

namespace mlir::snn {

/// Generates the kernels of every neuron op of `funcs` into one cubin per
/// chip and one PTX, so that the programs of all entry points share one set
/// of kernel files. Fills `kernels` for the ops that have kernels and `blobs`
/// with "sm_XY" -> cubin and "ptx" -> PTX. `batch` replaces dynamic dims.
/// `savedHBf16`: the kernels write and read the saved H in bf16.
LogicalResult generateModuleKernels(ArrayRef<func::FuncOp> funcs,
                                    ArrayRef<std::string> chips, int64_t batch,
                                    bool savedHBf16, NeuronKernelMap &kernels,
                                    std::map<std::string, std::string> &blobs);

} // namespace mlir::snn

#endif // SNN_LIB_TARGET_MODULE_NEURONKERNELS_H
