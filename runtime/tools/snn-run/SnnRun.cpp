//===- SnnRun.cpp - the snn-run launcher -----------------------------------===//
//
//   snn-run MODULE.snnmod infer [options]
//   snn-run MODULE.snnmod train [options]
//   snn-run MODULE.snnmod calibrate [options]
//
// Runs a compiled module (docs/artifact-format.md): inference over a dataset
// (outputs as .npy, samples/s, accuracy, spike rates) or training with
// per-epoch evaluation, metrics, checkpoints and exact resume; or measures
// the crossover densities of the event-driven layers on a device.
//
//===----------------------------------------------------------------------===//

#include "snnrt/BlasCore.h"
#include "snnrt/Calibration.h"
#include "snnrt/Communicator.h"
#include "snnrt/CpuThreads.h"
#include "snnrt/Dataset.h"
#include "snnrt/Error.h"
#include "snnrt/Executor.h"
#include "snnrt/Formats.h"
#include "snnrt/GradientReducer.h"
#include "snnrt/Recording.h"
#include "snnrt/ThreadCommunicator.h"
#include "snnrt/Trainer.h"

#ifdef SNNRT_HAVE_CUDA
#include "CudaBackend.h"
#include "NcclCommunicator.h"
#endif

#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <arpa/inet.h>
#include <csignal>
#include <cstring>
#include <functional>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace snnrt;

namespace {

const char *kUsage = R"(usage: snn-run MODULE.snnmod infer|train|grads|bench|calibrate [options]

Runs a module compiled by `snn-opt --snn-compile`.

common options:
  --device cpu|cuda|cuda:N   where to run (default: cuda:0 when this build has
                             CUDA and a GPU answers, else cpu)
  --threads N                CPU threads of the generated kernels, and of
                             OpenBLAS unless OPENBLAS_NUM_THREADS is set
                             (default: SNN_NUM_THREADS, else every core this
                             process may use); the kernels give the same
                             bits for every N, OpenBLAS at a fixed
                             OPENBLAS_NUM_THREADS
  --seed N                   seed of initialization, data order, encoders and
                             dropout (default 0)
  --weights FILE             params and buffers from a safetensors file
  --verbose                  print the module, the device and each program;
                             in training, a per-layer line after each epoch
                             (spike density in training and test)
  --profile                  time every op (no CUDA graphs) and print the time
                             per op kind of each program when the run ends
data:
  --data PATH                an IDX directory (train-/t10k-images-idx3-ubyte
                             [.gz] and their labels, e.g.
                             /usr/share/datasets/fashion-mnist), an IDX image
                             file, or a .npy array [N, sample...] or
                             pre-encoded [T, N, sample...]; infer without
                             --data: one batch of seeded random input
  --labels FILE              labels (.npy or IDX) of a --data file
  --spike-duration S         HDF5 spike files (.h5/.hdf5, the Spiking
                             Heidelberg Digits layout: /spikes/times,
                             /spikes/units, /labels) and event-camera
                             directories (N-MNIST's layout: class folders of
                             5-byte-event .bin files, Train/ and Test/):
                             seconds binned into the model's T steps
                             (default 1.0)
  --test-data FILE           train: evaluation samples (a --data directory
  --test-labels FILE         uses its t10k split)
  --encoder direct|rate|latency
                             direct: the input at every step (IDX bytes / 255);
                             rate: Bernoulli spikes with p = input; latency:
                             one spike per input at step round((1-x)(T-1)),
                             none for x <= 0 (default direct)
infer:
  --limit N                  use the first N samples
  --output FILE.npy          write the outputs [T, N, ...] (atomically)
  --record LAYER[:svh],...   record the state of neuron layers (names as in
                             the spike rates; `all`: every layer): s spikes,
                             v membrane after the step's reset, h membrane
                             after charging, before the reset (default: all
                             the layer has; a leaky integrator has v = h);
                             may be repeated
  --record-output FILE       where --record writes its traces: one
                             safetensors file (atomically), tensors
                             "<layer>.<s|v|h>" of shape [T, N, ...]
train:
  --epochs E                 (default 1)
  --lr LR                    (default: the module's optimizer.lr)
  --lr-schedule const|step|cosine  (--lr-step-size S, --lr-gamma G for step)
  --no-shuffle               keep the data order (default: seeded shuffle)
  --limit-train N, --limit-test N  use the first N samples of each split
  --metrics FILE.jsonl       one JSON object per epoch
  --checkpoint FILE          write a checkpoint (safetensors) every epoch
  --resume FILE              continue a run from its checkpoint, exactly as
                             if it had not stopped (same --seed)
  --no-progress              no progress bar on stderr
many processes (train, and infer/grads of a module compiled after
--snn-split-time=parts=N, whose ranks each run a time range, on the CPU
or on GPUs; docs/user-guide.md, "Many GPUs"):
  --nproc N                  start N ranks of this command on this machine
                             (through mpirun when it is there, else as child
                             processes with torchrun-style variables; a
                             split module on fewer GPUs than N: as threads,
                             see --comm threads)
  --comm mpi|tcp|nccl|threads
                             the ranks' backend (default: mpi under mpirun,
                             else tcp; nccl with --device cuda when
                             libnccl.so.2 loads); threads: the N ranks of
                             --nproc are threads of this process, on the CPU
                             or all on the one GPU of --device, each with
                             its own stream ("virtual devices")
  --data-parallel            train data parallel over the ranks of the job
                             (the default with more than one rank): the
                             global batch is ranks x the module's batch;
                             with a module split over P ranks and N = P x D
                             ranks: D data parallel replicas of the split,
                             rank r = d x P + p (a 2-D mesh)
  --comm-timeout SECONDS     a collective blocked this long ends every rank
                             with an error (default 300)
  --bucket-mb MB             gradient all-reduce bucket size (default 25)
  --comm-overlap, --no-comm-overlap
                             all-reduce each gradient bucket during the
                             backward, as soon as it is final, or after the
                             backward (the same bits either way); default:
                             during on host buffers (MPI, TCP), after with
                             NCCL (2 NVLink H100s: VGG-11 1.92x vs 1.87x)
  (started by `mpirun -np N snn-run ...`, or with the torchrun variables
  RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; --device cuda
  gives rank r its local GPU r)
grads:                       one forward + backward on the first batch of
                             --data/--labels (no update); --output FILE
                             .safetensors receives the loss, every
                             parameter gradient ("grad:<name>") and the
                             dropout masks drawn ("mask:<name>");
                             --update-steps K then runs the update program
                             K times (steps 1..K, the same gradients, --lr or
                             the module's) and adds the parameters and the
                             optimizer state ("updated:<name>")
bench:                       time the programs on one batch of seeded random
                             input and labels already on the device; prints
                             one JSON line {"fwd_ms", "step_ms", "mem_mb"
                             (GPU: allocator total; CPU: tensor storage),
                             "plan_arena_mb", "plan_unshared_mb"}
  --iterations N             timed repetitions (default 50, after 5 warm-up)
  --density D                input spikes (1 with probability D, else 0)
                             instead of uniform values (times event-driven
                             layers at that input density)
  --plan-only                run nothing: print the memory plan's numbers and
                             the bytes of the tensors saved for the backward
                             ("saved_mb") as one JSON line
calibrate:                   time the dense and the event-driven path of every
                             event-driven layer (forward and backward) on
                             --device at a sweep of input densities (random
                             input, the module's shapes), print the table and
                             write each layer's crossover (the density up to
                             which the event-driven path is faster) into
                             MODULE/calibration.json under this device's
                             architecture (sm_90, cpu-x86_64-v3, ...); the
                             other commands then run with those crossovers
  --densities D1,D2,...      the sweep, ascending in (0, 1] (default
                             0.001,0.005,0.01,0.02,0.05,0.1,0.2,0.5)
  --iterations N             timed runs per density, path and round (3
                             rounds; default 10)
)";

struct Options {
  std::string module, command, device, data, labels, testData, testLabels,
      encoder = "direct", weights, output, metrics, checkpoint, resume,
      schedule = "const", record, recordOutput;
  int64_t limit = -1, limitTest = -1, limitTrain = -1, epochs = 1,
          iterations = 50,
          stepSize = 1, updateSteps = 0;
  float lr = -1.0f, gamma = 0.1f;
  uint64_t seed = 0;
  bool verbose = false, shuffle = true, progress = true, profile = false,
       planOnly = false;
  double spikeDuration = 1.0;
  int nproc = 0;         ///< > 0: launch that many ranks
  int dataParallel = -1; ///< -1: on when the job has several ranks
  double commTimeout = 300.0, bucketMB = 25.0;
  std::string comm; ///< --comm: "" picks from the job
  int overlap = -1; ///< -1: per backend (host buffers yes, NCCL no)
  /// bench: spikes with this probability instead of uniform input (< 0: off).
  double benchDensity = -1.0;
  /// calibrate: the densities of the sweep.
  std::vector<double> densities = {0.001, 0.005, 0.01, 0.02,
                                   0.05,  0.1,   0.2,  0.5};
  bool iterationsGiven = false;
};

/// The job's communicator (train only; one local rank otherwise); one per
/// thread when the ranks are threads (--comm threads).
thread_local std::unique_ptr<Communicator> gComm;

/// A 2-D mesh of the job's N = P x D ranks (a module split over P ranks,
/// --data-parallel): rank r = d x P + p is time rank p of replica d. The
/// time group (the P ranks of replica d) is contiguous, so that it shares
/// a node or NVLink island; the data group holds time rank p of every
/// replica. Empty when the job is not a mesh.
struct Mesh {
  int parts = 1, replicas = 1;
  std::unique_ptr<Communicator> time, data;
};
thread_local Mesh gMesh;

/// The ranks that the split programs talk to: the time group of a mesh,
/// else the job's.
Communicator *timeRanks() {
  return gMesh.time ? gMesh.time.get() : gComm.get();
}

/// Whether `ops` (time loops' bodies included) hold a convolution.
bool hasConvolution(const std::vector<Op> &ops) {
  for (const Op &op : ops)
    if (op.kind == "conv2d" || op.kind == "conv2d_bwd" ||
        hasConvolution(op.body))
      return true;
  return false;
}

bool hasConvolution(const Module &m) {
  for (const auto &[name, ops] : m.programs)
    if (hasConvolution(ops))
      return true;
  return false;
}

/// The module this rank runs: of a module split in time
/// (--snn-split-time), its rank's program set.
Module loadModule(const Options &o, nlohmann::json manifest) {
  Communicator *ranksOfSplit = timeRanks();
  int rank = ranksOfSplit ? ranksOfSplit->rank() : 0,
      ranks = ranksOfSplit ? ranksOfSplit->size() : 1;
  Module m = Module::parse(
      Module::selectRank(std::move(manifest), o.module, rank, ranks), o.module);
  // The GEMMs of an event-driven module (its steps mostly generated kernels)
  // or of a convolutional one (many small GEMMs over column buffers) run on
  // the same threads as the kernels (CpuThreads.h); a module of a few large
  // GEMMs keeps OpenBLAS's threads.
  setGemmsOnPool(!m.eventSites.empty() || hasConvolution(m));
  return m;
}

/// A module split in time talks to the other ranks through gComm.
bool isSplit(const Module &m) { return m.split.parts > 1; }

int64_t toInt(const std::string &option, const std::string &v, int64_t min) {
  size_t used = 0;
  long long n = 0;
  try {
    n = std::stoll(v, &used);
  } catch (const std::logic_error &) {
    used = 0;
  }
  if (used != v.size() || v.empty() || n < min)
    throw Error(option + " expects an integer >= " + std::to_string(min) +
                ", not '" + v + "'");
  return n;
}

double toDouble(const std::string &option, const std::string &v) {
  size_t used = 0;
  double f = 0;
  try {
    f = std::stod(v, &used);
  } catch (const std::logic_error &) {
    used = 0;
  }
  if (used != v.size() || v.empty())
    throw Error(option + " expects a number, not '" + v + "'");
  return f;
}

float toFloat(const std::string &option, const std::string &v) {
  double d = toDouble(option, v);
  if (std::isfinite(d) && !std::isfinite(static_cast<float>(d)))
    throw Error(option + " is out of range: " + v);
  return static_cast<float>(d);
}

Options parse(int argc, char **argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw Error("option " + a + " needs a value (see snn-run --help)");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else if (a == "--device") {
      o.device = value();
    } else if (a == "--threads") {
      setCpuThreads(static_cast<int>(toInt(a, value(), 1)));
    } else if (a == "--data") {
      o.data = value();
    } else if (a == "--labels") {
      o.labels = value();
    } else if (a == "--test-data") {
      o.testData = value();
    } else if (a == "--test-labels") {
      o.testLabels = value();
    } else if (a == "--encoder") {
      o.encoder = value();
    } else if (a == "--limit") {
      o.limit = toInt(a, value(), 0);
    } else if (a == "--limit-test") {
      o.limitTest = toInt(a, value(), 0);
    } else if (a == "--limit-train") {
      o.limitTrain = toInt(a, value(), 0);
    } else if (a == "--weights") {
      o.weights = value();
    } else if (a == "--output") {
      o.output = value();
    } else if (a == "--record") {
      // Repeated --record options add up.
      std::string more = value();
      o.record += (o.record.empty() ? "" : ",") + more;
    } else if (a == "--record-output") {
      o.recordOutput = value();
    } else if (a == "--seed") {
      o.seed = static_cast<uint64_t>(toInt(a, value(), 0));
    } else if (a == "--update-steps") {
      o.updateSteps = toInt(a, value(), 1);
    } else if (a == "--epochs") {
      o.epochs = toInt(a, value(), 1);
    } else if (a == "--lr") {
      o.lr = toFloat(a, value());
      if (!(o.lr > 0))
        throw Error("--lr must be positive");
    } else if (a == "--lr-schedule") {
      o.schedule = value();
    } else if (a == "--lr-step-size") {
      o.stepSize = toInt(a, value(), 1);
    } else if (a == "--lr-gamma") {
      o.gamma = toFloat(a, value());
    } else if (a == "--metrics") {
      o.metrics = value();
    } else if (a == "--checkpoint") {
      o.checkpoint = value();
    } else if (a == "--resume") {
      o.resume = value();
    } else if (a == "--shuffle") {
      o.shuffle = true;
    } else if (a == "--no-shuffle") {
      o.shuffle = false;
    } else if (a == "--no-progress") {
      o.progress = false;
    } else if (a == "--iterations") {
      o.iterations = toInt(a, value(), 1);
      o.iterationsGiven = true;
    } else if (a == "--densities") {
      o.densities.clear();
      std::stringstream list(value());
      for (std::string d; std::getline(list, d, ',');) {
        double v = toDouble(a, d);
        if (!(v > 0.0 && v <= 1.0) ||
            (!o.densities.empty() && v <= o.densities.back()))
          throw Error("--densities must be ascending densities in (0, 1], "
                      "got '" + d + "'");
        o.densities.push_back(v);
      }
      if (o.densities.empty())
        throw Error("--densities needs at least one density");
    } else if (a == "--density") {
      o.benchDensity = toDouble(a, value());
      if (!(o.benchDensity >= 0.0 && o.benchDensity <= 1.0))
        throw Error("--density must be a probability in [0, 1], got " +
                    std::to_string(o.benchDensity));
    } else if (a == "--plan-only") {
      o.planOnly = true;
    } else if (a == "--verbose") {
      o.verbose = true;
    } else if (a == "--profile") {
      o.profile = true;
    } else if (a == "--nproc") {
      o.nproc = static_cast<int>(toInt(a, value(), 1));
    } else if (a == "--comm") {
      o.comm = value();
      if (o.comm != "mpi" && o.comm != "tcp" && o.comm != "nccl" &&
          o.comm != "threads")
        throw Error("--comm must be mpi, tcp, nccl or threads, not '" +
                    o.comm + "'");
    } else if (a == "--no-comm-overlap") {
      o.overlap = 0;
    } else if (a == "--comm-overlap") {
      o.overlap = 1;
    } else if (a == "--data-parallel") {
      o.dataParallel = 1;
    } else if (a == "--no-data-parallel") {
      o.dataParallel = 0;
    } else if (a == "--comm-timeout") {
      o.commTimeout = toDouble(a, value());
      if (!(o.commTimeout > 0))
        throw Error("--comm-timeout must be a positive number of seconds");
    } else if (a == "--bucket-mb") {
      o.bucketMB = toDouble(a, value());
      if (!(o.bucketMB > 0))
        throw Error("--bucket-mb must be positive");
    } else if (a == "--spike-duration") {
      // In double: spike times are binned as floor(t / duration * T), and a
      // float duration moves spikes that lie near a bin's edge.
      o.spikeDuration = toDouble(a, value());
    } else if (!a.empty() && a[0] == '-') {
      throw Error("unknown option " + a + " (see snn-run --help)");
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 2)
    throw Error("expected MODULE and a command (infer, train, grads, bench "
                "or calibrate); see snn-run --help");
  o.module = positional[0];
  o.command = positional[1];
  if (o.command != "infer" && o.command != "train" && o.command != "grads" &&
      o.command != "bench" && o.command != "calibrate")
    throw Error("unknown command '" + o.command +
                "' (expected infer, train, grads, bench or calibrate)");
  if ((!o.record.empty() || !o.recordOutput.empty()) && o.command != "infer")
    throw Error("--record and --record-output apply to infer, not " +
                o.command);
  parseEncoder(o.encoder); // validates
  return o;
}

bool isDir(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

#ifdef SNNRT_HAVE_CUDA
/// The CUDA backend's mirror of the host Executor as a ProgramRunner.
class CudaRunner : public ProgramRunner {
public:
  CudaRunner(Executor &exec, const std::string &device, bool profile)
      : gpu(exec, device, profile) {}
  using ProgramRunner::run; // the per-op hook: once, after the program
  void upload(int id) override { gpu.upload(id); }
  void download(int id) override { gpu.download(id); }
  void downloadWindow(int id, size_t first, size_t count) override {
    gpu.downloadWindow(id, first, count);
  }
  void downloadState() override { gpu.downloadState(); }
  void run(const std::string &program, const RunContext &ctx) override {
    gpu.run(program, ctx.learningRate, ctx.step, ctx.seed);
  }
  void synchronize() override { gpu.synchronize(); }
  std::size_t deviceBytes() const override { return gpu.deviceBytes(); }
  MemoryPlan memoryPlan() const override { return gpu.memoryPlan(); }
  std::string describe() const override { return gpu.describe(); }
  std::string arch() const override { return gpu.arch(); }
  void *devicePointer(int id) override { return gpu.devicePointer(id); }
  void *stream() override { return gpu.stream(); }
  bool enqueueAfterOps(const std::string &program, std::vector<size_t> ops,
                       std::function<void(size_t, void *)> enqueue) override {
    gpu.enqueueAfterOps(program, std::move(ops), std::move(enqueue));
    return true;
  }

private:
  CudaExecutor gpu;
};
#endif

/// The runner for --device; without --device, CUDA when a GPU answers.
/// --data / --test-data: a spike file, an event-camera directory (its
/// `split` folder when it has Train/ and Test/), or what loadDataset reads.
Dataset loadData(const std::string &path, const std::string &labels,
                 size_t sample, int64_t steps, const Options &o,
                 const std::string &split = "train") {
  bool events = isEventDirectory(path);
  if (!events && !isSpikeFile(path))
    return loadDataset(path, labels, sample, steps);
  if (!labels.empty())
    throw Error(labels + ": " + path + " holds its own labels (" +
                (events ? "its class folders" : "/labels") +
                "); drop --labels/--test-labels");
  if (events)
    return loadEventDirectory(path, split, sample, steps, o.spikeDuration);
  return loadSpikeFile(path, sample, steps, o.spikeDuration);
}

/// `localRank`: the rank of this process on its machine; `--device cuda`
/// (or no --device) in a job of several ranks picks GPU localRank.
std::unique_ptr<ProgramRunner> makeRunner(Executor &exec, const Options &o,
                                          int localRank = 0) {
  if (o.profile)
    exec.enableProfile();
  if (o.device == "cpu")
    return std::make_unique<CpuRunner>(exec);
#ifdef SNNRT_HAVE_CUDA
  std::string ownGpu = "cuda:" + std::to_string(localRank);
  if (o.device == "cuda" && localRank > 0)
    return std::make_unique<CudaRunner>(exec, ownGpu, o.profile);
  if (o.device.empty()) {
    try {
      return std::make_unique<CudaRunner>(exec, ownGpu, o.profile);
    } catch (const Error &e) {
      std::fprintf(stderr, "snn-run: no usable GPU (%s): running on the CPU\n",
                   e.what());
      return std::make_unique<CpuRunner>(exec);
    }
  }
  if (parseCudaDevice(o.device) < 0)
    throw Error("--device must be cpu, cuda or cuda:N, not '" + o.device + "'");
  return std::make_unique<CudaRunner>(exec, o.device, o.profile);
#else
  (void)localRank;
  if (o.device.empty())
    return std::make_unique<CpuRunner>(exec);
  if (o.device != "cuda" && o.device.rfind("cuda:", 0) != 0)
    throw Error("--device must be cpu, cuda or cuda:N, not '" + o.device + "'");
  throw Error("--device " + o.device +
              ": this snn-run was built without CUDA support; rebuild with "
              "the CUDA toolkit installed, or use --device cpu");
#endif
}

struct ModuleShape {
  int64_t T, B;
  size_t sample;
};

ModuleShape shapeOf(const Module &m) {
  const TensorInfo &in = m.tensor(m.input);
  if (in.shape.size() < 3)
    throw Error(m.dir + ": the input must be [T, B, sample...], got " +
                in.shapeString());
  return {in.shape[0], in.shape[1],
          in.numel() / static_cast<size_t>(in.shape[0] * in.shape[1])};
}

void describe(const Module &m, const ProgramRunner &runner,
              const std::vector<std::string> &programs) {
  std::cerr << "module " << m.dir << ": input "
            << m.tensor(m.input).shapeString() << ", output "
            << m.tensor(m.output).shapeString() << ", on "
            << runner.describe() << "\n";
  for (const std::string &name : programs) {
    const auto &ops = m.program(name);
    std::cerr << "program '" << name << "': " << ops.size() << " ops\n";
    for (size_t i = 0; i < ops.size(); ++i)
      std::cerr << "  " << ops[i].describe(i) << "\n";
  }
}

/// One compact line: per spiking layer its spike density in training and
/// in evaluation ('-': not measured).
void printLayerStats(const std::vector<LayerStats> &layers) {
  if (layers.empty())
    return;
  std::string line = "layers:";
  char buf[160];
  auto density = [&](double v) {
    if (v < 0)
      return std::string("-");
    std::snprintf(buf, sizeof(buf), "%.4f", v);
    return std::string(buf);
  };
  for (size_t l = 0; l < layers.size(); ++l) {
    const LayerStats &s = layers[l];
    line += (l ? " | " : " ") + s.name + " density train " +
            density(s.trainDensity) + " test " + density(s.testDensity);
  }
  std::printf("%s\n", line.c_str());
}

void printSpikeRates(const Module &m, const EvalResult &r) {
  for (size_t l = 0; l < m.spikeLayers.size(); ++l)
    std::printf("spike rate %-12s %.4f\n", m.spikeLayers[l].first.c_str(),
                r.spikeRates[l]);
}

/// The one report of the event-driven layers, forward and backward alike:
/// per layer and direction the density of the input the decision counted,
/// the share of calls that took the event-driven path, and the crossover.
void printEventPaths(const std::vector<EventPathStats> &stats,
                     const EventCrossovers &crossovers) {
  for (const EventPathStats &s : stats) {
    const EventCrossover *c = crossovers.find(s.layer, s.direction);
    std::printf("event layer %-12s %-8s input density %.4f, event path "
                "%.4f of %lld calls, crossover %.4f (%s)\n",
                s.layer.c_str(), s.direction.c_str(), s.density(),
                s.eventShare(), static_cast<long long>(s.calls),
                c ? c->crossover : 0.0,
                c && c->calibrated ? "calibrated" : "compile-time");
  }
}

/// Sets the event-driven layers' limits from MODULE/calibration.json for
/// the runner's device and says where the crossovers come from.
EventCrossovers useCalibration(Executor &exec, ProgramRunner &runner,
                               FILE *report) {
  EventCrossovers c = applyCalibration(exec, runner);
  bool lead = !gComm || gComm->rank() == 0;
  if (!c.layers.empty() && lead)
    std::fprintf(report, "event-driven crossovers: %s\n", c.source.c_str());
  return c;
}

std::string trainingFingerprint(const Options &o);
std::string dataFingerprint(const Dataset &d);

/// The ranks of a module split in time must run the same module, options,
/// data and weights: else each refuses to start with the same message.
void checkSameRanks(const Options &o, Executor &exec, ProgramRunner &runner,
                    const Dataset &data) {
  Communicator &comm = *gComm;
  checkSameOnAllRanks(comm, "the module (manifest hash)",
                      manifestHash(exec.module()));
  checkSameOnAllRanks(comm, "the options", o.command + " " +
                                               trainingFingerprint(o) +
                                               " limit=" +
                                               std::to_string(o.limit));
  checkSameOnAllRanks(comm, "the data", dataFingerprint(data));
  checkSameOnAllRanks(comm, "the weights (--seed, --weights)",
                      stateHash(exec, runner));
}

int infer(const Options &o) {
  if (o.record.empty() != o.recordOutput.empty())
    throw Error(o.record.empty()
                    ? "--record-output needs --record LAYER[:svh],..."
                    : "--record needs --record-output FILE.safetensors");
  // Recording rewrites the infer program before it is loaded.
  nlohmann::json manifest = Module::readManifest(o.module);
  if (!o.record.empty() && Module::isTimeSplit(manifest))
    throw Error("--record with a module split in time (--snn-split-time) is "
                "not supported: record the unsplit module");
  std::vector<RecordTrace> traces;
  if (!o.record.empty())
    traces = planRecording(manifest, o.record, o.module + "/manifest.json");
  Module module = loadModule(o, std::move(manifest));
  module.program("infer");
  for (const RecordTrace &trace : traces)
    module.hostReads.push_back(trace.tensor);
  if (gMesh.replicas > 1 && !(o.output.empty() && traces.empty()))
    throw Error("--output and --record are written by one replica: run the "
                "module split over " + std::to_string(gMesh.parts) +
                " ranks without --data-parallel");
  Executor exec(module, o.seed);
  if (!o.weights.empty())
    exec.loadWeights(o.weights);
  exec.setCommunicator(timeRanks());
  std::unique_ptr<ProgramRunner> runner =
      makeRunner(exec, o, detectJobEnvironment().localRank);
  EventCrossovers crossovers = useCalibration(exec, *runner, stdout);
  if (o.verbose)
    describe(exec.module(), *runner, {"infer"});
  ModuleShape s = shapeOf(exec.module());
  Dataset data;
  if (o.data.empty()) {
    std::cerr << "snn-run: no --data: running one batch of seeded random "
                 "input in [0, 1)\n";
    data = randomDataset(s.B, s.sample, o.seed);
  } else if (isDir(o.data) && !isEventDirectory(o.data)) {
    data = loadIdxSplit(o.data, "t10k", s.sample, s.T);
  } else {
    data = loadData(o.data, o.labels, s.sample, s.T, o, "test");
  }
  limitDataset(data, o.limit >= 0 ? o.limit : o.limitTest);
  if (isSplit(exec.module()))
    checkSameRanks(o, exec, *runner, data);
  std::vector<float> outputs;
  // A mesh: replica d evaluates batches d, d + D, ... on its time ranks.
  EvalResult r = evaluate(exec, *runner, data, parseEncoder(o.encoder),
                          o.seed, o.output.empty() ? nullptr : &outputs,
                          traces.empty() ? nullptr : &traces,
                          gMesh.data.get());
  // Every rank of a split holds the same outputs: rank 0 reports them.
  if (gComm && gComm->rank() != 0)
    return 0;
  std::printf("snn-run: %lld samples in %.3f s: %.1f samples/s (%s)\n",
              static_cast<long long>(r.samples), r.seconds,
              r.samples / r.seconds, runner->describe().c_str());
  if (!data.labels.empty())
    std::printf("accuracy: %.4f (%lld / %lld)\n",
                double(r.correct) / r.samples,
                static_cast<long long>(r.correct),
                static_cast<long long>(r.samples));
  printSpikeRates(exec.module(), r);
  printEventPaths(r.eventPaths, crossovers);
  if (!o.output.empty()) {
    std::vector<int64_t> shape = exec.module().tensor(module.output).shape;
    shape[1] = r.samples;
    writeNpy(o.output, shape, outputs.data());
  }
  if (!traces.empty()) {
    std::map<std::string, HostArray> tensors;
    for (RecordTrace &trace : traces) {
      std::vector<int64_t> shape = exec.module().tensor(trace.tensor).shape;
      shape[1] = r.samples;
      tensors[trace.name] = HostArray{shape, std::move(trace.data)};
    }
    writeSafetensors(o.recordOutput, tensors, {});
    std::printf("recorded %zu traces into %s\n", tensors.size(),
                o.recordOutput.c_str());
  }
  return 0;
}

/// What must agree between the ranks of a data parallel job: every option
/// that changes the training (not the rank-0-only outputs).
std::string trainingFingerprint(const Options &o) {
  std::ostringstream ss;
  ss << "epochs=" << o.epochs << " lr=" << o.lr << " schedule=" << o.schedule
     << " step=" << o.stepSize << " gamma=" << o.gamma << " seed=" << o.seed
     << " shuffle=" << o.shuffle << " encoder=" << o.encoder
     << " limit-train=" << o.limitTrain << " limit-test=" << o.limitTest
     << " spike-duration=" << o.spikeDuration << " bucket-mb=" << o.bucketMB
     << " resume=" << !o.resume.empty() << " data-parallel=" << o.dataParallel
     << " comm=" << o.comm;
  return ss.str();
}

/// The sample count and a hash of the labels and a strided sample of values.
std::string dataFingerprint(const Dataset &d) {
  std::string labels =
      d.labels.empty() ? "-" : fnv1aHex(d.labels.data(), d.labels.size() * sizeof d.labels[0]);
  std::vector<float> probe;
  for (size_t i = 0; i < d.samples.size(); i += 4099)
    probe.push_back(d.samples[i]);
  return std::to_string(d.count) + ":" + labels + ":" +
         fnv1aHex(probe.data(), probe.size() * sizeof(float));
}

int train(const Options &o) {
  Module module = loadModule(o, Module::readManifest(o.module));
  for (const char *program : {"train_forward", "backward", "update"})
    if (!module.programs.count(program))
      throw Error("'train' is not available for " + o.module +
                  ": it has no '" + program +
                  "' program; compile the model with a loss and an optimizer "
                  "(after --snn-autodiff) to train it");
  if (o.data.empty())
    throw Error("train needs --data (an IDX directory, or a .npy/IDX file "
                "with --labels)");
  if (!o.resume.empty() && !o.weights.empty())
    throw Error("--resume and --weights exclude each other: a checkpoint "
                "already holds the weights");
  Executor exec(module, o.seed);
  if (!o.weights.empty())
    exec.loadWeights(o.weights);
  Communicator &comm = *gComm;
  exec.setCommunicator(timeRanks());
  bool split = isSplit(exec.module());
  // A mesh trains data parallel over its data group (one replica: D = 1).
  bool mesh = gMesh.data != nullptr;
  TrainPosition from;
  if (!o.resume.empty())
    from = Trainer::loadCheckpoint(exec, o.resume, o.seed,
                                   mesh    ? gMesh.replicas
                                   : split ? 1
                                           : gComm->size());
  ModuleShape s = shapeOf(exec.module());
  bool dataParallel =
      mesh ||
      (!split && (o.dataParallel < 0 ? comm.size() > 1 : o.dataParallel));
  Communicator &dataRanks = mesh ? *gMesh.data : comm;
  if (comm.size() > 1 && !dataParallel && !split)
    throw Error("this job has " + std::to_string(comm.size()) +
                " ranks but --no-data-parallel: the module has nothing else "
                "to split over them");
  Dataset trainData, testData;
  if (isEventDirectory(o.data)) {
    trainData = loadData(o.data, o.labels, s.sample, s.T, o, "train");
    if (!o.testData.empty())
      testData = loadData(o.testData, o.testLabels, s.sample, s.T, o, "test");
    else if (eventDirectoryHasTestSplit(o.data))
      testData = loadData(o.data, "", s.sample, s.T, o, "test");
  } else if (isDir(o.data)) {
    trainData = loadIdxSplit(o.data, "train", s.sample, s.T);
    testData = loadIdxSplit(o.data, "t10k", s.sample, s.T);
  } else {
    trainData = loadData(o.data, o.labels, s.sample, s.T, o);
    if (!o.testData.empty())
      testData = loadData(o.testData, o.testLabels, s.sample, s.T, o);
  }
  limitDataset(trainData, o.limitTrain);
  limitDataset(testData, o.limitTest);
  // The device mirror copies the host tensors: after weights/resume.
  std::unique_ptr<ProgramRunner> runner =
      makeRunner(exec, o, detectJobEnvironment().localRank);
  EventCrossovers crossovers = useCalibration(exec, *runner, stdout);
  if (comm.size() > 1) {
    // Ranks that would train different things refuse to start, each with
    // the same message.
    checkSameOnAllRanks(comm, "the module (manifest hash)",
                        manifestHash(exec.module()));
    checkSameOnAllRanks(comm, "the training options", trainingFingerprint(o));
    checkSameOnAllRanks(comm, "the training data",
                        dataFingerprint(trainData) + "/" +
                            dataFingerprint(testData));
    checkSameOnAllRanks(comm, "the initial weights (--seed, --weights, --resume)",
                        stateHash(exec, *runner));
  }
  if (o.verbose && gComm->rank() == 0)
    describe(exec.module(), *runner, {"train_forward", "backward", "update"});
  TrainConfig config;
  config.epochs = o.epochs;
  config.lr = o.lr;
  config.schedule = o.schedule;
  config.stepSize = o.stepSize;
  config.gamma = o.gamma;
  config.shuffle = o.shuffle;
  config.seed = o.seed;
  config.encoder = parseEncoder(o.encoder);
  config.checkpoint = o.checkpoint;
  config.metrics = o.metrics;
  config.progress = o.progress;
  config.crossovers = crossovers;
  if (split)
    config.timeSplit = timeRanks();
  if (dataParallel) {
    config.comm = &dataRanks;
    config.bucketBytes = static_cast<size_t>(o.bucketMB * 1024 * 1024);
    config.overlap = o.overlap < 0 ? !dataRanks.deviceBuffers()
                                   : static_cast<bool>(o.overlap);
  }
  if (mesh)
    config.world = &comm;
  if (const char *failRank = std::getenv("SNN_TEST_FAIL_RANK")) {
    config.failRank = static_cast<int>(toInt("SNN_TEST_FAIL_RANK", failRank, 0));
    const char *step = std::getenv("SNN_TEST_FAIL_STEP");
    config.failStep = toInt("SNN_TEST_FAIL_STEP", step ? step : "1", 1);
    const char *mode = std::getenv("SNN_TEST_FAIL_MODE");
    config.failMode = mode ? mode : "throw";
  }
  Trainer trainer(exec, *runner, config);
  if (mesh && comm.rank() == 0)
    std::fprintf(stderr,
                 "snn-run: mesh of %d ranks (%s): %d time ranks x %d data "
                 "parallel replicas (rank = replica x %d + time rank), "
                 "global batch %d x %lld, %d steps, time rank 0 runs steps "
                 "[0, %d)\n",
                 comm.size(), comm.backendName().c_str(), gMesh.parts,
                 gMesh.replicas, gMesh.parts, gMesh.replicas,
                 static_cast<long long>(s.B), exec.module().split.steps,
                 exec.module().split.length());
  else if (split && comm.rank() == 0)
    std::fprintf(stderr,
                 "snn-run: split in time over %d ranks (%s): %d steps, rank "
                 "0 runs steps [0, %d)\n",
                 comm.size(), comm.backendName().c_str(),
                 exec.module().split.steps, exec.module().split.length());
  if (dataParallel && !mesh && comm.size() > 1 && comm.rank() == 0)
    std::fprintf(stderr,
                 "snn-run: data parallel over %d ranks (%s): global batch "
                 "%d x %lld\n",
                 comm.size(), comm.backendName().c_str(), comm.size(),
                 static_cast<long long>(s.B));
  if (from.epoch > 0 && comm.rank() == 0)
    std::fprintf(stderr, "snn-run: resuming after epoch %lld (step %lld)\n",
                 static_cast<long long>(from.epoch),
                 static_cast<long long>(from.step));
  trainer.fit(trainData, testData, from, [&](const EpochResult &r) {
    std::printf("epoch %lld/%lld: train loss %.4f acc %.4f", 
                static_cast<long long>(r.epoch),
                static_cast<long long>(o.epochs), r.trainLoss, r.trainAcc);
    if (r.tested) {
      if (r.test.hasLoss)
        std::printf(" | test loss %.4f", r.test.loss);
      std::printf(" acc %.4f", double(r.test.correct) / r.test.samples);
    }
    std::printf(" | %.1f samples/s, lr %g (%s)\n", r.samplesPerSecond, r.lr,
                runner->describe().c_str());
    if (r.tested)
      printSpikeRates(exec.module(), r.test);
    printEventPaths(r.eventPaths, crossovers);
    if (o.verbose)
      printLayerStats(r.layers);
    std::fflush(stdout);
  });
  return 0;
}

/// The loss and parameter gradients of one batch, for comparisons with
/// other frameworks and finite differences.
int grads(const Options &o) {
  if (gMesh.data)
    throw Error("grads computes one batch's gradients on one replica: run "
                "the module split over " + std::to_string(gMesh.parts) +
                " ranks without --data-parallel (mpirun -np " +
                std::to_string(gMesh.parts) + ")");
  Module module = loadModule(o, Module::readManifest(o.module));
  if (!module.programs.count("backward") || module.labels < 0 || module.loss < 0)
    throw Error("'grads' needs a module with training programs (compile the "
                "model with --snn-autodiff)");
  if (o.data.empty() || o.output.empty())
    throw Error("grads needs --data (with --labels) and --output "
                "FILE.safetensors");
  Executor exec(module, o.seed);
  if (!o.weights.empty())
    exec.loadWeights(o.weights);
  exec.setCommunicator(gComm.get());
  const Module &m = exec.module();
  ModuleShape s = shapeOf(m);
  Dataset data = loadData(o.data, o.labels, s.sample, s.T, o);
  if (data.labels.empty())
    throw Error(o.data + ": grads needs labels (--labels)");
  if (data.count < s.B)
    throw Error(o.data + ": has " + std::to_string(data.count) +
                " samples but the module's batch is " + std::to_string(s.B));
  std::vector<int64_t> order = epochOrder(data.count, 0, 0, false);
  encodeBatch(data, order, 0, s.B, s.T, s.B, parseEncoder(o.encoder),
              mixSeed({o.seed, 0, 0}), exec.data(m.input));
  exec.setLabels(data.labels.data(), static_cast<size_t>(s.B));
  std::unique_ptr<ProgramRunner> runner =
      makeRunner(exec, o, detectJobEnvironment().localRank);
  useCalibration(exec, *runner, stderr);
  if (isSplit(m))
    checkSameRanks(o, exec, *runner, data);
  runner->upload(m.input);
  runner->upload(m.labels);
  RunContext ctx{0.0f, 1, mixSeed({o.seed, 0, 0})};
  runner->run("train_forward", ctx);
  // The dropout masks this step drew ("mask:<name>"), before the backward
  // may reuse their storage.
  std::map<std::string, HostArray> out;
  for (const TensorInfo &t : m.tensors) {
    if (t.dtype != DType::U8)
      continue;
    runner->download(t.id);
    const float *values = exec.data(t.id);
    out["mask:" + t.name] =
        HostArray{t.shape, std::vector<float>(values, values + t.numel())};
  }
  size_t numMasks = out.size();
  runner->run("backward", ctx);
  for (const TensorInfo &t : m.tensors) {
    bool isGrad = t.name.rfind("grad:", 0) == 0 && t.name != "grad:output";
    if (!isGrad && t.id != m.loss)
      continue;
    runner->download(t.id);
    const float *values = exec.data(t.id);
    out[t.name] = HostArray{t.shape, std::vector<float>(values, values + t.numel())};
  }
  size_t numGrads = out.size() - 1 - numMasks;
  if (o.updateSteps > 0) {
    float lr = o.lr > 0 ? o.lr : m.optimizer.value("lr", 0.0f);
    for (int64_t k = 1; k <= o.updateSteps; ++k) {
      ctx.learningRate = lr;
      ctx.step = k;
      runner->run("update", ctx);
    }
    for (const TensorInfo &t : m.tensors) {
      if (t.role != "param" && t.role != "optimizer_state")
        continue;
      runner->download(t.id);
      const float *values = exec.data(t.id);
      out["updated:" + t.name] =
          HostArray{t.shape, std::vector<float>(values, values + t.numel())};
    }
  }
  // Every rank of a split holds the summed gradients: rank 0 writes them.
  if (gComm && gComm->rank() != 0)
    return 0;
  writeSafetensors(o.output, out);
  std::printf("snn-run: loss %.8g; %zu gradients written to %s (%s)\n",
              double(out["loss"].data.at(0)), numGrads, o.output.c_str(),
              runner->describe().c_str());
  return 0;
}

/// Milliseconds per run of `programs`, after warm-up runs.
double timePrograms(ProgramRunner &runner,
                    const std::vector<std::string> &programs,
                    int64_t iterations, const RunContext &ctx) {
  return millisecondsPerCall(
      runner,
      [&] {
        for (const std::string &p : programs)
          runner.run(p, ctx);
      },
      iterations, /*warmup=*/5);
}

int bench(const Options &o) {
  Module module = loadModule(o, Module::readManifest(o.module));
  Executor exec(module, o.seed);
  if (!o.weights.empty())
    exec.loadWeights(o.weights);
  exec.setCommunicator(timeRanks());
  const Module &m = exec.module();
  ModuleShape s = shapeOf(m);
  Dataset data = randomDataset(s.B, s.sample, o.seed);
  if (o.benchDensity >= 0.0)
    for (float &v : data.samples) // uniform in [0, 1): a spike with p = D
      v = v < o.benchDensity ? 1.0f : 0.0f;
  for (int64_t t = 0; t < s.T; ++t) // direct encoding: the same input each step
    std::copy(data.samples.begin(), data.samples.end(),
              exec.data(m.input) + t * s.B * static_cast<int64_t>(s.sample));
  std::unique_ptr<ProgramRunner> runner =
      makeRunner(exec, o, detectJobEnvironment().localRank);
  EventCrossovers crossovers = useCalibration(exec, *runner, stderr);
  if (o.planOnly) {
    MemoryPlan plan = runner->memoryPlan();
    double saved = 0.0;
    for (const TensorInfo &t : m.tensors)
      if (t.role == "saved")
        saved += double(t.bytes());
    const double mb = 1024.0 * 1024.0;
    std::printf("{\"device\": \"%s\", \"plan_arena_mb\": %.1f, "
                "\"plan_unshared_mb\": %.1f, \"saved_mb\": %.1f}\n",
                runner->describe().c_str(), double(plan.arenaBytes) / mb,
                double(plan.plannedBytes) / mb, saved / mb);
    return 0;
  }
  runner->upload(m.input);
  bool trainable = m.programs.count("train_forward") && m.labels >= 0;
  if (trainable) {
    std::vector<int32_t> labels(static_cast<size_t>(s.B));
    int64_t classes = m.tensor(m.output).shape.back();
    for (size_t i = 0; i < labels.size(); ++i)
      labels[i] = static_cast<int32_t>(i % static_cast<size_t>(classes));
    exec.setLabels(labels.data(), labels.size());
    runner->upload(m.labels);
  }
  // A tiny learning rate keeps the weights (and the spike counts) steady.
  RunContext ctx{1e-6f, 1, o.seed};
  double fwd = timePrograms(*runner, {"infer"}, o.iterations, ctx);
  MemoryPlan plan = runner->memoryPlan();
  double step = -1.0;
  if (trainable && gMesh.data) {
    // A mesh's step averages the gradients over the replicas, as train's.
    GradientReducer reducer(exec, *runner, *gMesh.data,
                            static_cast<size_t>(o.bucketMB * 1024 * 1024));
    bool overlap = o.overlap < 0 ? !gMesh.data->deviceBuffers()
                                 : static_cast<bool>(o.overlap);
    step = millisecondsPerCall(
        *runner,
        [&] {
          runner->run("train_forward", ctx);
          reducer.backward(ctx, overlap);
          runner->run("update", ctx);
        },
        o.iterations, /*warmup=*/5);
  } else if (trainable) {
    step = timePrograms(*runner, {"train_forward", "backward", "update"},
                        o.iterations, ctx);
  }
  // The ranks of a split time the same steps: rank 0 reports.
  if (gComm && gComm->rank() != 0)
    return 0;
  bool calibrated = false;
  for (const EventCrossover &c : crossovers.layers)
    calibrated |= c.calibrated;
  std::printf("{\"device\": \"%s\", \"batch\": %lld, \"time_steps\": %lld, "
              "\"ranks\": %d, \"comm\": \"%s\", \"replicas\": %d, "
              "\"crossovers\": \"%s\", "
              "\"fwd_ms\": %.4f, \"step_ms\": %.4f, \"mem_mb\": %.1f, "
              "\"plan_arena_mb\": %.1f, \"plan_unshared_mb\": %.1f}\n",
              runner->describe().c_str(), static_cast<long long>(s.B),
              static_cast<long long>(s.T), gComm ? gComm->size() : 1,
              gComm ? gComm->backendName().c_str() : "local", gMesh.replicas,
              crossovers.layers.empty() ? "none"
              : calibrated              ? "calibrated"
                                        : "compile-time",
              fwd, step,
              double(runner->deviceBytes()) / (1024.0 * 1024.0),
              double(plan.arenaBytes) / (1024.0 * 1024.0),
              double(plan.plannedBytes) / (1024.0 * 1024.0));
  return 0;
}

/// Measures each event-driven layer's crossover on the device and merges
/// them into MODULE/calibration.json.
int calibrate(const Options &o) {
  Module module = loadModule(
      o, addCalibrationPrograms(Module::readManifest(o.module), o.module));
  if (module.eventSites.empty())
    throw Error(o.module + ": the module has no event-driven layers to "
                           "calibrate (compile it after --snn-sparsify)");
  Executor exec(module, o.seed);
  if (!o.weights.empty())
    exec.loadWeights(o.weights);
  std::unique_ptr<ProgramRunner> runner =
      makeRunner(exec, o, detectJobEnvironment().localRank);
  CalibrateOptions options;
  options.densities = o.densities;
  options.iterations = o.iterationsGiven ? o.iterations : 10;
  options.seed = o.seed;
  std::printf("calibrate %s on %s (%s): %lld timed runs per density and "
              "path, best of 3 rounds\n",
              o.module.c_str(), runner->arch().c_str(),
              runner->describe().c_str(),
              static_cast<long long>(options.iterations));
  std::vector<LayerCalibration> layers =
      measureCrossovers(exec, *runner, options);
  std::printf("%-16s %-9s %8s %12s %12s %8s\n", "layer", "direction",
              "density", "event_ms", "dense_ms", "ratio");
  for (const LayerCalibration &c : layers)
    for (size_t i = 0; i < c.densities.size(); ++i)
      std::printf("%-16s %-9s %8.4f %12.4f %12.4f %8.3f\n", c.layer.c_str(),
                  c.direction.c_str(), c.densities[i], c.eventMs[i],
                  c.denseMs[i], c.denseMs[i] / c.eventMs[i]);
  for (const LayerCalibration &c : layers)
    std::printf("crossover %-16s %-9s %.4f\n", c.layer.c_str(),
                c.direction.c_str(), c.crossover);
  for (const EventSite &site : exec.module().eventSites)
    if (!site.denseFallback && site.program != "train_forward")
      std::printf("not calibrated: %s %s has no dense path (compiled with "
                  "crossover=1)\n",
                  site.layer.c_str(), site.direction.c_str());
  std::string path = writeCalibration(exec.module(), *runner, layers, options);
  std::printf("wrote %s (entry %s)\n", path.c_str(), runner->arch().c_str());
  return 0;
}

/// The directories of $PATH that hold an executable `name` ("" if none).
std::string findOnPath(const std::string &name) {
  const char *path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0)
      return dir + "/" + name;
  return "";
}

/// This command's arguments without --nproc N.
std::vector<std::string> argumentsWithoutNproc(int argc, char **argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--nproc") {
      ++i;
      continue;
    }
    args.push_back(argv[i]);
  }
  return args;
}

std::string thisExecutable() {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    throw Error("--nproc: cannot find this executable (/proc/self/exe)");
  return std::string(self, static_cast<size_t>(n));
}

[[noreturn]] void execute(const std::vector<std::string> &args) {
  std::vector<char *> cargs;
  for (const std::string &a : args)
    cargs.push_back(const_cast<char *>(a.c_str()));
  cargs.push_back(nullptr);
  std::fflush(nullptr);
  ::execv(cargs[0], cargs.data());
  std::fprintf(stderr, "snn-run: error: cannot run %s: %s\n", cargs[0],
               std::strerror(errno));
  std::_Exit(127);
}

/// A free TCP port of this machine for rank 0 to listen on.
int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr *>(&addr), len) < 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) < 0)
    throw Error("--nproc: cannot find a free port for the ranks to meet");
  ::close(fd);
  return ntohs(addr.sin_port);
}

/// N child processes with torchrun-style variables (the TCP rendezvous on
/// 127.0.0.1); returns the first failing rank's status, after ending the
/// others 5 s later (a rank that lost a peer ends by itself; this is the
/// backstop for one that hangs).
int spawnRanks(int n, const std::vector<std::string> &args) {
  std::string port = std::to_string(freePort());
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    pid_t pid = ::fork();
    if (pid < 0)
      throw Error("--nproc: cannot start rank " + std::to_string(r));
    if (pid == 0) {
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(n).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(n).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", port.c_str(), 1);
      execute(args);
    }
    pids.push_back(pid);
  }
  int status = 0, running = n;
  auto firstFailure = std::chrono::steady_clock::time_point::max();
  while (running > 0) {
    int ws = 0;
    pid_t pid = ::waitpid(-1, &ws, WNOHANG);
    if (pid > 0) {
      --running;
      int code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
      if (code != 0 && status == 0) {
        status = code;
        firstFailure = std::chrono::steady_clock::now();
      }
      continue;
    }
    if (status != 0 &&
        std::chrono::steady_clock::now() - firstFailure > std::chrono::seconds(5))
      for (pid_t p : pids)
        ::kill(p, SIGKILL); // exited ones are already reaped: harmless
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status;
}

int runCommand(const Options &o);

/// A module split in time over more ranks than this machine has GPUs runs
/// them as threads on one GPU (NCCL refuses two ranks on one GPU).
bool useThreadRanks(const Options &o, bool split) {
  if (!split || o.device == "cpu" || !o.comm.empty())
    return false;
#ifdef SNNRT_HAVE_CUDA
  int gpus = cudaDeviceCount();
  if (gpus == 0 || gpus >= o.nproc)
    return false;
  std::fprintf(stderr,
               "snn-run: %d ranks on %d GPU(s): the ranks are threads of one "
               "process on %s, each with its own stream (--comm threads)\n",
               o.nproc, gpus, o.device.empty() ? "cuda:0" : o.device.c_str());
  return true;
#else
  return false;
#endif
}

/// --comm threads: the N ranks are threads of this process, all on the CPU
/// or on the one GPU of --device. A rank's error ends the process.
int runThreadRanks(const Options &o) {
  if (o.comm == "threads" && o.device.empty())
    throw Error("--comm threads needs --device cpu, cuda or cuda:N (all "
                "ranks run there)");
  Options each = o;
  each.nproc = 0;
  each.comm = "threads";
  if (each.device.empty())
    each.device = "cuda:0";
  if (each.device == "cuda")
    each.device = "cuda:0"; // not the GPU of a local rank: the same for all
  std::vector<std::unique_ptr<Communicator>> ranks =
      createThreadGroup(o.nproc, o.commTimeout);
  std::vector<int> status(ranks.size(), 0);
  std::vector<std::thread> threads;
  for (size_t r = 0; r < ranks.size(); ++r)
    threads.emplace_back([&, r] {
      gComm = std::move(ranks[r]);
      try {
        status[r] = runCommand(each);
      } catch (const std::exception &e) {
        gComm->abort(e.what()); // ends the process: never a hang
      }
      gComm.reset();
    });
  for (std::thread &t : threads)
    t.join();
  for (int s : status)
    if (s != 0)
      return s;
  return 0;
}

/// snn-run --nproc N ...: this command again as N ranks: under mpirun
/// (which passes the ranks their places and ends them all when one fails)
/// when this build has MPI and mpirun is on PATH, else as child processes.
/// SNNRT_LAUNCHER=spawn picks the child processes.
int launchRanks(const Options &o, int argc, char **argv) {
  if (detectJobEnvironment().size > 1)
    throw Error("--nproc inside a job that already has ranks (mpirun or "
                "torchrun): drop --nproc");
  bool split = Module::isTimeSplit(Module::readManifest(o.module));
  if (o.command != "train" && !split)
    throw Error("--nproc applies to train, and to every command of a module "
                "split in time, not " + o.command);
  if (o.comm == "threads" && !split)
    throw Error("--comm threads runs the ranks of a module split in time "
                "(--snn-split-time); data parallel training takes mpi, tcp "
                "or nccl");
  if (o.comm == "threads" || useThreadRanks(o, split))
    return runThreadRanks(o);
  std::vector<std::string> rest = argumentsWithoutNproc(argc, argv);
  rest.insert(rest.begin(), thisExecutable());
  std::string mpirun = findOnPath("mpirun");
  const char *launcher = std::getenv("SNNRT_LAUNCHER");
  bool spawn = launcher && std::string(launcher) == "spawn";
  if (spawn || mpirun.empty() || !haveMpiBackend() || o.comm == "tcp" ||
      o.comm == "nccl")
    return spawnRanks(o.nproc, rest);
  std::vector<std::string> args = {mpirun};
  if (::geteuid() == 0)
    args.push_back("--allow-run-as-root");
  // Ranks may outnumber cores (CPU tests); each rank's BLAS threads are free
  // to move between cores.
  for (const char *a : {"--oversubscribe", "--bind-to", "none", "-np"})
    args.push_back(a);
  args.push_back(std::to_string(o.nproc));
  args.insert(args.end(), rest.begin(), rest.end());
  execute(args);
}

/// With --data-parallel, a module split over P ranks in a job of N = P x D
/// ranks: the time and data groups of the mesh (every rank splits the job
/// the same way, time group first).
void makeMesh(const Options &o) {
  nlohmann::json manifest = Module::readManifest(o.module);
  if (!gComm || !Module::isTimeSplit(manifest))
    return;
  int parts = manifest["split_time"].value("parts", 1);
  int n = gComm->size();
  if (o.dataParallel <= 0) {
    if (n > parts && n % parts == 0)
      throw Error("the module is split in time over " +
                  std::to_string(parts) + " ranks (--snn-split-time), but "
                  "this job has " + std::to_string(n) + "; run it with "
                  "mpirun -np " + std::to_string(parts) +
                  ", or add --data-parallel for " +
                  std::to_string(n / parts) +
                  " data parallel replicas of the split");
    return;
  }
  if (parts < 1 || n % parts != 0)
    throw Error("--data-parallel with a module split in time over " +
                std::to_string(parts) + " ranks needs a multiple of " +
                std::to_string(parts) + " ranks (" + std::to_string(parts) +
                " x the number of replicas), but this job has " +
                std::to_string(n));
  int r = gComm->rank();
  gMesh.parts = parts;
  gMesh.replicas = n / parts;
  gMesh.time = gComm->split(/*color=*/r / parts, /*key=*/r % parts);
  gMesh.data = gComm->split(/*color=*/r % parts, /*key=*/r / parts);
}

/// The command of one rank (gComm set).
int runCommand(const Options &o) {
  makeMesh(o);
  int status = o.command == "grads"       ? grads(o)
               : o.command == "infer"     ? infer(o)
               : o.command == "bench"     ? bench(o)
               : o.command == "calibrate" ? calibrate(o)
                                          : train(o);
  // Before the job's communicator (on an error, the job ends instead).
  gMesh = Mesh();
  return status;
}

} // namespace

int main(int argc, char **argv) {
  // First: OpenBLAS chose its kernels when it loaded (BlasCore.h).
  reexecWithBlasCore(argv);
  try {
    Options o = parse(argc, argv);
    if (o.nproc > 0)
      return launchRanks(o, argc, argv);
    if (o.comm == "threads")
      throw Error("--comm threads starts its ranks itself: add --nproc N");
    // A module split in time runs every command on its ranks.
    bool split = Module::isTimeSplit(Module::readManifest(o.module));
    if (o.command != "train" && !split) {
      JobEnvironment job = detectJobEnvironment();
      if (job.size > 1)
        throw Error(o.command + " runs in one process, but this job (" +
                    job.launcher + ") has " + std::to_string(job.size) +
                    " ranks; only train (and every command of a module "
                    "split in time) run on several ranks");
    }
    if (o.command == "bench" && !split)
      return bench(o);
    if (o.command == "grads" && !split)
      return grads(o);
    if (o.command == "infer" && !split)
      return infer(o);
    if (o.command == "calibrate")
      return calibrate(o);
#ifdef SNNRT_HAVE_CUDA
    registerNcclBackend(&createNcclCommunicator);
#endif
    CommOptions commOptions;
    commOptions.backend = o.comm;
    commOptions.device = o.device.rfind("cuda", 0) == 0 ? "cuda" : "cpu";
    commOptions.cudaDevice = o.device.rfind("cuda:", 0) == 0
                                 ? static_cast<int>(toInt("--device", o.device.substr(5), 0))
                                 : detectJobEnvironment().localRank;
    commOptions.timeoutSeconds = o.commTimeout;
    gComm = createCommunicator(commOptions);
    int status = runCommand(o);
    gComm.reset(); // MPI_Finalize
    return status;
  } catch (const std::exception &e) {
    // One rank's error ends the whole job (never a hang of the others).
    if (gComm && gComm->size() > 1)
      gComm->abort(e.what());
    std::fprintf(stderr, "snn-run: error: %s\n", e.what());
    return 1;
  }
}
