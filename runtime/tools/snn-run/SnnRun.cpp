//===- SnnRun.cpp - the snn-run launcher -----------------------------------===//
//
//   snn-run MODULE.snnmod infer [options]
//
// Runs a compiled module (docs/artifact-format.md) on a dataset or on seeded
// random input, writes the outputs as .npy and prints samples/s, accuracy and
// the spike rate of every spiking layer.
//
//===----------------------------------------------------------------------===//

#include "snnrt/Error.h"
#include "snnrt/Executor.h"
#include "snnrt/Formats.h"

#ifdef SNNRT_HAVE_CUDA
#include "CudaBackend.h"
#endif

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace snnrt;

namespace {

const char *kUsage = R"(usage: snn-run MODULE.snnmod infer [options]

Runs a module compiled by `snn-opt --snn-compile`.

options:
  --device cpu|cuda|cuda:N   where to run (default cpu; cuda needs a build
                             with the CUDA toolkit and an NVIDIA driver)
  --data PATH                an IDX directory (t10k-images-idx3-ubyte[.gz] and
                             t10k-labels-idx1-ubyte[.gz], e.g.
                             /usr/share/datasets/fashion-mnist), an IDX image
                             file, or a .npy array [N, sample...]; default:
                             seeded random input
  --labels FILE              labels (.npy or IDX) for the accuracy
  --encoder direct|rate      direct: the same input at every step; rate:
                             Bernoulli spikes with p = input (default direct)
  --limit N                  use the first N samples
  --weights FILE             parameters from a safetensors checkpoint
  --output FILE.npy          write the outputs [T, N, ...] (atomically)
  --seed N                   seed of initialization and encoders (default 0)
  --verbose                  print the module and each program's ops
)";

struct Options {
  std::string module, command, device = "cpu", data, labels, encoder = "direct",
                               weights, output;
  long limit = -1;
  uint64_t seed = 0;
  bool verbose = false;
};

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
    } else if (a == "--data") {
      o.data = value();
    } else if (a == "--labels") {
      o.labels = value();
    } else if (a == "--encoder") {
      o.encoder = value();
    } else if (a == "--limit") {
      o.limit = std::stol(value());
    } else if (a == "--weights") {
      o.weights = value();
    } else if (a == "--output") {
      o.output = value();
    } else if (a == "--seed") {
      o.seed = std::stoull(value());
    } else if (a == "--verbose") {
      o.verbose = true;
    } else if (!a.empty() && a[0] == '-') {
      throw Error("unknown option " + a + " (see snn-run --help)");
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 2)
    throw Error("expected MODULE and a command (infer); see snn-run --help");
  o.module = positional[0];
  o.command = positional[1];
  if (o.encoder != "direct" && o.encoder != "rate")
    throw Error("--encoder must be direct or rate, not '" + o.encoder + "'");
  return o;
}

bool exists(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

bool isDir(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

HostArray readArray(const std::string &path) {
  return endsWith(path, ".npy") ? readNpy(path) : readIdx(path);
}

std::string findIdx(const std::string &dir, const std::string &stem) {
  for (std::string name : {stem, stem + ".gz"})
    if (exists(dir + "/" + name))
      return dir + "/" + name;
  throw Error(dir + ": no " + stem + "[.gz] in this IDX directory");
}

/// The samples as [N, sampleSize] (values scaled to [0, 1] for IDX bytes).
struct Dataset {
  std::vector<float> samples;
  std::vector<int> labels;
  long count = 0;
};

Dataset loadData(const Options &o, size_t sampleSize) {
  Dataset d;
  if (o.data.empty())
    return d;
  std::string images = o.data, labels = o.labels;
  if (isDir(o.data)) {
    images = findIdx(o.data, "t10k-images-idx3-ubyte");
    if (labels.empty())
      labels = findIdx(o.data, "t10k-labels-idx1-ubyte");
  }
  HostArray a = readArray(images);
  if (a.shape.empty())
    throw Error(images + ": a scalar is not a dataset");
  size_t per = a.data.size() / static_cast<size_t>(a.shape[0]);
  if (per != sampleSize)
    throw Error(images + ": samples have " + std::to_string(per) +
                " values but the model's input takes " +
                std::to_string(sampleSize) + " per sample");
  d.count = a.shape[0];
  d.samples = std::move(a.data);
  if (!endsWith(images, ".npy"))
    for (float &v : d.samples)
      v /= 255.0f;
  if (!labels.empty()) {
    HostArray l = readArray(labels);
    if (static_cast<long>(l.data.size()) != d.count)
      throw Error(labels + ": " + std::to_string(l.data.size()) +
                  " labels for " + std::to_string(d.count) + " samples");
    for (float v : l.data)
      d.labels.push_back(static_cast<int>(v));
  }
  return d;
}

int infer(const Options &o) {
  Module module = Module::load(o.module);
  const std::vector<Op> &program = module.program("infer");
  Executor exec(module, o.seed);
  if (!o.weights.empty())
    exec.loadWeights(o.weights);
#ifdef SNNRT_HAVE_CUDA
  std::unique_ptr<CudaExecutor> gpu;
  if (o.device != "cpu") {
    if (parseCudaDevice(o.device) < 0)
      throw Error("--device must be cpu, cuda or cuda:N, not '" + o.device +
                  "'");
    gpu = std::make_unique<CudaExecutor>(exec, o.device);
    if (o.verbose)
      std::cerr << gpu->describe() << "\n";
  }
#else
  if (o.device != "cpu")
    throw Error("--device " + o.device +
                ": this snn-run was built without CUDA support; rebuild with "
                "the CUDA toolkit installed, or use --device cpu");
#endif
  const TensorInfo &in = module.tensor(module.input),
                   &out = module.tensor(module.output);
  if (in.shape.size() < 3)
    throw Error(o.module + ": the input must be [T, B, sample...], got " +
                in.shapeString());
  long T = in.shape[0], B = in.shape[1];
  size_t sample = in.numel() / static_cast<size_t>(T * B);
  size_t outSample = out.numel() / static_cast<size_t>(T * B);
  if (o.verbose) {
    std::cerr << "module " << o.module << ": T=" << T << " B=" << B
              << ", input " << in.shapeString() << ", output "
              << out.shapeString() << ", " << program.size()
              << " ops in 'infer' (CPU executor)\n";
    for (size_t i = 0; i < program.size(); ++i)
      std::cerr << "  " << program[i].describe(i) << "\n";
  }
  Dataset data = loadData(o, sample);
  long total = data.count ? data.count : B;
  if (o.limit >= 0)
    total = std::min(total, o.limit);
  if (!data.count)
    std::cerr << "snn-run: no --data: running one batch of seeded random "
                 "input in [0, 1)\n";

  std::mt19937_64 rng(o.seed ^ 0x5eedULL);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> outputs(static_cast<size_t>(T) * total * outSample);
  std::vector<double> spikeSum(module.spikeLayers.size(), 0.0);
  long correct = 0;
  float *x = exec.data(module.input);
  auto start = std::chrono::steady_clock::now();
  for (long first = 0; first < total; first += B) {
    long valid = std::min(B, total - first);
    for (long t = 0; t < T; ++t)
      for (long b = 0; b < B; ++b) {
        float *dst = x + (t * B + b) * sample;
        for (size_t i = 0; i < sample; ++i) {
          float v = 0.0f; // padding rows of the last batch
          if (b < valid)
            v = data.count ? data.samples[(first + b) * sample + i]
                           : uniform(rng);
          if (o.encoder == "rate" && b < valid)
            v = uniform(rng) < v ? 1.0f : 0.0f;
          dst[i] = v;
        }
      }
#ifdef SNNRT_HAVE_CUDA
    if (gpu) {
      gpu->upload(module.input);
      gpu->run("infer");
      gpu->download(module.output);
      for (const auto &layer : module.spikeLayers)
        gpu->download(layer.second);
    } else {
      exec.run("infer");
    }
#else
    exec.run("infer");
#endif
    const float *y = exec.data(module.output);
    for (long t = 0; t < T; ++t)
      std::copy(y + (t * B) * outSample, y + (t * B + valid) * outSample,
                outputs.begin() + (t * total + first) * outSample);
    for (long b = 0; b < valid && !data.labels.empty(); ++b) {
      size_t best = 0;
      std::vector<double> score(outSample, 0.0);
      for (long t = 0; t < T; ++t)
        for (size_t j = 0; j < outSample; ++j)
          score[j] += y[(t * B + b) * outSample + j];
      for (size_t j = 1; j < outSample; ++j)
        if (score[j] > score[best])
          best = j;
      correct += static_cast<long>(best) == data.labels[first + b];
    }
    for (size_t l = 0; l < module.spikeLayers.size(); ++l) {
      const TensorInfo &s = module.tensor(module.spikeLayers[l].second);
      const float *p = exec.data(s.id);
      size_t per = s.numel() / static_cast<size_t>(T * B);
      double sum = 0.0;
      for (long t = 0; t < T; ++t)
        for (size_t i = 0; i < valid * per; ++i)
          sum += p[(t * B) * per + i];
      spikeSum[l] += sum / static_cast<double>(per * T);
    }
  }
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  std::printf("snn-run: %ld samples in %.3f s: %.1f samples/s (%s)\n", total,
              seconds, total / seconds, o.device.c_str());
  if (!data.labels.empty())
    std::printf("accuracy: %.4f (%ld / %ld)\n",
                static_cast<double>(correct) / total, correct, total);
  for (size_t l = 0; l < module.spikeLayers.size(); ++l)
    std::printf("spike rate %-12s %.4f\n", module.spikeLayers[l].first.c_str(),
                spikeSum[l] / total);
  if (!o.output.empty()) {
    std::vector<int64_t> shape = out.shape;
    shape[1] = total;
    writeNpy(o.output, shape, outputs.data());
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    Options o = parse(argc, argv);
    if (o.command == "infer")
      return infer(o);
    if (o.command == "train")
      throw Error("'train' is not available in this snn-run yet: the module "
                  "format has training programs, but the runtime does not "
                  "execute backward and optimizer ops yet");
    throw Error("unknown command '" + o.command + "' (expected infer)");
  } catch (const Error &e) {
    std::fprintf(stderr, "snn-run: error: %s\n", e.what());
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "snn-run: error: %s\n", e.what());
    return 1;
  }
}
