//===- Trainer.h - evaluation and training loops of snn-run ---*- C++ -*-===//
//
// The loops behind `snn-run infer` and `snn-run train`, independent of where
// the programs run: the host Executor holds every tensor, a ProgramRunner
// runs programs on it (CPU) or on a device mirror (CUDA) and moves tensors.
//
// Resume is exact: the data order, rate-coded input and dropout masks are
// pure functions of (seed, epoch, batch, step), and a checkpoint stores every
// param, buffer and optimizer tensor plus epoch, step and seed in its
// safetensors __metadata__.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_TRAINER_H
#define SNNRT_TRAINER_H

#include "snnrt/BlasCore.h"
#include "snnrt/Calibration.h"
#include "snnrt/Communicator.h"
#include "snnrt/CpuOps.h"
#include "snnrt/CpuThreads.h"
#include "snnrt/Dataset.h"
#include "snnrt/Executor.h"
#include "snnrt/Recording.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace snnrt {

/// Runs programs on the tensors of a host Executor.
struct LayerStats;

class ProgramRunner {
public:
  virtual ~ProgramRunner();
  /// Host -> device and back for one tensor (no-ops on the CPU).
  virtual void upload(int id) = 0;
  virtual void download(int id) = 0;
  /// Elements [first, first + count) of tensor `id` only, into the same
  /// place of its host storage (the rest of the host copy is left as is).
  virtual void downloadWindow(int id, size_t /*first*/, size_t /*count*/) {
    download(id);
  }
  /// Brings params, buffers and optimizer state back to the host.
  virtual void downloadState() = 0;
  virtual void run(const std::string &program, const RunContext &ctx) = 0;
  /// Runs `program`, calling `afterOp(i)` once op i's outputs are final on
  /// the host side of the runner. Runners that cannot tell (a GPU runs the
  /// program as a whole) call afterOp(SIZE_MAX) once at the end.
  virtual void run(const std::string &program, const RunContext &ctx,
                   const std::function<void(size_t)> &afterOp) {
    run(program, ctx);
    afterOp(SIZE_MAX);
  }
  /// Waits until every program run so far has finished (timing).
  virtual void synchronize() {}
  /// Memory held for the module's tensors: on a GPU with its scratch and
  /// cached blocks, on the CPU the tensors' storage (4-byte slots).
  virtual std::size_t deviceBytes() const = 0;
  /// The memory plan on this backend: the shared tensors' arena and what
  /// they would take each with storage of its own.
  virtual MemoryPlan memoryPlan() const = 0;
  /// "cpu", "cuda:0 (...)".
  virtual std::string describe() const = 0;
  /// The key of the device's entry in calibration.json: "sm_90",
  /// "cpu-x86_64-v3" (hostCpuArch()).
  virtual std::string arch() const;
  /// Device memory of tensor `id` and the stream the programs run on, for
  /// collectives on device buffers (NCCL); null on the CPU.
  virtual void *devicePointer(int) { return nullptr; }
  virtual void *stream() { return nullptr; }
  /// Device runners: at every run of `program`, enqueues `enqueue(op,
  /// stream)` on a second stream right after op `op` for each op in
  /// `afterOps` (ascending), ordered after it on the device without a host
  /// wait, and joins that stream back at the program's end (captured into
  /// the program's CUDA graph with its ops). False where unsupported.
  virtual bool enqueueAfterOps(const std::string & /*program*/,
                               std::vector<size_t> /*afterOps*/,
                               std::function<void(size_t, void *)>) {
    return false;
  }
};

/// The Executor itself.
class CpuRunner : public ProgramRunner {
public:
  explicit CpuRunner(Executor &exec) : exec(exec) {}
  void upload(int) override {}
  void download(int) override {}
  void downloadWindow(int, size_t, size_t) override {}
  void downloadState() override {}
  void run(const std::string &program, const RunContext &ctx) override {
    exec.run(program, ctx);
  }
  void run(const std::string &program, const RunContext &ctx,
           const std::function<void(size_t)> &afterOp) override {
    exec.run(program, ctx, afterOp);
  }
  MemoryPlan memoryPlan() const override { return exec.memoryPlan(); }
  std::size_t deviceBytes() const override { return exec.storageBytes(); }
  std::string describe() const override {
    int threads = getCpuThreads();
    std::string blas = getBlasCoreName();
    return "cpu, " + describeCpuNeuronKernels(exec.module()) + ", " +
           (blas.empty() ? std::string() : "OpenBLAS " + blas + ", ") +
           std::to_string(threads) + (threads == 1 ? " thread" : " threads") +
           (splitsGemms() ? " (GEMMs in tiles on them)" : "");
  }

private:
  Executor &exec;
};

/// Milliseconds per call of `once` over `iterations` calls, after `warmup`
/// untimed calls; the device is synchronized before and after.
double millisecondsPerCall(ProgramRunner &runner,
                           const std::function<void()> &once,
                           int64_t iterations, int warmup = 0);

/// The decisions of an event-driven layer in one direction (forward or
/// backward), read back after the programs that made them: how many calls,
/// how many took the event-driven path, and the density of the input they
/// counted (spikes forward, the output gradient backward).
struct EventPathStats {
  std::string layer, direction;
  int64_t calls = 0, eventCalls = 0;
  double densitySum = 0.0; ///< over the calls
  double density() const { return calls ? densitySum / double(calls) : 0.0; }
  double eventShare() const {
    return calls ? double(eventCalls) / double(calls) : 0.0;
  }
};

/// Adds the decisions of the event sites of `program`, which has just run,
/// to `stats` (an entry per layer and direction, added on first use).
void addEventPaths(Executor &exec, ProgramRunner &runner,
                   const std::string &program,
                   std::vector<EventPathStats> &stats);

/// {LAYER: {DIRECTION: {"calls", "event_share", "input_density",
/// "crossover", "calibrated"}}}: the metrics' "event_layers".
nlohmann::json eventPathsJson(const std::vector<EventPathStats> &stats,
                              const EventCrossovers &crossovers);

/// `from`'s calls added to `into`'s, entry by entry.
void mergeEventPaths(std::vector<EventPathStats> &into,
                     const std::vector<EventPathStats> &from);

struct EvalResult {
  int64_t samples = 0;
  double seconds = 0.0;
  bool hasLoss = false;   ///< labels and a loss op in the module
  double loss = 0.0;      ///< mean over samples
  int64_t correct = 0;    ///< argmax of the time-mean output == label
  std::vector<double> spikeRates; ///< per module().spikeLayers entry
  /// Per event-driven layer and direction: the decisions of every batch.
  std::vector<EventPathStats> eventPaths;
};

/// Runs the `infer` program over `data` in batches (the last one padded).
/// `encoderSeed` seeds rate coding; `outputs`, when not null, receives the
/// output tensor [T, N, ...] of all samples, and each of `traces` (see
/// planRecording) its tensor over all samples the same way. With `comm`
/// (several ranks, no outputs or traces), rank r evaluates batches r, r+P,
/// ... and every rank returns the totals of all ranks.
EvalResult evaluate(Executor &exec, ProgramRunner &runner, const Dataset &data,
                    Encoder encoder, uint64_t encoderSeed,
                    std::vector<float> *outputs = nullptr,
                    std::vector<RecordTrace> *traces = nullptr,
                    Communicator *comm = nullptr);

struct TrainConfig {
  int64_t epochs = 1;
  float lr = -1.0f; ///< < 0: the manifest's optimizer.lr
  std::string schedule = "const"; ///< const | step | cosine
  int64_t stepSize = 1;
  float gamma = 0.1f;
  bool shuffle = true;
  uint64_t seed = 0;
  Encoder encoder = Encoder::Direct;
  std::string checkpoint; ///< written after every epoch when not empty
  std::string metrics;    ///< JSON lines, one per epoch, when not empty
  bool progress = true;   ///< a progress bar (plain lines off a TTY) on stderr
  /// Data parallel training over the ranks of `comm` (null or one rank: a
  /// single process). The global batch is ranks x the module's batch; rank r
  /// trains on rows [r*B, (r+1)*B) of each global batch of the shuffled order
  /// (the same on every rank), gradients are averaged before each update.
  /// Rank 0 alone prints progress and writes metrics and checkpoints.
  Communicator *comm = nullptr;
  /// The ranks of a module split in time (--snn-split-time): every rank
  /// runs every batch on its time steps, the programs themselves exchange
  /// what crosses the ranks. Rank 0 alone prints and writes metrics and
  /// checkpoints.
  Communicator *timeSplit = nullptr;
  /// A 2-D mesh (time split x data parallel): the whole job, of which
  /// `timeSplit` (this replica's time ranks) and `comm` (the ranks that hold
  /// the same time range in every replica) are groups. It checks that all
  /// ranks hold the same weights and picks the rank that writes (its rank
  /// 0). Null: the job is `comm` or `timeSplit`.
  Communicator *world = nullptr;
  size_t bucketBytes = size_t(25) << 20; ///< gradient all-reduce buckets
  /// Start each bucket's all-reduce during the backward (CPU, host buffers).
  bool overlap = true;
  /// Fault injection for tests: rank `failRank` fails at optimizer step
  /// `failStep` by throwing ("throw"), exiting at once ("exit") or hanging
  /// ("hang"); failRank < 0: never.
  int failRank = -1;
  int64_t failStep = 0;
  std::string failMode = "throw";
  /// The crossovers the event-driven layers run with (applyCalibration),
  /// for the metrics.
  EventCrossovers crossovers;
};

/// What an epoch measured of one spiking layer (module().spikeLayers
/// order): snn-run's per-layer line and the metrics' "layers".
struct LayerStats {
  std::string name;
  /// Fraction of ones in the layer's spikes in training (sampled batches)
  /// and in evaluation; < 0 where not measured (the module keeps no
  /// training spikes of the layer that the host can read, or no test set).
  double trainDensity = -1.0, testDensity = -1.0;
};

struct EpochResult {
  int64_t epoch = 0; ///< 1-based
  double trainLoss = 0.0, trainAcc = 0.0, samplesPerSecond = 0.0, lr = 0.0;
  bool tested = false;
  EvalResult test;
  std::vector<LayerStats> layers;
  /// The event-driven layers' decisions: the sampled training steps
  /// (forward and backward) and the evaluation.
  std::vector<EventPathStats> eventPaths;
};

/// Fraction of ones of a spike tensor as the host holds it: `numel` 0/1
/// floats, or (`bits`) `numel` u32 words holding `count` spikes, 32 each.
double spikeDensity(const float *data, size_t numel, bool bits, size_t count);

/// Where a run stands: the number of finished epochs and optimizer steps.
struct TrainPosition {
  int64_t epoch = 0;
  int64_t step = 0;
};

class Trainer {
public:
  Trainer(Executor &exec, ProgramRunner &runner, TrainConfig config);

  /// Loads a checkpoint written by a run of the same module, seed and
  /// number of data parallel ranks into the host Executor (before a device
  /// mirror is made). Errors name the file and what does not match.
  static TrainPosition loadCheckpoint(Executor &exec, const std::string &path,
                                      uint64_t seed, int ranks = 1);

  /// Trains from `from` to config.epochs, evaluating on `test` (when not
  /// empty) after every epoch; `onEpoch` sees each epoch's results.
  void fit(const Dataset &train, const Dataset &test, TrainPosition from,
           const std::function<void(const EpochResult &)> &onEpoch = {});

  /// The learning rate of 0-based epoch `epoch` under the schedule.
  double learningRate(int64_t epoch) const;

private:
  void writeCheckpoint(const TrainPosition &pos);
  void injectFault(int64_t step) const;
  /// This process among the ranks of the job (data parallel or time split).
  Communicator *job() const {
    return config.world  ? config.world
           : config.comm ? config.comm
                         : config.timeSplit;
  }
  int rank() const { return job() ? job()->rank() : 0; }
  /// Which rows of each global batch this rank trains on (data parallel).
  int dataRank() const { return config.comm ? config.comm->rank() : 0; }
  int ranks() const { return config.comm ? config.comm->size() : 1; }
  Executor &exec;
  ProgramRunner &runner;
  TrainConfig config;
  double baseLr;
};

/// A 64-bit FNV-1a hash of the module's manifest.json, as 16 hex digits.
std::string manifestHash(const Module &module);

/// The same hash of bytes, as 16 hex digits.
std::string fnv1aHex(const void *data, size_t bytes,
                     uint64_t h = 0xcbf29ce484222325ull);

/// A hash of every param and buffer (brought to the host first): ranks of
/// a data parallel job compare it to check that they hold the same weights.
std::string stateHash(Executor &exec, ProgramRunner &runner);

} // namespace snnrt

#endif // SNNRT_TRAINER_H
