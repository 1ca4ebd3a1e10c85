//===- Executor.cpp - a module's tensors and programs on the CPU ----------===//

#include "snnrt/Executor.h"
#include "snnrt/CpuOps.h"
#include "snnrt/Error.h"
#include "snnrt/TimeSplitOps.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <sys/stat.h>

namespace snnrt {

Executor::Executor(Module module, uint64_t seed) : module_(std::move(module)) {
  const auto &ts = module_.tensors;
  storage_.resize(ts.size());
  base_.assign(ts.size(), nullptr);
  owner_.resize(ts.size());
  for (const TensorInfo &t : ts) {
    int owner = t.id;
    while (module_.tensors.at(owner).aliasOf >= 0)
      owner = module_.tensors.at(owner).aliasOf;
    if (owner != t.id && module_.tensor(owner).numel() != t.numel())
      throw Error(module_.dir + ": tensor '" + t.name + "' aliases '" +
                  module_.tensor(owner).name + "' but has " +
                  std::to_string(t.numel()) + " elements instead of " +
                  std::to_string(module_.tensor(owner).numel()));
    owner_[t.id] = owner;
  }
  // i32/u8 tensors use 4-byte slots; short-lived ones share one arena.
  MemoryPlanMode mode = memoryPlanMode();
  poisonsFirstWrites_ = mode == MemoryPlanMode::Poison;
  if (mode != MemoryPlanMode::Off)
    plan_ = planMemory(
        module_, [](const TensorInfo &t) { return t.numel() * sizeof(float); },
        64);
  arena_.assign(plan_.arenaBytes / sizeof(float),
                mode == MemoryPlanMode::Poison
                    ? std::numeric_limits<float>::quiet_NaN()
                    : 0.0f);
  for (const TensorInfo &t : ts) {
    if (owner_[t.id] != t.id)
      continue;
    if (plan_.planned(t.id)) {
      base_[t.id] = arena_.data() + plan_.offset[t.id] / sizeof(float);
      continue;
    }
    storage_[t.id].assign(t.numel(), 0.0f);
    base_[t.id] = storage_[t.id].data();
  }
  initialize(seed);
}

float *Executor::data(int id) { return base_.at(owner_.at(id)); }

size_t Executor::storageBytes() const {
  size_t floats = arena_.size();
  for (const std::vector<float> &v : storage_)
    floats += v.size();
  return floats * sizeof(float);
}

void Executor::initialize(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<std::string, HostArray> files;
  std::string initPath = module_.dir + "/init.safetensors";
  struct stat st;
  bool haveFile = ::stat(initPath.c_str(), &st) == 0;
  if (haveFile)
    files = readSafetensors(initPath);
  for (const TensorInfo &t : module_.tensors) {
    if (t.init.is_null() || owner_[t.id] != t.id)
      continue;
    std::string kind = t.init.value("kind", "zeros");
    std::vector<float> &v = storage_[t.id];
    if (kind == "zeros") {
      std::fill(v.begin(), v.end(), 0.0f);
    } else if (kind == "ones") {
      std::fill(v.begin(), v.end(), 1.0f);
    } else if (kind == "constant" && t.dtype == DType::I32) {
      // An i32 slot holds the int's bits (an event-driven layer's limit).
      int32_t value = t.init.value("value", int32_t(0));
      for (float &slot : v)
        std::memcpy(&slot, &value, sizeof value);
    } else if (kind == "constant") {
      std::fill(v.begin(), v.end(), t.init.value("value", 0.0f));
    } else if (kind == "uniform" || kind == "kaiming_uniform") {
      // PyTorch's default for Linear/Conv weights: kaiming_uniform with
      // a = sqrt(5), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
      double bound = kind == "uniform"
                         ? t.init.value("bound", 0.0)
                         : 1.0 / std::sqrt(t.init.value("fan_in", 1.0));
      std::uniform_real_distribution<float> d(-bound, bound);
      for (float &x : v)
        x = d(rng);
    } else if (kind == "normal") {
      std::normal_distribution<float> d(0.0f, t.init.value("std", 1.0f));
      for (float &x : v)
        x = d(rng);
    } else if (kind == "file") {
      auto it = files.find(t.name);
      if (it == files.end())
        throw Error(initPath + ": has no tensor '" + t.name +
                    "' for the module's initial value" +
                    (haveFile ? "" : " (the file is missing)") +
                    "; recompile the module");
      if (it->second.data.size() != v.size())
        throw Error(initPath + ": tensor '" + t.name + "' has " +
                    std::to_string(it->second.data.size()) +
                    " elements but the module expects " + t.shapeString());
      std::copy(it->second.data.begin(), it->second.data.end(), v.begin());
    } else {
      throw Error(module_.dir + ": tensor '" + t.name +
                  "' has an unknown initializer '" + kind + "'");
    }
  }
}

static bool persisted(const TensorInfo &t, bool optimizerState) {
  return t.role == "param" || t.role == "buffer" ||
         (optimizerState && t.role == "optimizer_state");
}

void Executor::loadWeights(const std::string &path) {
  loadState(readSafetensors(path), path, /*optimizerState=*/false);
}

std::map<std::string, HostArray> Executor::state() {
  std::map<std::string, HostArray> out;
  for (const TensorInfo &t : module_.tensors)
    if (persisted(t, true)) {
      const float *p = data(t.id);
      out[t.name] = HostArray{t.shape, std::vector<float>(p, p + t.numel())};
    }
  return out;
}

void Executor::loadState(const std::map<std::string, HostArray> &tensors,
                         const std::string &path, bool optimizerState) {
  for (const TensorInfo &t : module_.tensors) {
    if (!persisted(t, optimizerState))
      continue;
    auto it = tensors.find(t.name);
    if (it == tensors.end()) {
      std::string have;
      for (auto &[name, _] : tensors)
        have += (have.empty() ? "" : ", ") + name;
      throw Error(path + ": has no tensor '" + t.name + "' that the model" +
                  (t.role == "optimizer_state" ? "'s optimizer" : "") +
                  " needs (the file has: " + have + ")");
    }
    if (it->second.shape != t.shape) {
      TensorInfo got;
      got.shape = it->second.shape;
      throw Error(path + ": tensor '" + t.name + "' has shape " +
                  got.shapeString() + " but the model expects " +
                  t.shapeString());
    }
    std::copy(it->second.data.begin(), it->second.data.end(), data(t.id));
  }
}

void Executor::setLabels(const int32_t *labels, size_t count, int tensor) {
  if (tensor < 0)
    tensor = module_.labels;
  if (tensor < 0)
    throw Error(module_.dir + ": the module has no labels tensor");
  const TensorInfo &t = module_.tensor(tensor);
  if (count > t.numel())
    throw Error(module_.dir + ": the labels tensor '" + t.name + "' takes " +
                std::to_string(t.numel()) + " labels, got " +
                std::to_string(count));
  const TensorInfo &y = module_.tensor(module_.output);
  if (y.shape.size() >= 2) {
    int64_t classes = static_cast<int64_t>(y.numel()) /
                      (y.shape[0] * y.shape[1]);
    for (size_t i = 0; i < count; ++i)
      if (labels[i] < 0 || labels[i] >= classes)
        throw Error("label " + std::to_string(labels[i]) + " of sample " +
                    std::to_string(i) + " is outside [0, " +
                    std::to_string(classes) +
                    "): the labels do not match the model's " +
                    std::to_string(classes) + " outputs");
  }
  int32_t *slots = reinterpret_cast<int32_t *>(data(t.id)); // i32 bits
  std::memcpy(slots, labels, count * sizeof(int32_t));
  std::fill(slots + count, slots + t.numel(), -1);
}

void Executor::runOp(const Op &op, size_t index, const TensorLookup &lookup,
                     const RunContext &ctx) {
  if (isTimeSplitOp(op.kind))
    runTimeSplitOp(module_, op, index, lookup, comm_);
  else
    runCpuOp(module_, op, index, lookup, ctx);
}

void Executor::run(const std::string &program, const RunContext &ctx,
                   const std::function<void(size_t)> &afterOp) {
  const auto &ops = module_.program(program);
  TensorLookup lookup = [this](int id) { return data(id); };
  // Poison: each planned f32 tensor is NaN again when the program first
  // writes it, so that a read of what this program did not write shows even
  // where an earlier tensor's values left the arena finite.
  std::vector<char> touched;
  if (poisonsFirstWrites_)
    touched.assign(owner_.size(), 0);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!touched.empty())
      poisonFirstWrites(ops[i], touched);
    if (!profile_) {
      runOp(ops[i], i, lookup, ctx);
      if (afterOp)
        afterOp(i);
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    runOp(ops[i], i, lookup, ctx);
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    addToProfile(profileTable_, program, profileKey(ops[i].kind, ops[i].attrs),
                 ms);
    if (afterOp)
      afterOp(i);
  }
}

void Executor::poisonFirstWrites(const Op &op, std::vector<char> &touched) {
  for (int id : op.in)
    touched[owner_[id]] = 1;
  for (int id : op.out) {
    int owner = owner_[id];
    if (touched[owner])
      continue;
    touched[owner] = 1;
    const TensorInfo &t = module_.tensor(owner);
    if (plan_.planned(owner) && t.dtype == DType::F32)
      std::fill_n(base_[owner], t.numel(),
                  std::numeric_limits<float>::quiet_NaN());
  }
}

Executor::~Executor() { printProfile("cpu", profileTable_); }

} // namespace snnrt
