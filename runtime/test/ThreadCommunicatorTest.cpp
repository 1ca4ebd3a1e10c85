//===- ThreadCommunicatorTest.cpp - ranks as threads of one process -------===//
//
// The "threads" backend on host buffers: each rank runs on its own thread,
// with data that depends on the rank, so a wrong sum, order, root or peer
// shows on some rank.
//
//===----------------------------------------------------------------------===//

#include "snnrt/Error.h"
#include "snnrt/ThreadCommunicator.h"

#include "SplitChecks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

using namespace snnrt;

namespace {

/// Runs `body(comm)` on one thread per rank of a new group of `size`.
void onRanks(int size, const std::function<void(Communicator &)> &body) {
  std::vector<std::unique_ptr<Communicator>> ranks =
      createThreadGroup(size, 30.0);
  std::vector<std::thread> threads;
  for (auto &rank : ranks)
    threads.emplace_back([&body, &rank] { body(*rank); });
  for (std::thread &t : threads)
    t.join();
}

float valueOf(int rank, size_t i) {
  std::mt19937 gen(static_cast<uint32_t>(rank * 7919 + i));
  return std::uniform_real_distribution<float>(-1.0f, 1.0f)(gen);
}

TEST(ThreadCommunicator, AllReduceSumsInRankOrderOnEveryRank) {
  const int size = 3;
  const size_t count = 1001;
  std::mutex mutex;
  std::vector<std::vector<float>> results(size);
  onRanks(size, [&](Communicator &comm) {
    EXPECT_EQ(comm.size(), size);
    EXPECT_EQ(comm.backendName(), "threads");
    EXPECT_FALSE(comm.deviceBuffers());
    std::vector<float> data(count);
    for (size_t i = 0; i < count; ++i)
      data[i] = valueOf(comm.rank(), i);
    comm.allReduceSum(data.data(), count); // in place
    std::lock_guard<std::mutex> lock(mutex);
    results[static_cast<size_t>(comm.rank())] = data;
  });
  for (size_t i = 0; i < count; ++i) {
    float expected = valueOf(0, i); // the rank order, in float
    for (int r = 1; r < size; ++r)
      expected += valueOf(r, i);
    for (int r = 0; r < size; ++r)
      EXPECT_EQ(results[static_cast<size_t>(r)][i], expected) << "rank " << r;
  }
}

TEST(ThreadCommunicator, SplitIntoTheGroupsOfAMesh) {
  for (int size : {1, 3, 4, 6})
    onRanks(size, [](Communicator &comm) { test::checkMeshSplit(comm); });
}

TEST(ThreadCommunicator, BroadcastFromEveryRootAndBarrier) {
  onRanks(4, [](Communicator &comm) {
    for (int root = 0; root < comm.size(); ++root) {
      std::vector<int32_t> data(77, comm.rank() == root ? root * 1000 : -1);
      comm.broadcast(data.data(), data.size() * sizeof(int32_t), root);
      EXPECT_EQ(data.front(), root * 1000);
      EXPECT_EQ(data.back(), root * 1000);
      comm.barrier();
    }
  });
}

/// A chain as in a time split: rank r receives from r - 1 and sends to
/// r + 1; messages arrive in the order they were sent, and a send does not
/// wait for its receive.
TEST(ThreadCommunicator, SendsArriveInOrderAlongTheChain) {
  onRanks(3, [](Communicator &comm) {
    int r = comm.rank();
    for (int k = 0; k < 5; ++k) {
      double value = r * 100 + k;
      if (r > 0) {
        double got = 0;
        comm.recv(&got, sizeof got, r - 1);
        EXPECT_EQ(got, (r - 1) * 100 + k);
      }
      if (r + 1 < comm.size())
        comm.send(&value, sizeof value, r + 1);
    }
    // The last rank sends everything back before rank 0 receives any.
    if (r == comm.size() - 1)
      for (int k = 0; k < 3; ++k)
        comm.send(&k, sizeof k, 0);
    if (r == 0)
      for (int k = 0; k < 3; ++k) {
        int got = -1;
        comm.recv(&got, sizeof got, comm.size() - 1);
        EXPECT_EQ(got, k);
      }
  });
}

/// host() is a channel of its own: its collectives and messages do not
/// mix with the ranks' own.
TEST(ThreadCommunicator, HostChannelIsSeparate) {
  onRanks(2, [](Communicator &comm) {
    Communicator &host = comm.host();
    EXPECT_NE(&host, &comm);
    EXPECT_EQ(host.rank(), comm.rank());
    int peer = 1 - comm.rank();
    float own = 1.0f + comm.rank(), viaHost = 10.0f * (1 + comm.rank());
    comm.send(&own, sizeof own, peer);
    host.send(&viaHost, sizeof viaHost, peer);
    float a = 0, b = 0;
    host.recv(&b, sizeof b, peer);
    comm.recv(&a, sizeof a, peer);
    EXPECT_EQ(a, 1.0f + peer);
    EXPECT_EQ(b, 10.0f * (1 + peer));
  });
}

TEST(ThreadCommunicator, ReceiveOfAnotherSizeIsAnError) {
  onRanks(2, [](Communicator &comm) {
    if (comm.rank() == 0) {
      int64_t header[2] = {7, 8};
      comm.send(header, sizeof header, 1);
      return;
    }
    int32_t small = 0;
    try {
      comm.recv(&small, sizeof small, 0);
      ADD_FAILURE() << "a receive of 4 bytes took a message of 16";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("expected 4 bytes from rank 0 but "
                                           "it sent 16"),
                std::string::npos)
          << e.what();
    }
  });
}

TEST(ThreadCommunicator, BadPeerIsAnError) {
  onRanks(2, [](Communicator &comm) {
    int x = 0;
    EXPECT_THROW(comm.send(&x, sizeof x, comm.rank()), Error);
    EXPECT_THROW(comm.send(&x, sizeof x, 2), Error);
    EXPECT_THROW(comm.broadcast(&x, sizeof x, -1), Error);
  });
  EXPECT_THROW(createThreadGroup(0, 1.0), Error);
}

} // namespace
