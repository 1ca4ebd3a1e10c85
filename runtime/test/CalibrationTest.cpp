//===- CalibrationTest.cpp - the crossover of a measured sweep ------------===//

#include "snnrt/Calibration.h"

#include <gtest/gtest.h>

using namespace snnrt;

namespace {

const std::vector<double> kDensities = {0.01, 0.05, 0.1, 0.5};

TEST(Calibration, CrossoverInterpolatesToTheFirstSlowerDensity) {
  // Event faster at 1% and 5%, slower at 10%: event - dense goes from -1 at
  // 5% to +3 at 10%, zero at a quarter of the way.
  double c = crossoverFromSweep(kDensities, {1, 2, 5, 9}, {4, 3, 2, 2});
  EXPECT_DOUBLE_EQ(c, 0.05 + 0.05 * 1.0 / 4.0);
}

TEST(Calibration, CrossoverTakesTheLargestFasterDensity) {
  // A noisy sweep: faster again at 10% after a slower 5%.
  double c = crossoverFromSweep(kDensities, {1, 4, 2, 9}, {3, 3, 3, 3});
  EXPECT_DOUBLE_EQ(c, 0.1 + 0.4 * 1.0 / 7.0);
}

TEST(Calibration, CrossoverBounds) {
  EXPECT_EQ(crossoverFromSweep(kDensities, {5, 5, 5, 5}, {1, 1, 1, 1}), 0.0);
  EXPECT_EQ(crossoverFromSweep(kDensities, {1, 1, 1, 1}, {5, 5, 5, 5}), 0.5);
  // Equal times: not faster.
  EXPECT_EQ(crossoverFromSweep(kDensities, {2, 2, 2, 2}, {2, 2, 2, 2}), 0.0);
}

TEST(Calibration, HostCpuArch) {
  EXPECT_EQ(hostCpuArch().rfind("cpu", 0), 0u);
}

} // namespace
