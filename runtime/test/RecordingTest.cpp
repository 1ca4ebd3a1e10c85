//===- RecordingTest.cpp - snn-run --record's rewrite of the infer program ===//

#include "snnrt/Error.h"
#include "snnrt/Recording.h"

#include <gtest/gtest.h>

using namespace snnrt;
using nlohmann::json;

namespace {

json tensor(int id, const char *name, json shape) {
  return {{"id", id}, {"name", name}, {"shape", shape}, {"role", "activation"}};
}

/// x -> lif "hidden" (scan) -> time loop { li_step "out" } (the li state).
json manifest() {
  json tensors = json::array(
      {tensor(0, "input", {2, 1, 3}), tensor(1, "hidden", {2, 1, 3}),
       tensor(2, "%2", {1, 3}), tensor(3, "%3", {1, 3}), tensor(4, "%4", {1, 3}),
       tensor(5, "%5", {2, 1, 3}), tensor(6, "%6", {1, 3}),
       tensor(7, "init", {1, 3})});
  json step = {{"op", "neuron_step"}, {"model", "li"}, {"layer", "out"},
               {"in", {2, 3}}, {"out", {4}}};
  json loop = {{"op", "time_loop"}, {"steps", 2}, {"num_inputs", 1},
               {"args", {2, 3}}, {"yields", {4, 4}}, {"body", {step}},
               {"in", {1, 7}}, {"out", {5, 6}}};
  json scan = {{"op", "neuron"}, {"model", "lif"}, {"layer", "hidden"},
               {"kernel", {{"fwd", "k_fwd"}, {"fwd_record", "k_rec"}}},
               {"in", {0}}, {"out", {1}}};
  return {{"tensors", tensors}, {"programs", {{"infer", {scan, loop}}}}};
}

std::string errorOf(const std::string &spec) {
  json j = manifest();
  try {
    planRecording(j, spec, "m/manifest.json");
  } catch (const Error &e) {
    EXPECT_EQ(j, manifest()) << "a failed request must not edit the manifest";
    return e.what();
  }
  return "";
}

} // namespace

TEST(Recording, ScanLayerRunsItsRecordKernel) {
  json j = manifest();
  std::vector<RecordTrace> traces = planRecording(j, "hidden", "m");
  ASSERT_EQ(traces.size(), 3u);
  EXPECT_EQ(traces[0].name, "hidden.s");
  EXPECT_EQ(traces[0].tensor, 1); // the op's own output
  const json &op = j["programs"]["infer"][0];
  EXPECT_TRUE(op["record"].get<bool>());
  EXPECT_EQ(op["out"], json({1, traces[2].tensor, traces[1].tensor})); // S, H, V
  EXPECT_EQ(traces[1].name, "hidden.v");
  EXPECT_EQ(j["tensors"][traces[1].tensor]["shape"], json({2, 1, 3}));
}

TEST(Recording, StepLayerBecomesExtraLoopOutputs) {
  json j = manifest();
  std::vector<RecordTrace> traces = planRecording(j, "out:v", "m");
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(traces[0].name, "out.v");
  const json &loop = j["programs"]["infer"][1];
  // Inserted after the step outputs, before the final state.
  EXPECT_EQ(loop["out"], json({5, traces[0].tensor, 6}));
  EXPECT_EQ(loop["yields"], json({4, 4, 4}));
  EXPECT_EQ(j["tensors"][traces[0].tensor]["shape"], json({2, 1, 3}));
}

TEST(Recording, BadRequestsListWhatExists) {
  EXPECT_EQ(errorOf("hidden,nope"),
            "--record: the module has no neuron layer 'nope'; its layers (and "
            "what each can record) are: hidden (s, v, h), out (v, h)");
  EXPECT_EQ(errorOf("out:s"),
            "--record out:s: layer 'out' (li) has no s (a leaky integrator "
            "does not spike); it can record v, h");
  EXPECT_NE(errorOf("hidden:q").find("unknown quantity 'q'"), std::string::npos);
  EXPECT_NE(errorOf("hidden,,out").find("empty layer name"), std::string::npos);
}
