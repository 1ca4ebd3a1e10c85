//===- FusedCountTest.cpp - a neuron op's "spike_count" in the manifest ---===//

#include "snnrt/Error.h"
#include "snnrt/Manifest.h"

#include <gtest/gtest.h>

using namespace snnrt;
using nlohmann::json;

namespace {

TEST(FusedCount, NoneWithoutTheAttribute) {
  EXPECT_FALSE(readFusedCount(json::object(), {1}, {2}, "op"));
}

TEST(FusedCount, LimitDecisionAndGradientBits) {
  json attrs = {{"spike_count", {{"limit", 3}, {"decision", 5}, {"bits", 6}}}};
  FusedCount count = readFusedCount(attrs, {1, 2, 3}, {4, 5, 6}, "op");
  ASSERT_TRUE(count);
  EXPECT_EQ(count.limit, 3);
  EXPECT_EQ(count.decision, 5);
  EXPECT_EQ(count.bits, 6);
  attrs["spike_count"].erase("bits");
  EXPECT_EQ(readFusedCount(attrs, {1, 2, 3}, {4, 5, 6}, "op").bits, -1);
}

TEST(FusedCount, BitsMustBeAnOutput) {
  // An input, or a tensor the op does not name: one clear error.
  json attrs = {{"spike_count", {{"limit", 3}, {"decision", 5}, {"bits", 2}}}};
  try {
    readFusedCount(attrs, {1, 2, 3}, {4, 5}, "m: op 7");
    FAIL() << "bits among the inputs accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("m: op 7: the 'spike_count' bits "
                                         "must be an output"),
              std::string::npos)
        << e.what();
  }
  attrs["spike_count"]["bits"] = "6";
  EXPECT_THROW(readFusedCount(attrs, {1, 2, 3}, {4, 5, 6}, "op"), Error);
}

} // namespace
