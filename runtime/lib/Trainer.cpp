//===- Trainer.cpp - evaluation and training loops ------------------------===//

#include "snnrt/Trainer.h"
#include "snnrt/Error.h"
#include "snnrt/GradientReducer.h"


#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

using nlohmann::json;

namespace snnrt {

ProgramRunner::~ProgramRunner() = default;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct BatchShape {
  int64_t T, B;
  size_t sample, outSample;
};

BatchShape batchShape(const Module &m) {
  const TensorInfo &in = m.tensor(m.input), &out = m.tensor(m.output);
  if (in.shape.size() < 3 || out.shape.size() < 3)
    throw Error(m.dir + ": the input and output must be [T, B, ...], got " +
                in.shapeString() + " and " + out.shapeString());
  BatchShape s;
  s.T = in.shape[0];
  s.B = in.shape[1];
  s.sample = in.numel() / static_cast<size_t>(s.T * s.B);
  s.outSample = out.numel() / static_cast<size_t>(s.T * s.B);
  return s;
}

void checkData(const Module &m, const BatchShape &s, const Dataset &d) {
  if (d.sampleSize != s.sample)
    throw Error(d.source + ": samples have " + std::to_string(d.sampleSize) +
                " values but the model's input takes " +
                std::to_string(s.sample) + " per sample");
  if (d.timeMajor && d.steps != s.T)
    throw Error(d.source + ": holds " + std::to_string(d.steps) +
                " time steps but " + m.dir + " was compiled for " +
                std::to_string(s.T));
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

/// A progress line on stderr: redrawn in place on a terminal, a plain line
/// per ~10% otherwise (logs stay readable).
class Progress {
public:
  Progress(bool enabled, int64_t epoch, int64_t epochs, int64_t batches)
      : enabled(enabled), tty(::isatty(2)), epoch(epoch), epochs(epochs),
        batches(batches), start(Clock::now()) {}
  void update(int64_t done, double loss, double acc, int64_t samples) {
    if (!enabled)
      return;
    int64_t every = std::max<int64_t>(1, batches / 10);
    if (!tty && done % every && done != batches)
      return;
    double t = secondsSince(start);
    double eta = done ? t / done * (batches - done) : 0.0;
    char line[256];
    int width = 24, filled = static_cast<int>(width * done / batches);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(static_cast<size_t>(width), '.');
    std::snprintf(line, sizeof line,
                  "epoch %lld/%lld [%s] %lld/%lld loss %.4f acc %.4f "
                  "%.0f samples/s ETA %.0fs",
                  static_cast<long long>(epoch), static_cast<long long>(epochs),
                  bar.c_str(), static_cast<long long>(done),
                  static_cast<long long>(batches), loss, acc,
                  t > 0 ? samples / t : 0.0, eta);
    std::fprintf(stderr, tty ? "\r%s\033[K" : "%s\n", line);
    if (tty && done == batches)
      std::fputc('\n', stderr);
  }

private:
  bool enabled, tty;
  int64_t epoch, epochs, batches;
  Clock::time_point start;
};

} // namespace

std::string manifestHash(const Module &module) {
  std::ifstream in(module.dir + "/manifest.json", std::ios::binary);
  if (!in)
    throw Error(module.dir + "/manifest.json: cannot read the manifest");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  return fnv1aHex(text.data(), text.size());
}

std::string fnv1aHex(const void *data, size_t bytes, uint64_t h) {
  const auto *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < bytes; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return hex(h);
}

std::string stateHash(Executor &exec, ProgramRunner &runner) {
  runner.downloadState();
  std::string all;
  for (const TensorInfo &t : exec.module().tensors)
    if (t.role == "param")
      all += t.name + "=" + fnv1aHex(exec.data(t.id), t.numel() * sizeof(float)) + ";";
  return fnv1aHex(all.data(), all.size());
}

/// Appends the first `valid` samples of tensor [T, B, ...] `y` to `all`
/// [T, count, ...] at sample `first`.
static void gatherSamples(const float *y, int64_t T, int64_t B,
                          size_t perSample, int64_t valid, int64_t first,
                          int64_t count, std::vector<float> &all) {
  for (int64_t t = 0; t < T; ++t)
    std::copy(y + (t * B) * perSample, y + (t * B + valid) * perSample,
              all.begin() + (t * count + first) * perSample);
}

EvalResult evaluate(Executor &exec, ProgramRunner &runner, const Dataset &data,
                    Encoder encoder, uint64_t encoderSeed,
                    std::vector<float> *outputs,
                    std::vector<RecordTrace> *traces, Communicator *comm) {
  const Module &m = exec.module();
  int rank = comm ? comm->rank() : 0, ranks = comm ? comm->size() : 1;
  if (ranks > 1 && (outputs || traces))
    throw Error("outputs and recorded traces are written by one process; "
                "run infer without mpirun/--nproc");
  BatchShape s = batchShape(m);
  checkData(m, s, data);
  // The `evaluate` program computes the loss (a module without a loss op:
  // only the correct count) on the output.
  bool labeled = !data.labels.empty() && m.evalLoss >= 0;
  EvalResult r;
  r.samples = data.count;
  r.hasLoss = labeled && m.loss >= 0;
  r.spikeRates.assign(m.spikeLayers.size(), 0.0);
  int64_t batches = 0;
  if (outputs)
    outputs->assign(static_cast<size_t>(s.T * data.count) * s.outSample, 0.0f);
  std::vector<size_t> tracePerSample;
  for (size_t k = 0; traces && k < traces->size(); ++k) {
    RecordTrace &trace = (*traces)[k];
    size_t per = m.tensor(trace.tensor).numel() / static_cast<size_t>(s.T * s.B);
    tracePerSample.push_back(per);
    trace.data.assign(static_cast<size_t>(s.T * data.count) * per, 0.0f);
  }
  std::vector<int64_t> order = epochOrder(data.count, 0, 0, false);
  float *x = exec.data(m.input);
  double lossSum = 0.0;
  auto start = Clock::now();
  for (int64_t first = 0, batch = 0; first < data.count;
       first += s.B, ++batch) {
    if (batch % ranks != rank)
      continue;
    int64_t valid = std::min(s.B, data.count - first);
    encodeBatch(data, order, first, valid, s.T, s.B, encoder,
                mixSeed({encoderSeed, 0xe7a1ULL, uint64_t(batch)}), x);
    runner.upload(m.input);
    runner.run("infer", RunContext{});
    runner.download(m.output);
    for (const auto &layer : m.spikeLayers)
      runner.download(layer.second);
    const float *y = exec.data(m.output);
    if (outputs)
      gatherSamples(y, s.T, s.B, s.outSample, valid, first, data.count,
                    *outputs);
    for (size_t k = 0; traces && k < traces->size(); ++k) {
      RecordTrace &trace = (*traces)[k];
      runner.download(trace.tensor);
      gatherSamples(exec.data(trace.tensor), s.T, s.B, tracePerSample[k],
                    valid, first, data.count, trace.data);
    }
    if (labeled) {
      // Padding samples of the last batch get the label -1: skipped, the
      // loss is the mean over the `valid` others.
      try {
        exec.setLabels(data.labels.data() + first, static_cast<size_t>(valid),
                       m.evalLabels);
      } catch (const Error &e) {
        throw Error(data.source + ": " + e.what());
      }
      runner.upload(m.evalLabels);
      runner.run("evaluate", RunContext{});
      runner.download(m.evalLoss);
      runner.download(m.evalCorrect);
      lossSum += double(*exec.data(m.evalLoss)) * double(valid);
      r.correct += std::llround(*exec.data(m.evalCorrect));
    }
    ++batches;
    addEventPaths(exec, runner, "infer", r.eventPaths);
    for (size_t l = 0; l < m.spikeLayers.size(); ++l) {
      const TensorInfo &st = m.tensor(m.spikeLayers[l].second);
      const float *p = exec.data(st.id);
      size_t per = st.numel() / static_cast<size_t>(s.T * s.B);
      double sum = 0.0;
      for (int64_t t = 0; t < s.T; ++t)
        for (size_t i = 0; i < static_cast<size_t>(valid) * per; ++i)
          sum += p[static_cast<size_t>(t * s.B) * per + i];
      r.spikeRates[l] += sum / static_cast<double>(per * s.T);
    }
  }
  if (ranks > 1) {
    // Sums over the ranks' batches: loss, correct, spike counts.
    std::vector<float> totals = {float(lossSum), float(r.correct)};
    totals.insert(totals.end(), r.spikeRates.begin(), r.spikeRates.end());
    comm->host().allReduceSum(totals.data(), totals.size());
    lossSum = totals[0];
    r.correct = static_cast<int64_t>(std::llround(totals[1]));
    std::copy(totals.begin() + 2, totals.end(), r.spikeRates.begin());
  }
  r.seconds = secondsSince(start);
  if (data.count) {
    r.loss = lossSum / data.count;
    for (double &rate : r.spikeRates)
      rate /= data.count;
  }
  return r;
}

double millisecondsPerCall(ProgramRunner &runner,
                           const std::function<void()> &once,
                           int64_t iterations, int warmup) {
  for (int i = 0; i < warmup; ++i)
    once();
  runner.synchronize();
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iterations; ++i)
    once();
  runner.synchronize();
  std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  return elapsed.count() / double(iterations);
}

/// The entry of `layer` in `direction`, added (zero calls) on first use.
static EventPathStats &entryOf(std::vector<EventPathStats> &stats,
                               const std::string &layer,
                               const std::string &direction) {
  auto it = std::find_if(stats.begin(), stats.end(), [&](const auto &s) {
    return s.layer == layer && s.direction == direction;
  });
  if (it == stats.end())
    it = stats.insert(stats.end(), EventPathStats{layer, direction});
  return *it;
}

void addEventPaths(Executor &exec, ProgramRunner &runner,
                   const std::string &program,
                   std::vector<EventPathStats> &stats) {
  for (const EventSite &site : exec.module().eventSites) {
    if (site.program != program)
      continue;
    EventPathStats &entry = entryOf(stats, site.layer, site.direction);
    runner.download(site.decision);
    int32_t decision[2];
    std::memcpy(decision, exec.data(site.decision), sizeof(decision));
    ++entry.calls;
    entry.eventCalls += decision[1] != 0;
    entry.densitySum += double(decision[0]) / double(std::max<int64_t>(
                                                  site.elements, 1));
  }
}

void mergeEventPaths(std::vector<EventPathStats> &into,
                     const std::vector<EventPathStats> &from) {
  for (const EventPathStats &s : from) {
    EventPathStats &entry = entryOf(into, s.layer, s.direction);
    entry.calls += s.calls;
    entry.eventCalls += s.eventCalls;
    entry.densitySum += s.densitySum;
  }
}

std::string ProgramRunner::arch() const { return hostCpuArch(); }

json eventPathsJson(const std::vector<EventPathStats> &stats,
                    const EventCrossovers &crossovers) {
  json out = json::object();
  for (const EventPathStats &s : stats) {
    json entry = {{"calls", s.calls},
                  {"event_share", s.eventShare()},
                  {"input_density", s.density()}};
    if (const EventCrossover *c = crossovers.find(s.layer, s.direction)) {
      entry["crossover"] = c->crossover;
      entry["calibrated"] = c->calibrated;
    }
    out[s.layer][s.direction] = std::move(entry);
  }
  return out;
}

double spikeDensity(const float *data, size_t numel, bool bits,
                    size_t count) {
  if (count == 0)
    return 0.0;
  uint64_t ones = 0;
  if (bits) {
    // The CPU keeps a u32 word in a 4-byte slot; the GPU's copy is the same.
    for (size_t w = 0; w < numel; ++w) {
      uint32_t word;
      std::memcpy(&word, data + w, sizeof(word));
      ones += static_cast<uint64_t>(__builtin_popcount(word));
    }
  } else {
    for (size_t i = 0; i < count; ++i)
      ones += data[i] != 0.0f;
  }
  return double(ones) / double(count);
}

Trainer::Trainer(Executor &exec, ProgramRunner &runner, TrainConfig config)
    : exec(exec), runner(runner), config(std::move(config)) {
  const Module &m = exec.module();
  for (const char *program : {"train_forward", "backward", "update"})
    m.program(program); // a clear error when the module cannot train
  if (m.labels < 0 || m.loss < 0)
    throw Error(m.dir + ": the module has no labels or loss tensor; compile "
                        "it with a loss to train");
  baseLr = this->config.lr;
  if (baseLr < 0) {
    if (!m.optimizer.is_object() || !m.optimizer.contains("lr"))
      throw Error(m.dir + ": the module's optimizer has no learning rate; "
                          "pass --lr");
    baseLr = m.optimizer.at("lr").get<double>();
  }
  if (this->config.schedule != "const" && this->config.schedule != "step" &&
      this->config.schedule != "cosine")
    throw Error("--lr-schedule must be const, step or cosine, not '" +
                this->config.schedule + "'");
  if (this->config.stepSize <= 0)
    throw Error("--lr-step-size must be positive");
}

double Trainer::learningRate(int64_t epoch) const {
  if (config.schedule == "step") // torch.optim.lr_scheduler.StepLR
    return baseLr * std::pow(double(config.gamma), double(epoch / config.stepSize));
  if (config.schedule == "cosine") // CosineAnnealingLR, T_max = epochs
    return baseLr * 0.5 *
           (1.0 + std::cos(M_PI * double(epoch) / double(config.epochs)));
  return baseLr;
}

TrainPosition Trainer::loadCheckpoint(Executor &exec, const std::string &path,
                                      uint64_t seed, int ranks) {
  std::map<std::string, std::string> meta;
  auto tensors = readSafetensors(path, &meta);
  auto field = [&](const char *key) -> const std::string & {
    auto it = meta.find(key);
    if (it == meta.end())
      throw Error(path + ": not a training checkpoint of snn-run (no '" +
                  std::string(key) + "' in its __metadata__)");
    return it->second;
  };
  if (field("manifest_hash") != manifestHash(exec.module()))
    throw Error(path + ": was written for a different module than " +
                exec.module().dir + "; resume with the module it came from");
  if (field("seed") != std::to_string(seed))
    throw Error(path + ": was trained with --seed " + field("seed") +
                ", not " + std::to_string(seed) +
                "; resume with the same seed (data order and encoders "
                "derive from it)");
  // Data parallel checkpoints say how many ranks wrote them (the global
  // batch, hence the data order and the step count, depend on it); those
  // of a hybrid mesh, how many replicas.
  auto written = meta.find("ranks");
  std::string writtenRanks = written == meta.end() ? "1" : written->second;
  if (writtenRanks != std::to_string(ranks)) {
    std::string parts = exec.module().split.parts > 1
                            ? std::to_string(exec.module().split.parts)
                            : "";
    throw Error(path + ": was written by a data parallel job of " +
                writtenRanks + " rank(s), not " + std::to_string(ranks) +
                "; resume with as many ranks (--nproc / mpirun -np " +
                (parts.empty() ? writtenRanks
                               : parts + " x " + writtenRanks +
                                     " with --data-parallel: a module split "
                                     "over " + parts + " ranks") +
                ")");
  }
  TrainPosition pos;
  try {
    pos.epoch = std::stoll(field("epoch"));
    pos.step = std::stoll(field("step"));
  } catch (const std::logic_error &) {
    throw Error(path + ": malformed epoch/step in its __metadata__");
  }
  exec.loadState(tensors, path, /*optimizerState=*/true);
  return pos;
}

void Trainer::writeCheckpoint(const TrainPosition &pos) {
  runner.downloadState();
  std::map<std::string, std::string> meta = {
      {"format", "snn-checkpoint"},
      {"epoch", std::to_string(pos.epoch)},
      {"step", std::to_string(pos.step)},
      {"seed", std::to_string(config.seed)},
      {"rng", "derived from (seed, epoch, batch, step)"},
      {"manifest_hash", manifestHash(exec.module())}};
  if (ranks() > 1)
    meta["ranks"] = std::to_string(ranks());
  writeSafetensors(config.checkpoint, exec.state(), meta);
}

void Trainer::injectFault(int64_t step) const {
  if (config.failRank != rank() || config.failStep != step)
    return;
  std::string what = "injected failure of rank " + std::to_string(rank()) +
                     " at step " + std::to_string(step) +
                     " (SNN_TEST_FAIL_RANK/SNN_TEST_FAIL_STEP)";
  if (config.failMode == "exit") {
    std::fprintf(stderr, "snn-run: %s: exiting\n", what.c_str());
    std::_Exit(3);
  }
  if (config.failMode == "hang") {
    std::fprintf(stderr, "snn-run: %s: hanging\n", what.c_str());
    for (;;)
      std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  throw Error(what);
}

void Trainer::fit(const Dataset &train, const Dataset &test,
                  TrainPosition from,
                  const std::function<void(const EpochResult &)> &onEpoch) {
  const Module &m = exec.module();
  BatchShape s = batchShape(m);
  checkData(m, s, train);
  if (train.labels.empty())
    throw Error(train.source + ": training needs labels (--labels)");
  // Data parallel: a global batch of ranks x B rows; rank r takes rows
  // [r*B, (r+1)*B) of each. The incomplete last global batch is dropped.
  const int64_t P = ranks(), G = P * s.B;
  const bool lead = rank() == 0;
  int64_t batches = train.count / G;
  if (batches == 0)
    throw Error(train.source + ": " + std::to_string(train.count) +
                " training samples, fewer than one " +
                (P > 1 ? "global batch of " + std::to_string(P) + " ranks x " +
                             std::to_string(s.B)
                       : "batch of " + std::to_string(s.B)));
  std::unique_ptr<GradientReducer> reducer;
  // Also with one rank when asked (--data-parallel): the same path, e.g. to
  // check a backend's collectives against training without them.
  if (config.comm)
    reducer = std::make_unique<GradientReducer>(exec, runner, *config.comm,
                                                config.bucketBytes);
  if (from.epoch >= config.epochs && lead)
    std::fprintf(stderr, "snn-run: the checkpoint already has %lld of %lld "
                         "epochs: nothing to train\n",
                 static_cast<long long>(from.epoch),
                 static_cast<long long>(config.epochs));
  std::ofstream metrics;
  if (!config.metrics.empty() && lead) {
    metrics.open(config.metrics, from.epoch > 0 ? std::ios::app
                                                : std::ios::trunc);
    if (!metrics)
      throw Error(config.metrics + ": cannot write the metrics file");
  }
  float *x = exec.data(m.input);
  std::vector<int32_t> labels(static_cast<size_t>(s.B));
  TrainPosition pos = from;
  // Training spike densities from about 16 batches per epoch: each one
  // copies the layers' spikes to the host.
  int64_t densityStride = std::max<int64_t>(1, batches / 16);
  const size_t densityWindow = size_t(1) << 18; // elements
  size_t layers = m.spikeLayers.size();
  for (int64_t epoch = from.epoch; epoch < config.epochs; ++epoch) {
    double lr = learningRate(epoch);
    std::vector<int64_t> order =
        epochOrder(train.count, config.seed, epoch, config.shuffle);
    Progress progress(config.progress && lead, epoch + 1, config.epochs,
                      batches);
    double lossSum = 0.0;
    int64_t correct = 0;
    auto start = Clock::now();
    std::vector<double> densitySum(layers, 0.0);
    int64_t densityBatches = 0;
    std::vector<EventPathStats> eventPaths;
    // Batch b + 1 is encoded while the device runs step b: the input's host
    // buffer is free once its upload has been enqueued (staged copies) and,
    // on the CPU, once the step has run.
    auto encode = [&](int64_t b) {
      int64_t first = b * G + dataRank() * s.B;
      encodeBatch(train, order, first, s.B, s.T, s.B, config.encoder,
                  mixSeed({config.seed, uint64_t(epoch), uint64_t(b)}), x, G,
                  dataRank() * s.B);
      for (int64_t i = 0; i < s.B; ++i)
        labels[i] = train.labels[order[first + i]];
    };
    encode(0);
    for (int64_t b = 0; b < batches; ++b) {
      exec.setLabels(labels.data(), labels.size());
      runner.upload(m.input);
      runner.upload(m.labels);
      ++pos.step;
      injectFault(pos.step);
      RunContext ctx;
      ctx.learningRate = static_cast<float>(lr);
      ctx.step = pos.step;
      ctx.seed = mixSeed({config.seed, 0xd50ULL, uint64_t(pos.step)});
      runner.run("train_forward", ctx);
      bool sampled = b % densityStride == 0;
      if (sampled) {
        addEventPaths(exec, runner, "train_forward", eventPaths);
        for (size_t l = 0; l < layers; ++l) {
          auto [id, bits] = m.spikeLayerTrain[l];
          if (id < 0)
            continue;
          // A window of at most 1 MiB at a seeded offset: the estimate over
          // an epoch is unbiased, and a large layer's read-back (VGG-11's
          // first: 67 MB) does not stall the device every few steps.
          size_t numel = m.tensor(id).numel(), window = densityWindow;
          size_t count = m.tensor(m.spikeLayers[l].second).numel();
          size_t first = 0;
          if (numel > window) {
            first = mixSeed({config.seed, uint64_t(epoch), uint64_t(b), l}) %
                    (numel - window + 1);
            count = static_cast<size_t>(double(count) * window / numel);
          } else {
            window = numel;
          }
          runner.downloadWindow(id, first, window);
          densitySum[l] +=
              spikeDensity(exec.data(id) + first, window, bits, count);
        }
        ++densityBatches;
      }
      if (reducer)
        reducer->backward(ctx, config.overlap);
      else
        runner.run("backward", ctx);
      if (sampled)
        addEventPaths(exec, runner, "backward", eventPaths);
      runner.run("update", ctx);
      if (reducer)
        reducer->averageBuffers();
      if (b + 1 < batches)
        encode(b + 1);
      runner.download(m.loss);
      // The step's loss (mean over the global batch) and correct count.
      float stats[2] = {*exec.data(m.loss), 0.0f};
      if (m.correct >= 0) {
        runner.download(m.correct);
        stats[1] = *exec.data(m.correct);
      }
      if (P > 1) {
        config.comm->host().allReduceSum(stats, 2);
        stats[0] /= static_cast<float>(P);
      }
      float loss = stats[0];
      if (!std::isfinite(loss))
        throw Error("the training loss became " + std::to_string(loss) +
                    " at epoch " + std::to_string(epoch + 1) + ", batch " +
                    std::to_string(b + 1) + "; lower the learning rate");
      lossSum += loss;
      correct += static_cast<int64_t>(std::llround(stats[1]));
      progress.update(b + 1, lossSum / (b + 1),
                      double(correct) / double((b + 1) * G), (b + 1) * G);
    }
    EpochResult r;
    r.epoch = epoch + 1;
    r.trainLoss = lossSum / batches;
    r.trainAcc = double(correct) / double(batches * G);
    r.samplesPerSecond = double(batches * G) / secondsSince(start);
    r.lr = lr;
    if (!test.empty()) {
      r.tested = true;
      r.test = evaluate(exec, runner, test, config.encoder,
                        mixSeed({config.seed, 0x7e57ULL, uint64_t(epoch)}),
                        nullptr, nullptr, P > 1 ? config.comm : nullptr);
    }
    r.layers.resize(layers);
    for (size_t l = 0; l < layers; ++l) {
      LayerStats &stats = r.layers[l];
      stats.name = m.spikeLayers[l].first;
      if (m.spikeLayerTrain[l].first >= 0 && densityBatches > 0)
        stats.trainDensity = densitySum[l] / double(densityBatches);
      if (r.tested)
        stats.testDensity = r.test.spikeRates[l];
    }
    r.eventPaths = std::move(eventPaths);
    if (r.tested)
      mergeEventPaths(r.eventPaths, r.test.eventPaths);
    pos.epoch = epoch + 1;
    if (job() && job()->size() > 1) // the ranks must hold the same weights
      checkSameOnAllRanks(*job(),
                          "the weights after epoch " + std::to_string(pos.epoch),
                          stateHash(exec, runner));
    if (!config.checkpoint.empty() && lead)
      writeCheckpoint(pos);
    if (metrics.is_open()) {
      json line = {{"epoch", r.epoch},
                   {"train_loss", r.trainLoss},
                   {"train_acc", r.trainAcc},
                   {"samples_per_s", r.samplesPerSecond},
                   {"lr", r.lr},
                   {"step", pos.step}};
      if (P > 1)
        line["ranks"] = P;
      line["test_loss"] = r.tested && r.test.hasLoss ? json(r.test.loss) : json();
      line["test_acc"] = r.tested && r.test.samples
                             ? json(double(r.test.correct) / r.test.samples)
                             : json();
      json rates = json::object();
      for (size_t l = 0; r.tested && l < m.spikeLayers.size(); ++l)
        rates[m.spikeLayers[l].first] = r.test.spikeRates[l];
      line["spike_rates"] = rates;
      json perLayer = json::object();
      auto measured = [](double v) { return v < 0.0 ? json() : json(v); };
      for (const LayerStats &stats : r.layers)
        perLayer[stats.name] = {
            {"train_density", measured(stats.trainDensity)},
            {"test_density", measured(stats.testDensity)}};
      line["layers"] = perLayer;
      if (!m.eventSites.empty())
        line["event_layers"] =
            eventPathsJson(r.eventPaths, config.crossovers);
      metrics << line.dump() << "\n" << std::flush;
    }
    if (onEpoch && lead)
      onEpoch(r);
    // Rank 0's checkpoint is complete before any rank moves on (a resume
    // after a kill finds the last epoch's file).
    if (job() && job()->size() > 1)
      job()->host().barrier();
  }
}

} // namespace snnrt
