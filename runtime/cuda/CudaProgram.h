//===- CudaProgram.h - one manifest program on a CUDA device ----*- C++ -*-===//
//
// Runs the ops of a program (infer, train_forward, backward, update) in
// order on the device's stream. With CUDA graphs enabled, the second run of
// a program is captured and every later run replays the graph: one launch
// instead of one per op. Programs whose ops take per-step values by value
// (the optimizers' learning rate and step, dropout's seed) are not captured,
// nor programs whose capture fails (they keep running op by op). A
// recurrent time loop runs its body once per step, all of it captured with
// the rest of the program; its input slices and step outputs are views and
// its state ping-pongs between two buffers, so a step is only its body's
// kernels (no copies) wherever no alias shares those tensors.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_CUDAPROGRAM_H
#define SNNRT_CUDA_CUDAPROGRAM_H

#include "CudaOps.h"

#include <functional>
#include <string>
#include <vector>

namespace snnrt::cuda {

/// Work enqueued on a second stream after given ops of a program (data
/// parallel: a gradient bucket's all-reduce as soon as the backward op that
/// finishes it has been enqueued). `afterOps` ascending; `enqueue(op, stream)`
/// runs once per such op at every eager run, ordered after the op by an
/// event; the side stream joins the program's stream at its end. Being part
/// of the program, it is captured into the program's graph with the ops, so
/// it must enqueue the same work at every run.
struct SideWork {
  std::vector<size_t> afterOps;
  std::function<void(size_t op, CUstream stream)> enqueue;
};

/// Values the launcher passes at every step.
struct StepValues {
  float learningRate = 0.0f;
  int64_t step = 1;  ///< 1-based optimizer step
  uint64_t seed = 0; ///< dropout seed of this step
};

class CudaProgram {
public:
  /// `ops` is the manifest's op list; `resolve(id)` gives a tensor's device
  /// storage (its pointer must stay the same while the program exists).
  /// `sharesStorage(id)`: whether another tensor aliases `id`'s storage
  /// (null: assume every tensor may be aliased).
  CudaProgram(CudaDevice &device, std::string name, nlohmann::json ops,
              std::function<DeviceTensor(int64_t)> resolve,
              std::function<bool(int64_t)> sharesStorage = nullptr);
  ~CudaProgram();
  CudaProgram(const CudaProgram &) = delete;
  CudaProgram &operator=(const CudaProgram &) = delete;

  /// Enqueues the program; returns without waiting for the device.
  void run(const StepValues &values);
  /// Which kernel each neuron op ran at its last eager run ("" for others).
  const std::vector<std::string> &kernelsUsed() const { return kernels; }
  bool usesGraph() const { return graph != nullptr; }
  /// Attaches side work (replacing any); a captured graph is dropped.
  void setSideWork(SideWork work);

private:
  void runEagerly(const StepValues &values);
  using Resolver = std::function<DeviceTensor(int64_t)>;
  /// Runs `list` (the program or a loop body) with tensors from `resolver`;
  /// `used` records the kernels.
  void runOps(const nlohmann::json &list, const std::string &prefix,
              const StepValues &values, std::vector<std::string> *used,
              const Resolver &resolver);
  /// A recurrent `time_loop` op (`label`: "program op #i 'time_loop'"): its
  /// body once per step.
  void runTimeLoop(const nlohmann::json &op, const std::string &label,
                   const StepValues &values, const Resolver &resolver);

  CudaDevice &device;
  std::string name;
  nlohmann::json ops;
  std::function<DeviceTensor(int64_t)> resolve;
  std::function<bool(int64_t)> sharesStorage;
  std::vector<std::string> kernels;
  bool capturable = false;
  /// An op reads the run values: write them before each run.
  bool runValues = false;
  int runs = 0;
  CUgraphExec graph = nullptr;
  SideWork side;
  CUstream sideStream = nullptr;
  std::vector<CUevent> sideEvents; ///< one per side op, then the join
};

} // namespace snnrt::cuda

#endif // SNNRT_CUDA_CUDAPROGRAM_H
