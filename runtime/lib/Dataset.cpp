//===- Dataset.cpp - loading samples and encoding batches -----------------===//

#include "snnrt/Dataset.h"
#include "snnrt/Error.h"
#include "snnrt/Formats.h"

#include "CpuOpContext.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sys/stat.h>

namespace snnrt {

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isSpikeFile(const std::string &path) {
  return endsWith(path, ".h5") || endsWith(path, ".hdf5");
}

static HostArray readArray(const std::string &path) {
  return endsWith(path, ".npy") ? readNpy(path) : readIdx(path);
}

Dataset loadDataset(const std::string &images, const std::string &labels,
                    size_t sampleSize, int64_t steps) {
  Dataset d;
  d.source = images;
  d.sampleSize = sampleSize;
  struct stat st;
  if (::stat(images.c_str(), &st) != 0)
    throw Error(images + ": no such file or directory (--data takes an IDX "
                         "directory, an IDX file or a .npy file)");
  HostArray a = readArray(images);
  if (a.shape.empty() || a.shape[0] <= 0)
    throw Error(images + ": holds no samples (shape [" +
                (a.shape.empty() ? std::string() : std::to_string(a.shape[0])) +
                "])");
  bool npy = endsWith(images, ".npy");
  // A .npy [T, N, ...] whose steps match the module is pre-encoded input.
  if (npy && a.shape.size() >= 3 && a.shape[0] == steps &&
      a.data.size() / static_cast<size_t>(a.shape[0] * a.shape[1]) ==
          sampleSize) {
    d.timeMajor = true;
    d.steps = steps;
    d.count = a.shape[1];
  } else {
    size_t per = a.data.size() / static_cast<size_t>(a.shape[0]);
    if (per != sampleSize)
      throw Error(images + ": samples have " + std::to_string(per) +
                  " values but the model's input takes " +
                  std::to_string(sampleSize) + " per sample");
    d.count = a.shape[0];
  }
  d.samples = std::move(a.data);
  if (!npy)
    for (float &v : d.samples)
      v /= 255.0f;
  if (!labels.empty()) {
    HostArray l = readArray(labels);
    if (static_cast<int64_t>(l.data.size()) != d.count)
      throw Error(labels + ": " + std::to_string(l.data.size()) +
                  " labels for the " + std::to_string(d.count) +
                  " samples of " + images);
    d.labels.reserve(l.data.size());
    for (size_t i = 0; i < l.data.size(); ++i) {
      float v = l.data[i];
      if (v != std::floor(v) || v < 0 || v > 2147483647.0f)
        throw Error(labels + ": label " + std::to_string(i) + " is " +
                    std::to_string(v) + ", not a class index");
      d.labels.push_back(static_cast<int32_t>(v));
    }
  }
  return d;
}

static std::string findIdx(const std::string &dir, const std::string &stem) {
  struct stat st;
  for (std::string name : {stem, stem + ".gz"})
    if (::stat((dir + "/" + name).c_str(), &st) == 0)
      return dir + "/" + name;
  throw Error(dir + ": no " + stem +
              "[.gz] in this IDX directory (expected the MNIST/Fashion-MNIST "
              "file names, e.g. from Debian's dataset-fashion-mnist)");
}

Dataset loadIdxSplit(const std::string &dir, const std::string &split,
                     size_t sampleSize, int64_t steps) {
  std::string images = findIdx(dir, split + "-images-idx3-ubyte");
  std::string labels = findIdx(dir, split + "-labels-idx1-ubyte");
  return loadDataset(images, labels, sampleSize, steps);
}

Dataset randomDataset(int64_t count, size_t sampleSize, uint64_t seed) {
  Dataset d;
  d.source = "seeded random input";
  d.count = count;
  d.sampleSize = sampleSize;
  d.samples.resize(static_cast<size_t>(count) * sampleSize);
  uint64_t stream = mixSeed({seed, 0x5eedULL});
  for (size_t i = 0; i < d.samples.size(); ++i)
    d.samples[i] = cpu::counterUniform(stream, i);
  return d;
}

void limitDataset(Dataset &data, int64_t limit) {
  if (limit < 0 || limit >= data.count)
    return;
  if (!data.events.empty()) {
    data.events.resize(static_cast<size_t>(limit));
  } else if (data.timeMajor) {
    std::vector<float> kept;
    kept.reserve(static_cast<size_t>(data.steps * limit) * data.sampleSize);
    for (int64_t t = 0; t < data.steps; ++t)
      for (int64_t n = 0; n < limit; ++n)
        for (size_t i = 0; i < data.sampleSize; ++i)
          kept.push_back(data.at(t, n, i));
    data.samples = std::move(kept);
  } else {
    data.samples.resize(static_cast<size_t>(limit) * data.sampleSize);
  }
  if (!data.labels.empty())
    data.labels.resize(static_cast<size_t>(limit));
  data.count = limit;
}

Encoder parseEncoder(const std::string &name) {
  if (name == "direct")
    return Encoder::Direct;
  if (name == "rate")
    return Encoder::Rate;
  if (name == "latency")
    return Encoder::Latency;
  throw Error("--encoder must be direct, rate or latency, not '" + name + "'");
}

uint64_t mixSeed(std::initializer_list<uint64_t> values) {
  uint64_t h = 0x6a09e667f3bcc909ull;
  for (uint64_t v : values) {
    uint64_t z = h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    h = z ^ (z >> 31);
  }
  return h;
}

std::vector<int64_t> epochOrder(int64_t count, uint64_t seed, int64_t epoch,
                                bool shuffle) {
  std::vector<int64_t> order(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    order[i] = i;
  if (!shuffle)
    return order;
  // Our own Fisher-Yates on mt19937_64 (whose output the C++ standard
  // fixes), so the order is the same with every standard library.
  std::mt19937_64 rng(mixSeed({seed, 0x0badcafeULL, uint64_t(epoch)}));
  for (int64_t i = count - 1; i > 0; --i) {
    int64_t j = static_cast<int64_t>(rng() % static_cast<uint64_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

void encodeBatch(const Dataset &data, const std::vector<int64_t> &order,
                 int64_t first, int64_t valid, int64_t T, int64_t B,
                 Encoder encoder, uint64_t stream, float *input,
                 int64_t globalRows, int64_t firstRow) {
  size_t S = data.sampleSize;
  if (globalRows <= 0)
    globalRows = B;
  if (!data.events.empty()) {
    std::fill(input, input + static_cast<size_t>(T * B) * S, 0.0f);
    for (int64_t b = 0; b < valid; ++b)
      for (uint32_t e : data.events[order[first + b]]) {
        int64_t t = e / S;
        if (t < T)
          input[(t * B + b) * static_cast<int64_t>(S) + e % S] += 1.0f;
      }
    return;
  }
  for (int64_t t = 0; t < T; ++t)
    for (int64_t b = 0; b < B; ++b) {
      float *dst = input + (t * B + b) * static_cast<int64_t>(S);
      if (b >= valid) {
        std::fill(dst, dst + S, 0.0f); // padding rows of the last batch
        continue;
      }
      int64_t n = order[first + b];
      for (size_t i = 0; i < S; ++i)
        dst[i] = data.at(data.timeMajor ? t : 0, n, i);
      if (encoder == Encoder::Rate) {
        uint64_t base =
            (static_cast<uint64_t>(t) * globalRows + firstRow + b) * S;
        for (size_t i = 0; i < S; ++i)
          dst[i] = cpu::counterUniform(stream, base + i) < dst[i] ? 1.0f : 0.0f;
      } else if (encoder == Encoder::Latency) {
        for (size_t i = 0; i < S; ++i) {
          float v = std::min(dst[i], 1.0f);
          int64_t at = std::lround((1.0f - v) * static_cast<float>(T - 1));
          dst[i] = v > 0.0f && at == t ? 1.0f : 0.0f;
        }
      }
    }
}

} // namespace snnrt
