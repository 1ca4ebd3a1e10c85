//===- CpuOpsTest.cpp - CPU ops against naive float64 references ----------===//

#include "OpTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace snnrt;
using namespace snnrt::test;
using nlohmann::json;

namespace {

// The bias of linear layers and convolutions as GEMMs over column buffers
// are generated kernels (test/Runtime/layer-kernels.test checks them, with
// the runtime's GEMMs, against the float64 reference).
TEST(CpuOps, LinearMatchesNaiveProduct) {
  std::mt19937 rng(1);
  OneOp o("linear", {{3, 2, 5}, {4, 5}}, {{3, 2, 4}}, {});
  for (int i = 0; i < 2; ++i)
    fillRandom(o.in(i), rng, -1, 1);
  o.run();
  for (int r = 0; r < 6; ++r)
    for (int j = 0; j < 4; ++j) {
      double ref = 0.0;
      for (int k = 0; k < 5; ++k)
        ref += double(o.in(0)[r * 5 + k]) * o.in(1)[j * 5 + k];
      EXPECT_NEAR(o.out(0)[r * 4 + j], ref, 1e-5);
    }
}

TEST(CpuOps, LayerWithoutItsKernelsIsAClearError) {
  OneOp linear("linear", {{2, 3}, {4, 3}, {4}}, {{2, 4}}, {{"has_bias", true}});
  try {
    linear.run();
    FAIL() << "expected an error";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("needs its \"launches\""),
              std::string::npos) << e.what();
  }
  OneOp conv("conv2d", {{1, 1, 3, 3}, {1, 1, 2, 2}}, {{1, 1, 2, 2}}, {});
  try {
    conv.run();
    FAIL() << "expected an error";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("needs its \"columns\""),
              std::string::npos) << e.what();
  }
}

TEST(CpuOps, NeuronWithoutGeneratedKernelIsAClearError) {
  // The runtime has no neuron code of its own: a neuron op that names no
  // generated kernel (a hand-written or old manifest) says how to fix it.
  OneOp o("neuron", {{3, 1, 1}}, {{3, 1, 1}},
          {{"model", "li"}, {"k", 0.5}, {"c", 1.0}});
  try {
    o.run();
    FAIL() << "a neuron op without a kernel ran";
  } catch (const std::exception &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("op #0 (neuron)"), std::string::npos) << what;
    EXPECT_NE(what.find("names no generated kernel"), std::string::npos)
        << what;
    EXPECT_NE(what.find("--snn-compile=\"target=cpu\""), std::string::npos)
        << what;
  }
}

// The neuron ops and the time loops around them run compiled modules only:
// test/Runtime (recurrent-cpu.test, record-state.test, neuron-variants.test)
// checks them against the float64 reference.

TEST(CpuOps, UnsupportedOpIsAClearError) {
  OneOp o("linear_fwd", {{2, 2}}, {{2, 2}}, json::object());
  try {
    o.run();
    FAIL() << "expected an error";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("op #0 (linear_fwd)"), std::string::npos);
  }
}

TEST(CpuOps, TimeLoopWithoutBlockArgumentsIsAClearError) {
  OneOp o("time_loop", {{4, 2}, {2}}, {{4, 2}, {2}},
          {{"steps", 4}, {"num_inputs", 1}});
  o.op.args = {o.add({2})};
  o.op.yields = {o.op.args[0], o.op.args[0]};
  try {
    o.run();
    FAIL() << "a loop without one block argument per operand ran";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("needs one block argument per input "
                                         "and init (2), got 1"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
