//===- CudaOps.h - the manifest's ops on a CUDA device ----------*- C++ -*-===//
//
// The ops see tensors as device pointers with their manifest shape and
// name; CudaBackend resolves the ids of a program's ops to these.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_CUDAOPS_H
#define SNNRT_CUDA_CUDAOPS_H

#include "CudaDevice.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace snnrt::cuda {

struct DeviceTensor {
  CUdeviceptr ptr = 0;
  std::vector<int64_t> shape;
  std::string name;
  bool bf16 = false; ///< elements are bfloat16 (2 bytes), not f32
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  float *f32() const { return reinterpret_cast<float *>(ptr); }
};

/// One op of a program, ready to run.
struct OpCall {
  const nlohmann::json &op;
  std::vector<DeviceTensor> in, out;
  /// The tensor of an attribute {"tensor": id}.
  std::function<DeviceTensor(int64_t id)> tensor;
  /// "train_forward op #3 'linear' (in: x, fc1.weight; out: %3)", the
  /// prefix of every error.
  std::string where;
  /// Set by the generated-kernel launches: which kernel ran (for --verbose).
  std::string *kernelUsed = nullptr;
  /// Arguments a neuron kernel takes after the documented ones: a fused
  /// time mean's output ("time_mean"), then the limit and decision of a
  /// fused count ("spike_count").
  std::vector<CUdeviceptr> tail = {};
};

/// Runs `call` on `device`; throws snnrt::Error naming `call.where` for an
/// unknown op, a malformed attribute, or a failed CUDA/cuBLAS call.
void runOp(CudaDevice &device, OpCall &call);

// The families of ops, one file each.
bool runNeuronOp(CudaDevice &device, OpCall &call);
bool runLayerOp(CudaDevice &device, OpCall &call);
/// Neuron layers split in time (`chained_states`): generated kernels only.
bool runChainedNeuronOp(CudaDevice &device, OpCall &call);
/// The ops of a module split in time (needs device.timeSplit()).
bool runTimeSplitOp(CudaDevice &device, OpCall &call);

/// Launches the generated kernel of `launch` ("kernel", "grid", "block")
/// on `pointers`, its arguments.
void launchKernelAt(CudaDevice &device, OpCall &call,
                    const nlohmann::json &launch,
                    std::vector<CUdeviceptr> pointers);
/// Runs the op's `launches`: the generated kernels after a layer op's
/// library call (docs/artifact-format.md, "Layer ops: library calls and
/// their kernels").
void runOpLaunches(CudaDevice &device, OpCall &call);

/// Attribute accessors: an error names the op and the attribute.
double attrNumber(const OpCall &call, const char *name);
double attrNumber(const OpCall &call, const char *name, double fallback);
bool attrBool(const OpCall &call, const char *name, bool fallback);
std::vector<int64_t> attrInts(const OpCall &call, const char *name,
                              size_t size);
/// Throws unless `call` has exactly `in` inputs and `out` outputs (a range
/// when max > min).
void expectArity(const OpCall &call, size_t inMin, size_t inMax, size_t outMin,
                 size_t outMax);
[[noreturn]] void opError(const OpCall &call, const std::string &message);

} // namespace snnrt::cuda

#endif // SNNRT_CUDA_CUDAOPS_H
