//===- TestMain.cpp - main() of the CUDA test programs --------------------===//

#include "OpHarness.h"

#ifdef SNNRT_USE_MINITEST
#include "MiniTest.h"
#else
#include <gtest/gtest.h>
#endif

#include <cstdio>

using namespace snnrt::cuda::test;

/// Exit code 77 tells ctest that the run was skipped (no GPU here).
int main(int argc, char **argv) {
#ifdef SNNRT_USE_MINITEST
  (void)argc, (void)argv;
  int rc = minitest::runAll();
#else
  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
#endif
  std::string whyNot;
  if (rc == 0 && !sharedDevice(whyNot)) {
    std::printf("snnrt-cuda-tests: skipped, no usable GPU: %s\n",
                whyNot.c_str());
    return 77;
  }
  return rc;
}
