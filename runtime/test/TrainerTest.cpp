//===- TrainerTest.cpp - a tiny module end to end: infer, train, resume ---===//
//
// The module (written here): x[4, 8, 6] -> linear(16) -> LIF ->
// linear(2) -> LI readout, cross-entropy on the mean membrane, SGD with
// momentum. Infer is checked against a float64 forward; training must
// separate a toy two-class dataset; 1 epoch + resume 1 epoch must give the
// same bytes as 2 epochs straight.
//
//===----------------------------------------------------------------------===//

#include "snnrt/Error.h"
#include "snnrt/Trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

using namespace snnrt;
using nlohmann::json;

namespace {

const int T = 4, B = 8, IN = 6, HID = 16, OUT = 2;

std::string tinyModule() {
  // One directory per process: test runs of other checkouts share /tmp.
  std::string dir = ::testing::TempDir() + "/snnrt-tiny-" +
                    std::to_string(::getpid()) + ".snnmod";
  ::mkdir(dir.c_str(), 0755);
  auto t = [](int id, const std::string &name, std::vector<int> shape,
              const char *role) {
    return json{{"id", id}, {"name", name}, {"shape", shape}, {"role", role}};
  };
  json tensors = json::array({
      t(0, "input", {T, B, IN}, "input"),
      t(1, "fc1.weight", {HID, IN}, "param"),
      t(2, "fc1.bias", {HID}, "param"),
      t(3, "%a1", {T, B, HID}, "activation"),
      t(4, "%s1", {T, B, HID}, "activation"),
      t(5, "%h1", {T, B, HID}, "saved"),
      // 6, 7 and 20 are unused (the module had a dropout layer, which is a
      // generated kernel now).
      t(6, "%unused6", {T, B, HID}, "activation"),
      t(7, "%unused7", {T, B, HID}, "activation"),
      t(8, "fc2.weight", {OUT, HID}, "param"),
      t(9, "fc2.bias", {OUT}, "param"),
      t(10, "%a2", {T, B, OUT}, "activation"),
      t(11, "%y", {T, B, OUT}, "activation"),
      t(12, "labels", {B}, "label"),
      t(13, "loss", {}, "loss"),
      t(14, "%gy", {T, B, OUT}, "grad"),
      t(15, "correct", {}, "metric"),
      t(16, "%ga2", {T, B, OUT}, "grad"),
      t(17, "grad:fc2.weight", {OUT, HID}, "grad"),
      t(18, "grad:fc2.bias", {OUT}, "grad"),
      t(19, "%gd1", {T, B, HID}, "grad"),
      t(20, "%unused20", {T, B, HID}, "grad"),
      t(21, "%ga1", {T, B, HID}, "grad"),
      t(22, "grad:fc1.weight", {HID, IN}, "grad"),
      t(23, "grad:fc1.bias", {HID}, "grad"),
      t(24, "opt:fc1.weight:momentum", {HID, IN}, "optimizer_state"),
      t(25, "opt:fc1.bias:momentum", {HID}, "optimizer_state"),
      t(26, "opt:fc2.weight:momentum", {OUT, HID}, "optimizer_state"),
      t(27, "opt:fc2.bias:momentum", {OUT}, "optimizer_state"),
  });
  tensors[1]["init"] = {{"kind", "kaiming_uniform"}, {"fan_in", IN}};
  tensors[2]["init"] = {{"kind", "uniform"}, {"bound", 1 / std::sqrt(IN)}};
  tensors[8]["init"] = {{"kind", "kaiming_uniform"}, {"fan_in", HID}};
  tensors[9]["init"] = {{"kind", "uniform"}, {"bound", 1 / std::sqrt(HID)}};
  tensors[12]["dtype"] = "i32";
  for (int id = 24; id <= 27; ++id)
    tensors[id]["init"] = {{"kind", "zeros"}};
  json lif = {{"op", "neuron"}, {"model", "lif"}, {"features", HID},
              {"k", 0.5},       {"c", 1.0},       {"v_th", 0.5},
              {"v_reset", 0.0}, {"v_init", 0.0},  {"reset", "hard"},
              {"surrogate", {{"kind", "atan"}, {"alpha", 2.0}}}};
  json li = {{"op", "neuron"}, {"model", "li"}, {"features", OUT},
             {"k", 0.2},       {"c", 1.0},      {"v_init", 0.0}};
  auto with = [](json op, json in, json out, json extra = json::object()) {
    op["in"] = in, op["out"] = out;
    op.update(extra);
    return op;
  };
  auto constant = [&](const std::string &name, double value) {
    int id = static_cast<int>(tensors.size());
    tensors.push_back(t(id, name, {1}, "constant"));
    tensors.back()["init"] = {{"kind", "constant"}, {"value", value}};
    return id;
  };
  // A layer's bias (and its gradient) is a generated kernel the op names:
  // here the test kernel library's, whose sizes are constant tensors.
  auto bias = [&](const char *kernel, int width, json args) {
    json sizes = {constant(std::string(kernel) + ".rows", T * B),
                  constant(std::string(kernel) + ".channels", width)};
    for (const json &id : args)
      sizes.push_back(id);
    return json{{"launches",
                 {{{"kernel", std::string("snnrt_test_") + kernel},
                   {"args", sizes},
                   {"grid", 1},
                   {"block", 1}}}}};
  };
  json linear = {{"op", "linear"}, {"has_bias", true}};
  json bias1 = bias("bias_add", HID, {3, 2}), bias2 = bias("bias_add", OUT, {10, 9});
  json infer = {with(linear, {0, 1, 2}, {3}, bias1), with(lif, {3}, {4}),
                with(linear, {4, 8, 9}, {10}, bias2), with(li, {10}, {11})};
  json forward = {
      with(linear, {0, 1, 2}, {3}, bias1),
      with(lif, {3}, {4, 5}, {{"save_h", true}}),
      with(linear, {4, 8, 9}, {10}, bias2),
      with(li, {10}, {11})};
  // The loss (cross-entropy on the mean membrane) and the evaluation's
  // loss: kernel ops of the test kernel library, whose sizes are constant
  // tensors.
  json lossArgs = {constant("loss.T", T), constant("loss.B", B),
                   constant("loss.C", OUT)};
  auto lossKernel = [&](bool gradient, json in, json out) {
    json args = lossArgs;
    args.push_back(constant(gradient ? "loss.grad" : "eval.grad", gradient));
    for (const json &id : in)
      args.push_back(id);
    for (const json &id : out)
      args.push_back(id);
    return json{{"op", "kernel"}, {"kernel", "snnrt_test_loss_ce"},
                {"in", in},       {"out", out},
                {"args", args},   {"grid", 1},
                {"block", 1}};
  };
  json evaluate = {lossKernel(false, {11, 12}, {13, 15})};
  json backward = {
      lossKernel(true, {11, 12}, {13, 14, 15}),
      with(li, {14, 11}, {16}, {{"op", "neuron_bwd"}}),
      with({{"op", "linear_bwd"}, {"has_bias", true}, {"need_gx", true}},
           {16, 4, 8}, {19, 17, 18}, bias("bias_grad", OUT, {16, 18})),
      with(lif, {19, 5}, {21}, {{"op", "neuron_bwd"}}),
      with({{"op", "linear_bwd"}, {"has_bias", true}, {"need_gx", false}},
           {21, 0, 1}, {22, 23}, bias("bias_grad", HID, {21, 23}))};
  // SGD with momentum over the four parameters: one kernel op of the test
  // kernel library (Inputs/TestKernels.cpp), whose sizes and hyperparameters
  // are constant tensors.
  int params[] = {1, 2, 8, 9}, grads[] = {22, 23, 17, 18};
  json args = {constant("sgd.segments", 4), constant("sgd.momentum", 0.9),
               constant("sgd.weight_decay", 1e-4)};
  json in = json::array(), out = json::array();
  for (int i = 0; i < 4; ++i) {
    double n = 1;
    for (const json &d : tensors[params[i]]["shape"])
      n *= d.get<double>();
    for (int id : {constant("sgd.size" + std::to_string(i), n), params[i],
                   grads[i], 24 + i})
      args.push_back(id);
    for (int id : {params[i], grads[i], 24 + i})
      in.push_back(id);
    out.push_back(params[i]);
    out.push_back(24 + i);
  }
  json update = {{{"op", "kernel"},
                  {"kernel", "snnrt_test_sgd_momentum"},
                  {"in", in},
                  {"out", out},
                  {"args", args},
                  {"run_values", true},
                  {"grid", 1},
                  {"block", 1}}};
  // A fresh copy (a library of an earlier build may be there), renamed
  // into place: an earlier test of this process may still map the old one.
  std::filesystem::copy_file(SNNRT_TEST_KERNELS, dir + "/kernels.host.so.new",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::rename(dir + "/kernels.host.so.new",
                          dir + "/kernels.host.so");
  json m = {{"format", "snn-module"},
            {"version", 1},
            {"time_steps", T},
            {"batch", B},
            {"tensors", tensors},
            {"input", 0},
            {"output", 11},
            {"labels", 12},
            {"loss", 13},
            {"correct", 15},
            {"evaluate", {{"labels", 12}, {"loss", 13}, {"correct", 15}}},
            {"spike_layers", {{{"name", "lif1"}, {"tensor", 4}}}},
            {"programs",
             {{"infer", infer},
              {"evaluate", evaluate},
              {"train_forward", forward},
              {"backward", backward},
              {"update", update}}},
            {"optimizer", {{"kind", "sgd"}, {"lr", 0.1}, {"momentum", 0.9}}},
            {"kernels",
             {{"host", "kernels.host.so"},
#if defined(__x86_64__)
              {"host_triple", "x86_64-unknown-linux-gnu"},
#else
              {"host_triple", "aarch64-unknown-linux-gnu"},
#endif
              {"host_neurons", false}}}};
  std::ofstream(dir + "/manifest.json") << m.dump(1);
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

TEST(Trainer, InferMatchesAFloat64Forward) {
  Module m = Module::load(tinyModule());
  Executor exec(m, 3);
  CpuRunner cpu(exec);
  Dataset data = toyData(13, 1); // a full and a padded batch
  std::vector<float> out;
  EvalResult r = evaluate(exec, cpu, data, Encoder::Direct, 0, &out);
  ASSERT_EQ(out.size(), size_t(T * 13 * OUT));
  const float *w1 = exec.data(1), *b1 = exec.data(2), *w2 = exec.data(8),
              *b2 = exec.data(9);
  double spikes = 0;
  for (int n = 0; n < 13; ++n) {
    std::vector<double> v(HID, 0.0), o(OUT, 0.0);
    for (int t = 0; t < T; ++t) {
      std::vector<double> s(HID);
      for (int j = 0; j < HID; ++j) {
        double a = b1[j];
        for (int i = 0; i < IN; ++i)
          a += double(w1[j * IN + i]) * data.samples[n * IN + i];
        double h = v[j] + 0.5 * (0 - v[j]) + a;
        s[j] = h >= 0.5;
        v[j] = s[j] ? 0.0 : h;
        spikes += s[j];
      }
      for (int c = 0; c < OUT; ++c) {
        double a = b2[c];
        for (int j = 0; j < HID; ++j)
          a += double(w2[c * HID + j]) * s[j];
        o[c] = o[c] + 0.2 * (0 - o[c]) + a;
        EXPECT_NEAR(out[(t * 13 + n) * OUT + c], o[c], 1e-5);
      }
    }
  }
  EXPECT_GT(spikes, 0);
  EXPECT_NEAR(r.spikeRates.at(0), spikes / (13.0 * T * HID), 1e-9);
}

TEST(Trainer, LearnsASeparableToyProblem) {
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
  EXPECT_NE(0, std::memcmp(fresh.data(1), straight.data(1), HID * IN * 4));
}

TEST(Trainer, CheckpointMismatchesAreClearErrors) {
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
