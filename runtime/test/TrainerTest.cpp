//===- TrainerTest.cpp - a tiny module end to end: infer, train, resume ---===//
//
// The module (Inputs/tiny-train.mlir, compiled by snn-opt at test time):
// x[4, 8, 6] -> linear(16) -> LIF -> linear(2) -> LI readout, cross-entropy
// on the membrane, SGD with momentum. Training must separate a toy
// two-class dataset; 1 epoch + resume 1 epoch must give the same bytes as 2
// epochs straight. (Its numerics against the float64 reference are the lit
// tests' job, test/Runtime.)
//
//===----------------------------------------------------------------------===//

#include "snnrt/Error.h"
#include "snnrt/Trainer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <unistd.h>

using namespace snnrt;
using nlohmann::json;

namespace {

const int T = 4, B = 8, IN = 6, HID = 16;

/// Skips the test when the build has no compiler: the runtime runs only
/// compiled modules (its neuron layers are the compiler's kernels).
#define REQUIRE_COMPILER()                                                     \
  if (std::string(SNN_OPT).empty())                                            \
  GTEST_SKIP() << "needs snn-opt (a build with SNN_ENABLE_COMPILER=ON)"

/// Inputs/tiny-train.mlir compiled for this CPU, once per process (one
/// directory per process: test runs of other checkouts share /tmp).
std::string tinyModule() {
  static const std::string dir = [] {
    std::string out = ::testing::TempDir() + "/snnrt-tiny-" +
                      std::to_string(::getpid()) + ".snnmod";
    std::string cmd = std::string("'") + SNN_OPT + "' '" + SNNRT_TEST_INPUTS +
                      "/tiny-train.mlir' --snn-autodiff=\"loss=ce_membrane "
                      "optimizer=sgd lr=0.1 momentum=0.9\" "
                      "--snn-compile=\"output=" +
                      out + " target=cpu\" -o /dev/null";
    if (std::system(cmd.c_str()) != 0)
      throw std::runtime_error("cannot compile the test module: " + cmd);
    return out;
  }();
  return dir;
}

/// Two classes in [0, 1]^6: class 0 is high on the first three features,
/// class 1 on the last three, with noise.
Dataset toyData(int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> high(0.6f, 1.0f), low(0.0f, 0.3f);
  Dataset d;
  d.source = "toy";
  d.count = count;
  d.sampleSize = IN;
  for (int n = 0; n < count; ++n) {
    int label = static_cast<int>(rng() % 2);
    for (int i = 0; i < IN; ++i)
      d.samples.push_back((i < 3) == (label == 0) ? high(rng) : low(rng));
    d.labels.push_back(label);
  }
  return d;
}

TrainConfig quietConfig(int epochs, const std::string &checkpoint = "") {
  TrainConfig c;
  c.epochs = epochs;
  c.seed = 5;
  c.progress = false;
  c.checkpoint = checkpoint;
  return c;
}

TEST(Trainer, LearnsASeparableToyProblem) {
  REQUIRE_COMPILER();
  Module m = Module::load(tinyModule());
  Executor exec(m, 3);
  CpuRunner cpu(exec);
  Trainer trainer(exec, cpu, quietConfig(8));
  std::vector<EpochResult> epochs;
  trainer.fit(toyData(64, 2), toyData(32, 3), {},
              [&](const EpochResult &r) { epochs.push_back(r); });
  ASSERT_EQ(epochs.size(), 8u);
  EXPECT_LT(epochs.back().trainLoss, 0.5 * epochs.front().trainLoss);
  EXPECT_GE(double(epochs.back().test.correct) / epochs.back().test.samples,
            0.9);
  EXPECT_TRUE(epochs.back().test.hasLoss);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Trainer, ResumeIsBitExact) {
  REQUIRE_COMPILER();
  Module m = Module::load(tinyModule());
  std::string dir = ::testing::TempDir();
  Dataset train = toyData(40, 4), test = toyData(8, 5); // 40: a dropped batch
  Executor straight(m, 3);
  CpuRunner cpuA(straight);
  Trainer(straight, cpuA, quietConfig(2, dir + "/snnrt-a.safetensors"))
      .fit(train, test, {});

  Executor first(m, 3);
  CpuRunner cpuB(first);
  Trainer(first, cpuB, quietConfig(1, dir + "/snnrt-b.safetensors"))
      .fit(train, test, {});
  Executor resumed(m, 99); // a different init: everything must come back
  TrainPosition pos =
      Trainer::loadCheckpoint(resumed, dir + "/snnrt-b.safetensors", 5);
  EXPECT_EQ(pos.epoch, 1);
  EXPECT_EQ(pos.step, 40 / B);
  CpuRunner cpuC(resumed);
  Trainer(resumed, cpuC, quietConfig(2, dir + "/snnrt-c.safetensors"))
      .fit(train, test, pos);

  auto a = straight.state(), c = resumed.state();
  ASSERT_EQ(a.size(), 8u); // 4 params + 4 momentum buffers
  for (auto &[name, arr] : a) {
    ASSERT_EQ(arr.data.size(), c.at(name).data.size());
    EXPECT_EQ(0, std::memcmp(arr.data.data(), c.at(name).data.data(),
                             arr.data.size() * sizeof(float)))
        << name;
  }
  EXPECT_EQ(readFile(dir + "/snnrt-a.safetensors"),
            readFile(dir + "/snnrt-c.safetensors"));
  // And the run did change the parameters.
  Executor fresh(m, 3);
  EXPECT_NE(0, std::memcmp(fresh.state().at("fc1.weight").data.data(),
                           a.at("fc1.weight").data.data(), HID * IN * 4));
}

TEST(Trainer, CheckpointMismatchesAreClearErrors) {
  REQUIRE_COMPILER();
  Module m = Module::load(tinyModule());
  std::string dir = ::testing::TempDir();
  Executor exec(m, 3);
  CpuRunner cpu(exec);
  Trainer(exec, cpu, quietConfig(1, dir + "/snnrt-d.safetensors"))
      .fit(toyData(16, 6), Dataset(), {});
  auto message = [&](const std::string &path, uint64_t seed) {
    try {
      Executor e(m, 3);
      Trainer::loadCheckpoint(e, path, seed);
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(dir + "/snnrt-d.safetensors", 6)
                .find("was trained with --seed 5, not 6"),
            std::string::npos);
  std::string bytes = readFile(dir + "/snnrt-d.safetensors");
  std::ofstream(dir + "/snnrt-cut.safetensors", std::ios::binary)
      << bytes.substr(0, bytes.size() - 10);
  EXPECT_NE(message(dir + "/snnrt-cut.safetensors", 5).find("truncated"),
            std::string::npos);
  // A weights-only file is not a training checkpoint.
  writeSafetensors(dir + "/snnrt-w.safetensors", exec.state());
  EXPECT_NE(message(dir + "/snnrt-w.safetensors", 5)
                .find("not a training checkpoint"),
            std::string::npos);
}

TEST(Trainer, ModuleWithoutTrainingProgramsIsAClearError) {
  REQUIRE_COMPILER();
  std::string dir = tinyModule();
  Module m = Module::load(dir);
  m.programs.erase("backward");
  Executor exec(m, 0);
  CpuRunner cpu(exec);
  try {
    Trainer t(exec, cpu, quietConfig(1));
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("has no 'backward' program"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
