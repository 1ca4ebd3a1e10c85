//===- Manifest.h - a compiled module's manifest.json -----------*- C++ -*-===//
//
// The compiled module format is docs/artifact-format.md.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_MANIFEST_H
#define SNNRT_MANIFEST_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace snnrt {

/// BF16: bfloat16 on the device; on the CPU a 4-byte float slot whose value
/// is rounded to bfloat16 by the op that writes it.
enum class DType { F32, I32, U8, BF16, U32 };
size_t dtypeSize(DType type);

struct TensorInfo {
  int id = -1;
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  std::string role;
  int aliasOf = -1;
  nlohmann::json init;
  bool trainable = false;

  size_t numel() const;
  size_t bytes() const { return numel() * dtypeSize(dtype); }
  std::string shapeString() const;
};

struct Op {
  std::string kind;
  std::vector<int> in, out;
  nlohmann::json attrs;
  /// time_loop: the step's ops, the tensors of the body's block arguments
  /// (input slices, then state) and the yielded tensors (step outputs, then
  /// the next state).
  std::vector<Op> body;
  std::vector<int> args, yields;
  /// "op #i (kind)" for error messages.
  std::string describe(size_t index) const;
};

/// A rank's share of a module split in time (--snn-split-time): rank r of
/// `parts` runs the steps [r*steps/parts, (r+1)*steps/parts).
struct TimeSplit {
  int parts = 1, steps = 0, rank = 0;
  int begin() const { return rank * steps / parts; }
  int length() const { return (rank + 1) * steps / parts - begin(); }
};

/// Where an event-driven linear layer (forward) or linear backward decides
/// between its paths: a `spike_density` kernel op (docs/artifact-format.md,
/// "Event-driven linear layers").
/// A neuron op that counts its output for an event-driven layer (the
/// "spike_count" of `neuron` / `neuron_bwd`; docs/artifact-format.md):
/// its limit (in) and decision (out) tensors, which its kernel takes last.
struct FusedCount {
  int limit = -1, decision = -1;
  /// A neuron backward's gx occupancy row bits, an output (-1: none): the
  /// kernel argument before the limit.
  int bits = -1;
  explicit operator bool() const { return decision >= 0; }
};
/// The fused count of `op` (none when it has no "spike_count"); throws
/// snnrt::Error, prefixed by `where`, when the attribute does not name an
/// input limit and an output decision of the op.
FusedCount readFusedCount(const nlohmann::json &attrs,
                          const std::vector<int> &in,
                          const std::vector<int> &out,
                          const std::string &where);

/// A neuron backward that forms the gradient of its spikes from the thin
/// linear after it ("linear_grad": {"outputs": C} of `neuron_bwd`;
/// docs/artifact-format.md): its first input is that linear's gy, [.., C],
/// its last (before a fused count's limit) the linear's weight [C, F] with
/// F the op's "features".
struct LinearGrad {
  int64_t outputs = 0, features = 0;
  explicit operator bool() const { return outputs > 0; }
  /// The neurons (gx's elements) of `gyElements` entries of gy.
  int64_t neuronsOf(int64_t gyElements) const {
    return gyElements / outputs * features;
  }
};
/// The op's linear_grad (none without the attribute); throws snnrt::Error,
/// prefixed by `where`, when the attribute is malformed or the tensors'
/// sizes do not match it.
LinearGrad readLinearGrad(const nlohmann::json &attrs, int64_t gyElements,
                          int64_t weightElements, const std::string &where);

/// The output that a training neuron op's fused time mean writes
/// ("time_mean": {"tensor": id, "scale": s}; docs/artifact-format.md), -1
/// without one: its kernel argument follows the parameters. Throws
/// snnrt::Error, prefixed by `where`, when the attribute is malformed or
/// names no output of the op.
int readTimeMean(const nlohmann::json &attrs, const std::vector<int> &out,
                 const std::string &where);
/// Whether a neuron_bwd reads the gradient of its layer's time mean
/// ("grad_broadcast": {"scale": s}): its first input is then [1, ...],
/// one value per neuron. Throws snnrt::Error when it is malformed.
bool readGradBroadcast(const nlohmann::json &attrs, const std::string &where);

struct EventSite {
  std::string layer;     ///< the layer's name, the key of calibration.json
  std::string direction; ///< "forward" or "backward"
  std::string program;
  /// The op's index in its program; -1 inside a time loop's body.
  int opIndex = -1;
  /// The count is done by the neuron op at opIndex ("spike_count"): the
  /// spike_density op that would count alone (calibrate runs it).
  nlohmann::json fusedDensity;
  int input = -1;    ///< the tensor whose nonzeros are counted
  int decision = -1; ///< [count, 1 when the event-driven path runs]
  int limit = -1;    ///< one i32: the largest count of the event path
  int64_t elements = 0;
  double crossover = 0.0; ///< compile-time
  /// false: the module has no dense path for it (crossover = 1), the
  /// event-driven path must run whatever a calibration says.
  bool denseFallback = true;
};

struct Module {
  std::string dir;
  /// parts == 1: not split.
  TimeSplit split;
  int timeSteps = 0, batch = 0;
  int input = -1, output = -1, labels = -1, loss = -1, correct = -1;
  /// The `evaluate` program's labels (the training labels, or labels of
  /// their own in an inference module), loss and correct count (-1: the
  /// module has no such program; docs/artifact-format.md).
  int evalLabels = -1, evalLoss = -1, evalCorrect = -1;
  std::vector<TensorInfo> tensors;
  std::map<std::string, std::vector<Op>> programs;
  std::vector<std::pair<std::string, int>> spikeLayers;
  /// Event-driven linear layers: name and decision tensor (two i32 words,
  /// the second 1 when the event-driven path ran; docs/artifact-format.md).
  std::vector<std::pair<std::string, int>> eventLayers;
  /// Every spike_density op of every program, in program order.
  std::vector<EventSite> eventSites;
  /// Per spikeLayers entry: the train_forward tensor holding its spikes that
  /// the host can read after that program (-1: none), and whether it holds
  /// them packed (u32 words, 32 spikes each; spike_layers' train_bits).
  std::vector<std::pair<int, bool>> spikeLayerTrain;
  /// Tensors the host reads after the program that writes them, besides the
  /// spike layers' outputs (recorded state, snn-run --record).
  std::vector<int> hostReads;
  nlohmann::json optimizer, kernels;
  /// The manifest this module was parsed from (the CUDA backend reads its
  /// programs from it).
  nlohmann::json manifest;

  /// Reads DIR/manifest.json; throws snnrt::Error naming the file and field.
  static Module load(const std::string &dir);
  /// DIR/manifest.json as JSON, not yet checked.
  static nlohmann::json readManifest(const std::string &dir);
  /// The module of manifest `j` whose files are in `dir`.
  static Module parse(nlohmann::json j, const std::string &dir);
  /// The manifest that rank `rank` of a job of `ranks` runs: `j` itself
  /// unless it is split in time, else its program set for that rank (an
  /// Error when the module was split for another number of ranks).
  static nlohmann::json selectRank(nlohmann::json j, const std::string &dir,
                                   int rank, int ranks);
  /// Whether manifest `j` is split in time.
  static bool isTimeSplit(const nlohmann::json &j) {
    return j.contains("split_time");
  }
  const TensorInfo &tensor(int id) const;
  const std::vector<Op> &program(const std::string &name) const;
};

} // namespace snnrt

#endif // SNNRT_MANIFEST_H
