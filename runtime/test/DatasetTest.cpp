//===- DatasetTest.cpp - data files, sample order and encoders ------------===//

#include "snnrt/Dataset.h"
#include "snnrt/Error.h"
#include "snnrt/Formats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sys/stat.h>

using namespace snnrt;

namespace {

std::string tmp(const std::string &name) {
  return ::testing::TempDir() + "/snnrt-ds-" + name;
}

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "no error";
}

TEST(Dataset, NpySamplesTimeMajorSeriesAndLabels) {
  std::mt19937 rng(41);
  std::uniform_real_distribution<float> d(0, 1);
  std::vector<float> x(5 * 2 * 3), series(4 * 5 * 6);
  for (float &v : x)
    v = d(rng);
  for (float &v : series)
    v = d(rng);
  writeNpy(tmp("x.npy"), {5, 2, 3}, x.data());
  writeNpy(tmp("s.npy"), {4, 5, 6}, series.data());
  std::vector<float> labels = {0, 1, 2, 1, 0};
  writeNpy(tmp("y.npy"), {5}, labels.data());

  Dataset a = loadDataset(tmp("x.npy"), tmp("y.npy"), 6, 4);
  EXPECT_FALSE(a.timeMajor);
  EXPECT_EQ(a.count, 5);
  EXPECT_EQ(a.labels, (std::vector<int32_t>{0, 1, 2, 1, 0}));
  EXPECT_EQ(a.at(3, 2, 4), x[2 * 6 + 4]); // direct: any step, same sample
  Dataset s = loadDataset(tmp("s.npy"), "", 6, 4);
  EXPECT_TRUE(s.timeMajor);
  EXPECT_EQ(s.count, 5);
  EXPECT_EQ(s.at(3, 2, 4), series[(3 * 5 + 2) * 6 + 4]);
  limitDataset(s, 2);
  EXPECT_EQ(s.count, 2);
  EXPECT_EQ(s.at(3, 1, 5), series[(3 * 5 + 1) * 6 + 5]);

  EXPECT_NE(errorOf([&] { loadDataset(tmp("x.npy"), "", 7, 4); })
                .find("samples have 6 values but the model's input takes 7"),
            std::string::npos);
  writeNpy(tmp("y3.npy"), {3}, labels.data());
  EXPECT_NE(errorOf([&] { loadDataset(tmp("x.npy"), tmp("y3.npy"), 6, 4); })
                .find("3 labels for the 5 samples"),
            std::string::npos);
  std::vector<float> frac = {0.5f, 1, 2, 1, 0};
  writeNpy(tmp("yf.npy"), {5}, frac.data());
  EXPECT_NE(errorOf([&] { loadDataset(tmp("x.npy"), tmp("yf.npy"), 6, 4); })
                .find("not a class index"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { loadDataset(tmp("missing.npy"), "", 6, 4); })
                .find("no such file or directory"),
            std::string::npos);
  std::string empty = tmp("empty-dir");
  ::mkdir(empty.c_str(), 0755);
  EXPECT_NE(errorOf([&] { loadIdxSplit(empty, "train", 6, 4); })
                .find("no train-images-idx3-ubyte[.gz]"),
            std::string::npos);
}

TEST(Dataset, EpochOrderIsASeededPermutation) {
  auto a = epochOrder(1000, 7, 3, true), b = epochOrder(1000, 7, 3, true);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, epochOrder(1000, 7, 4, true));
  EXPECT_NE(a, epochOrder(1000, 8, 3, true));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, epochOrder(1000, 7, 3, false));
  EXPECT_NE(a, sorted);
}

TEST(Dataset, RateEncoderIsSeededBernoulliAndPaddingIsZero) {
  Dataset d;
  d.count = 3;
  d.sampleSize = 2000;
  d.samples.resize(3 * 2000);
  for (size_t i = 0; i < d.samples.size(); ++i)
    d.samples[i] = (i % 2000) < 1000 ? 0.2f : 0.7f;
  std::vector<int64_t> order = {2, 0, 1};
  const int T = 3, B = 4;
  std::vector<float> x(T * B * 2000), y(x.size());
  encodeBatch(d, order, 0, 3, T, B, Encoder::Rate, 99, x.data());
  encodeBatch(d, order, 0, 3, T, B, Encoder::Rate, 99, y.data());
  EXPECT_EQ(x, y);
  encodeBatch(d, order, 0, 3, T, B, Encoder::Rate, 100, y.data());
  EXPECT_NE(x, y);
  double low = 0, high = 0;
  for (int t = 0; t < T; ++t)
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < 2000; ++i) {
        float v = x[(t * B + b) * 2000 + i];
        ASSERT_TRUE(v == 0.0f || v == 1.0f);
        if (b == 3)
          EXPECT_EQ(v, 0.0f); // padding row
        else
          (i < 1000 ? low : high) += v;
      }
  EXPECT_NEAR(low / (T * 3 * 1000), 0.2, 0.02);
  EXPECT_NEAR(high / (T * 3 * 1000), 0.7, 0.02);
  encodeBatch(d, order, 1, 2, T, B, Encoder::Direct, 0, x.data());
  EXPECT_EQ(x[(2 * B + 1) * 2000 + 5], d.samples[1 * 2000 + 5]); // order[2]
}

TEST(Dataset, LatencyEncoderFiresOnceEarlierForLargerValues) {
  Dataset d;
  d.count = 1;
  d.sampleSize = 5;
  d.samples = {1.0f, 0.5f, 0.0f, 0.26f, 2.0f};
  std::vector<int64_t> order = {0};
  const int T = 5, B = 1;
  std::vector<float> x(T * B * 5);
  encodeBatch(d, order, 0, 1, T, B, Encoder::Latency, 0, x.data());
  // Steps: 1.0 -> 0, 0.5 -> 2, 0.0 -> never, 0.26 -> round(2.96) = 3,
  // 2.0 (clamped to 1) -> 0.
  std::vector<int> want = {0, 2, -1, 3, 0};
  for (int i = 0; i < 5; ++i)
    for (int t = 0; t < T; ++t)
      EXPECT_EQ(x[t * 5 + i], t == want[i] ? 1.0f : 0.0f) << "input " << i
                                                          << " step " << t;
  EXPECT_EQ(parseEncoder("latency"), Encoder::Latency);
  EXPECT_NE(errorOf([] { parseEncoder("phase"); }).find(
                "--encoder must be direct, rate or latency"),
            std::string::npos);
}

} // namespace
