//===- Executor.h - tensors of a module and its programs on the CPU -*- C++ -*-===//

#ifndef SNNRT_EXECUTOR_H
#define SNNRT_EXECUTOR_H

#include "snnrt/Communicator.h"
#include "snnrt/CpuOps.h"
#include "snnrt/Formats.h"
#include "snnrt/Manifest.h"
#include "snnrt/MemoryPlan.h"
#include "snnrt/Profile.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace snnrt {

class Executor {
public:
  /// Allocates every tensor (aliases share storage), initializes parameters
  /// from `init` (seeded, PyTorch's defaults) and from init.safetensors.
  Executor(Module module, uint64_t seed);

  const Module &module() const { return module_; }
  /// Where the short-lived tensors live (runtime memory plan).
  const MemoryPlan &memoryPlan() const { return plan_; }
  /// Bytes of every tensor's storage: the arena and the tensors outside it.
  size_t storageBytes() const;
  float *data(int id);
  /// Overwrites parameters from a safetensors file; a missing tensor or a
  /// shape mismatch is an error naming the tensor.
  void loadWeights(const std::string &path);
  /// Every persisted tensor (param, buffer, optimizer_state) by name: what a
  /// training checkpoint stores.
  std::map<std::string, HostArray> state();
  /// Overwrites params and buffers (and the optimizer state when
  /// `optimizerState`) from `tensors`, read from `path` (for messages).
  void loadState(const std::map<std::string, HostArray> &tensors,
                 const std::string &path, bool optimizerState);
  /// Writes `count` labels into the labels tensor `tensor` (default: the
  /// training labels; i32 bits in its slots), -1 (padding, which the
  /// evaluation skips) into its remaining slots. A label outside the
  /// model's classes [0, C) is an error (the loss kernels would give NaN).
  void setLabels(const int32_t *labels, size_t count, int tensor = -1);
  /// Runs every op of `program` on the CPU; `afterOp(i)`, when given, runs
  /// after op i (data parallel training starts a gradient bucket's
  /// all-reduce there once the bucket's last writer has run).
  void run(const std::string &program, const RunContext &ctx = {},
           const std::function<void(size_t)> &afterOp = {});
  /// The ranks of a module split in time, which its send, recv and
  /// all-reduce ops talk to (not owned).
  void setCommunicator(Communicator *comm) { comm_ = comm; }
  Communicator *communicator() const { return comm_; }
  /// Times every op from now on; the time per op kind of each program is
  /// printed to stderr when the executor ends (snn-run --profile).
  void enableProfile() { profile_ = true; }
  ~Executor();

private:
  void initialize(uint64_t seed);
  bool profile_ = false;
  Communicator *comm_ = nullptr;
  void runOp(const Op &op, size_t index, const TensorLookup &lookup,
             const RunContext &ctx);
  ProfileTable profileTable_;
  Module module_;
  /// SNNRT_MEMORY_PLAN=poison: NaN into each planned f32 output of `op`
  /// that the running program has not read or written yet.
  void poisonFirstWrites(const Op &op, std::vector<char> &touched);
  bool poisonsFirstWrites_ = false;
  MemoryPlan plan_;
  /// Persistent tensors own their storage; planned ones are views of arena_.
  std::vector<std::vector<float>> storage_;
  std::vector<float> arena_;
  std::vector<float *> base_;
  std::vector<int> owner_;
};

} // namespace snnrt

#endif // SNNRT_EXECUTOR_H
