//===- FormatsTest.cpp - .npy, safetensors and IDX files ------------------===//

#include "snnrt/Error.h"
#include "snnrt/Formats.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
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
  std::map<std::string, std::string> meta;
  auto back = readSafetensors(tmp("w.safetensors"), &meta);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(meta, (std::map<std::string, std::string>{{"epoch", "3"}}));
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

/// A hand-written .npy (header version, dtype descr, shape, raw data).
void writeRawNpy(const std::string &path, int version, const std::string &descr,
                 const std::string &shape, const std::string &data) {
  std::string dict = "{'descr': '" + descr +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t pre = version == 1 ? 10 : 12;
  while ((pre + dict.size() + 1) % 64)
    dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += char(version);
  out += '\0';
  uint32_t len = static_cast<uint32_t>(dict.size());
  out.append(reinterpret_cast<const char *>(&len), version == 1 ? 2 : 4);
  std::ofstream(path, std::ios::binary) << out << dict << data;
}

TEST(Formats, NpyDtypesAndHeaderVersions) {
  double d[3] = {1.5, -2.25, 1e10};
  writeRawNpy(tmp("f64.npy"), 1, "<f8", "(3,)",
              std::string(reinterpret_cast<char *>(d), sizeof d));
  EXPECT_EQ(readNpy(tmp("f64.npy")).data,
            (std::vector<float>{1.5f, -2.25f, 1e10f}));
  writeRawNpy(tmp("u8.npy"), 2, "|u1", "(2, 2)", std::string("\x01\x02\x03\xff"));
  HostArray u = readNpy(tmp("u8.npy"));
  EXPECT_EQ(u.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(u.data, (std::vector<float>{1, 2, 3, 255}));
  int64_t l[2] = {7, -3};
  writeRawNpy(tmp("i64.npy"), 1, "<i8", "(2,)",
              std::string(reinterpret_cast<char *>(l), sizeof l));
  EXPECT_EQ(readNpy(tmp("i64.npy")).data, (std::vector<float>{7, -3}));
  writeRawNpy(tmp("short.npy"), 1, "<f4", "(4,)", std::string(8, '\0'));
  EXPECT_THROW(readNpy(tmp("short.npy")), Error);
}

TEST(Formats, SafetensorsWithBadHeaderLengthOrOffsets) {
  std::ofstream(tmp("huge.safetensors"), std::ios::binary)
      << std::string("\xff\xff\xff\x00\x00\x00\x00\x00{}", 10);
  try {
    readSafetensors(tmp("huge.safetensors"));
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("truncated safetensors file"),
              std::string::npos);
  }
  std::string header =
      R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,12]}})";
  uint64_t len = header.size();
  std::ofstream(tmp("off.safetensors"), std::ios::binary)
      << std::string(reinterpret_cast<char *>(&len), 8) << header
      << std::string(12, '\0');
  try {
    readSafetensors(tmp("off.safetensors"));
    FAIL();
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("tensor 'w'"), std::string::npos);
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
  // gzipped, as the datasets ship.
  std::ofstream(tmp("z-idx3-ubyte"), std::ios::binary) << bytes;
  ASSERT_EQ(0, std::system(("gzip -f " + tmp("z-idx3-ubyte")).c_str()));
  HostArray z = readIdx(tmp("z-idx3-ubyte.gz"));
  EXPECT_EQ(z.data, a.data);
}

} // namespace
