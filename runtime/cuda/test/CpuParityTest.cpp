//===- CpuParityTest.cpp - CUDA programs against the CPU backend ----------===//
//
// Loads small compiled modules with both backends, runs the same programs
// on the same random tensors, and compares every tensor afterwards: spikes
// must agree bit for bit, everything else to fp32 rounding. Built when the
// runtime core (snnrt_core) is part of the build.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "CudaModule.h"
#include "OpHarness.h"

#include "snnrt/CpuOps.h"
#include "snnrt/Error.h"
#include "snnrt/Executor.h"
#include "snnrt/Manifest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace snnrt::cuda;
using namespace snnrt::cuda::test;
using nlohmann::json;

namespace {
/// A module directory holding `manifest`, removed afterwards.
class TempModule {
public:
  explicit TempModule(const json &manifest) {
    char pattern[] = "/tmp/snnrt-cuda-parity-XXXXXX";
    dir = mkdtemp(pattern);
    std::ofstream(dir + "/manifest.json") << manifest.dump(2);
  }
  ~TempModule() {
    std::remove((dir + "/manifest.json").c_str());
    rmdir(dir.c_str());
  }
  std::string dir;
};

/// Host storage of a module for the CPU ops (aliases share storage).
struct HostTensors {
  explicit HostTensors(const snnrt::Module &m) : owner(m.tensors.size()) {
    for (const snnrt::TensorInfo &t : m.tensors) {
      owner[t.id] = t.aliasOf >= 0 ? t.aliasOf : t.id;
      storage.emplace_back(t.aliasOf >= 0 ? 0 : (t.bytes() + 3) / 4);
    }
  }
  float *get(int id) { return storage[owner[id]].data(); }
  std::vector<std::vector<float>> storage;
  std::vector<int> owner;
};

/// Runs `program` of `manifest` on both backends from the same random
/// tensors; returns the ids whose results differ.
void checkParity(const json &manifest, const std::string &program) {
  std::string whyNot;
  CudaDevice *device = sharedDevice(whyNot);
  if (!device)
    GTEST_SKIP() << "no usable GPU: " << whyNot;
  Random rnd;
  SCOPED_TRACE("random seed " + std::to_string(rnd.seed()));
  TempModule tmp(manifest);
  snnrt::Module module = snnrt::Module::load(tmp.dir);
  HostTensors host(module);
  CudaModule gpu(*device, manifest, tmp.dir);
  for (const snnrt::TensorInfo &t : module.tensors) {
    if (t.aliasOf >= 0)
      continue;
    // Variances stay positive; everything else is symmetric around 0.
    bool positive = t.name.find("var") != std::string::npos;
    std::vector<float> v = rnd.uniform(t.numel(), positive ? 0.5f : -1.0f,
                                       positive ? 1.5f : 1.0f);
    std::copy(v.begin(), v.end(), host.get(t.id));
    gpu.upload(t.id, v.data(), t.bytes());
  }
  const std::vector<snnrt::Op> &ops = module.program(program);
  for (size_t i = 0; i < ops.size(); ++i)
    snnrt::runCpuOp(module, ops[i], i,
                    [&](int id) { return host.get(id); });
  gpu.run(program, {});
  gpu.synchronize();
  for (const snnrt::TensorInfo &t : module.tensors) {
    if (t.aliasOf >= 0)
      continue;
    SCOPED_TRACE("tensor " + t.name);
    std::vector<float> got(t.numel());
    gpu.download(t.id, got.data(), t.bytes());
    const float *want = host.get(t.id);
    if (t.role == "spikes") {
      EXPECT_TRUE(std::equal(got.begin(), got.end(), want))
          << "spikes differ from the CPU backend";
      continue;
    }
    std::vector<double> ref(want, want + t.numel());
    EXPECT_LE(worstError(got, ref, 1e-4, 1e-5), 1.0);
  }
}

json tensor(int id, const char *name, std::vector<int64_t> shape,
            const char *role = "activation") {
  return {{"id", id}, {"name", name}, {"shape", shape}, {"role", role}};
}

/// Three infer runs (eager, captured, replayed) on both executors with
/// fresh inputs in [lo, hi): the outputs must agree.
void compareInfer(snnrt::Executor &cpu, snnrt::CudaExecutor &gpu, Random &rnd,
                  float lo, float hi) {
  const snnrt::Module &m = cpu.module();
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE("run " + std::to_string(step));
    std::vector<float> x = rnd.uniform(m.tensor(m.input).numel(), lo, hi);
    std::copy(x.begin(), x.end(), cpu.data(m.input));
    gpu.upload(m.input);
    gpu.run("infer");
    cpu.run("infer");
    std::vector<double> want(cpu.data(m.output),
                             cpu.data(m.output) + m.tensor(m.output).numel());
    gpu.download(m.output);
    std::vector<float> got(cpu.data(m.output),
                           cpu.data(m.output) + want.size());
    EXPECT_LE(worstError(got, want, 1e-4, 1e-5), 1.0);
  }
}

/// x[T=2, B=3, 2, 8, 8] through the forward ops the runtime itself runs
/// (library calls): flatten -> linear -> linear, without biases. Every other
/// op (neuron layers, a layer's bias, a convolution's columns) is a
/// generated kernel: a compiled module's (RunsACompiledModulesKernels, which
/// also covers convolutions).
json forwardManifest() {
  json t = json::array({
      tensor(0, "input", {2, 3, 2, 8, 8}, "input"),
      tensor(1, "%flat", {2, 3, 128}),
      tensor(2, "fc0.weight", {16, 128}, "param"),
      tensor(3, "%fc0", {2, 3, 16}),
      tensor(4, "fc.weight", {5, 16}, "param"),
      tensor(5, "%fc", {2, 3, 5}),
  });
  t[1]["alias_of"] = 0;
  json ops = json::array({
      {{"op", "linear"}, {"in", {1, 2}}, {"out", {3}}, {"has_bias", false}},
      {{"op", "linear"}, {"in", {3, 4}}, {"out", {5}}, {"has_bias", false}},
  });
  json manifest = {{"format", "snn-module"}, {"version", 1},
                   {"time_steps", 2}, {"batch", 3}, {"tensors", t},
                   {"input", 0}, {"output", 5},
                   {"programs", {{"infer", ops}}}};
  return manifest;
}
} // namespace

TEST(CudaCpuParity, Linear) {
  checkParity(forwardManifest(), "infer");
}

TEST(CudaExecutor, ParsesDeviceNames) {
  EXPECT_EQ(snnrt::parseCudaDevice("cuda"), 0);
  EXPECT_EQ(snnrt::parseCudaDevice("cuda:3"), 3);
  EXPECT_EQ(snnrt::parseCudaDevice("cpu"), -1);
  EXPECT_THROW(snnrt::parseCudaDevice("cuda:x"), snnrt::Error);
  EXPECT_THROW(snnrt::parseCudaDevice("cuda:"), snnrt::Error);
}

TEST(CudaExecutor, RunsTheExecutorsModuleLikeTheCpu) {
  TempModule tmp(forwardManifest());
  snnrt::Executor cpu(snnrt::Module::load(tmp.dir), 7);
  std::string whyNot;
  if (!sharedDevice(whyNot)) {
    // The error snn-run prints on a machine without a GPU.
    try {
      snnrt::CudaExecutor gpu(cpu, "cuda:0");
      FAIL() << "cuda:0 started without a GPU";
    } catch (const snnrt::Error &e) {
      EXPECT_EQ(std::string(e.what()).rfind("cuda:0: ", 0), 0u) << e.what();
    }
    return;
  }
  Random rnd;
  SCOPED_TRACE("random seed " + std::to_string(rnd.seed()));
  snnrt::CudaExecutor gpu(cpu, "cuda:0");
  EXPECT_EQ(gpu.describe().rfind("cuda:0 (", 0), 0u) << gpu.describe();
  compareInfer(cpu, gpu, rnd, -1, 1);
}

/// A module compiled by snn-opt --snn-compile="... target=cuda", named by
/// SNNRT_CUDA_TEST_MODULE: its neuron ops must run the module's own cubin
/// (or PTX) kernels and agree with the CPU (its kernels.host.so: compile it
/// with target=all).
TEST(CudaExecutor, RunsACompiledModulesKernels) {
  const char *dir = std::getenv("SNNRT_CUDA_TEST_MODULE");
  if (!dir || !*dir)
    GTEST_SKIP() << "set SNNRT_CUDA_TEST_MODULE to a compiled .snnmod";
  snnrt::Executor cpu(snnrt::Module::load(dir), 11);
  std::string whyNot;
  if (!sharedDevice(whyNot))
    GTEST_SKIP() << "no usable GPU: " << whyNot;
  Random rnd;
  SCOPED_TRACE("random seed " + std::to_string(rnd.seed()));
  const snnrt::Module &m = cpu.module();
  snnrt::CudaExecutor gpu(cpu, "cuda:0");
  EXPECT_NE(gpu.compiledKernels(), "");
  compareInfer(cpu, gpu, rnd, 0, 1);
  const std::vector<snnrt::Op> &ops = m.program("infer");
  std::vector<std::string> used = gpu.kernelsUsed("infer");
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == "neuron")
      EXPECT_EQ(used.at(i).rfind("compiled kernel ", 0), 0u)
          << ops[i].describe(i) << " ran " << used.at(i);
}
