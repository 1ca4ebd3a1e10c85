//===- CpuThreadsTest.cpp - the pool of the generated CPU kernels ---------===//

#include "snnrt/CpuThreads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace snnrt;

namespace {

TEST(CpuThreads, ChunksCoverTheItemsOnceInOrder) {
  for (int64_t items : {1, 7, 10, 1001})
    for (int64_t chunks : {1, 2, 3, 7}) {
      if (chunks > items)
        continue;
      int64_t next = 0;
      for (int64_t c = 0; c < chunks; ++c) {
        auto [begin, end] = getChunkRange(items, chunks, c);
        EXPECT_EQ(begin, next);
        EXPECT_GE(end - begin, items / chunks);
        EXPECT_LE(end - begin, items / chunks + 1);
        next = end;
      }
      EXPECT_EQ(next, items);
    }
}

/// Every item runs exactly once, on up to `threads` threads, for an odd
/// split (7 items on 3 threads: 3 + 2 + 2) and a grain that limits them.
TEST(CpuThreads, ParallelForRunsEachItemOnce) {
  setCpuThreads(3);
  for (auto [items, grain, expectChunks] :
       std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {7, 1, 3}, {7, 4, 2}, {7, 7, 1}, {100000, 1, 3}}) {
    std::vector<std::atomic<int>> hits(items);
    std::atomic<int> calls{0};
    parallelFor(items, grain, [&](int64_t begin, int64_t end) {
      ++calls;
      for (int64_t i = begin; i < end; ++i)
        ++hits[i];
    });
    EXPECT_EQ(calls.load(), expectChunks) << items << " items, grain " << grain;
    for (int64_t i = 0; i < items; ++i)
      ASSERT_EQ(hits[i].load(), 1) << "item " << i;
  }
  setCpuThreads(1);
  std::atomic<int> calls{0};
  parallelFor(1000, 1, [&](int64_t begin, int64_t end) {
    ++calls;
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 1000);
  });
  EXPECT_EQ(calls.load(), 1);
}

/// A call from inside a running body (or from another thread while the pool
/// is busy) runs on its own thread instead of waiting for the pool.
TEST(CpuThreads, NestedCallRunsInline) {
  setCpuThreads(2);
  std::atomic<int> inner{0};
  parallelFor(2, 1, [&](int64_t, int64_t) {
    parallelFor(4, 1, [&](int64_t begin, int64_t end) { inner += end - begin; });
  });
  EXPECT_EQ(inner.load(), 8);
  setCpuThreads(1);
}

TEST(CpuThreads, RejectsZeroThreads) {
  EXPECT_THROW(setCpuThreads(0), std::exception);
}

} // namespace
