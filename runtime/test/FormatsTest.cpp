//===- FormatsTest.cpp - .npy, safetensors and IDX files ------------------===//

#include "snnrt/Error.h"
#include "snnrt/Formats.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>

using namespace snnrt;

namespace {

std::string tmp(const std::string &name) {
  return ::testing::TempDir() + "/snnrt-" + name;
}

TEST(Formats, NpyRoundTrip) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-3, 3);
  std::vector<float> v(2 * 3 * 4);
  for (float &x : v)
    x = d(rng);
  writeNpy(tmp("a.npy"), {2, 3, 4}, v.data());
  HostArray a = readNpy(tmp("a.npy"));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(a.data, v);
}

TEST(Formats, SafetensorsRoundTripAndTruncation) {
  std::map<std::string, HostArray> t;
  t["fc.weight"] = HostArray{{2, 3}, {1, 2, 3, 4, 5, 6}};
  t["fc.bias"] = HostArray{{2}, {-1, 0.5f}};
  writeSafetensors(tmp("w.safetensors"), t, {{"epoch", "3"}});
  auto back = readSafetensors(tmp("w.safetensors"));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back["fc.weight"].data, t["fc.weight"].data);
  EXPECT_EQ(back["fc.bias"].shape, (std::vector<int64_t>{2}));

  std::ifstream in(tmp("w.safetensors"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(tmp("cut.safetensors"), std::ios::binary)
      << bytes.substr(0, bytes.size() - 4);
  try {
    readSafetensors(tmp("cut.safetensors"));
    FAIL() << "a truncated file must be an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("truncated or corrupt"), std::string::npos)
        << e.what();
  }
}

TEST(Formats, NotAnNpyFile) {
  std::ofstream(tmp("bad.npy")) << "hello";
  EXPECT_THROW(readNpy(tmp("bad.npy")), Error);
}

TEST(Formats, IdxImages) {
  std::string bytes = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2,
                       7, 8, 9, static_cast<char>(200)};
  std::ofstream(tmp("x-idx3-ubyte"), std::ios::binary) << bytes;
  HostArray a = readIdx(tmp("x-idx3-ubyte"));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(a.data, (std::vector<float>{7, 8, 9, 200}));
  std::ofstream(tmp("short-idx3-ubyte"), std::ios::binary) << bytes.substr(0, 18);
  EXPECT_THROW(readIdx(tmp("short-idx3-ubyte")), Error);
}

} // namespace
