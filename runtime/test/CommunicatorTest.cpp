//===- CommunicatorTest.cpp - collectives of the Communicator backends ----===//
//
// Runs alone (the local backend), under `mpirun -np N` (the MPI backend,
// N = 2..4) and as ranks with torchrun-style variables (the TCP backend,
// run-tcp-ranks.sh): every rank checks the results of collectives on data that
// depends on the rank, so a wrong sum, root or peer shows on some rank.
//
//===----------------------------------------------------------------------===//

#include "snnrt/Communicator.h"
#include "snnrt/Error.h"

#include "SplitChecks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <vector>

using namespace snnrt;

namespace {

Communicator &comm() {
  static std::unique_ptr<Communicator> c = [] {
    CommOptions options;
    options.timeoutSeconds = 60;
    return createCommunicator(options);
  }();
  return *c;
}

/// The same pseudo-random values on every rank for (rank, i).
float valueOf(int rank, size_t i) {
  std::mt19937 gen(static_cast<uint32_t>(rank * 7919 + i));
  return std::uniform_real_distribution<float>(-1.0f, 1.0f)(gen);
}

TEST(Communicator, BackendMatchesEnvironment) {
  JobEnvironment job = detectJobEnvironment();
  EXPECT_EQ(comm().size(), job.size);
  EXPECT_EQ(comm().rank(), job.rank);
  EXPECT_EQ(comm().backendName(), job.launcher == "mpi"        ? "mpi"
                                  : job.launcher == "torchrun" ? "tcp"
                                                               : "local");
}

TEST(Communicator, AllReduceSumsEveryRank) {
  // Small, odd-sized and multi-megabyte buffers take different MPI algorithms.
  for (size_t count : {size_t(1), size_t(1001), size_t(1) << 20}) {
    std::vector<float> data(count);
    for (size_t i = 0; i < count; i += 997)
      data[i] = valueOf(comm().rank(), i);
    comm().allReduceSum(data.data(), count);
    for (size_t i = 0; i < count; i += 997) {
      double expected = 0;
      for (int r = 0; r < comm().size(); ++r)
        expected += valueOf(r, i);
      EXPECT_NEAR(data[i], expected, 1e-5) << "count " << count << " i " << i;
    }
  }
}

TEST(Communicator, AllReduceGivesTheSameBitsOnEveryRank) {
  std::vector<float> data(4099);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = valueOf(comm().rank(), i) * 1e3f;
  comm().allReduceSum(data.data(), data.size());
  std::vector<float> root = data;
  comm().broadcast(root.data(), root.size() * sizeof(float), 0);
  EXPECT_EQ(0, std::memcmp(root.data(), data.data(), data.size() * sizeof(float)));
}

TEST(Communicator, BroadcastFromEveryRoot) {
  for (int root = 0; root < comm().size(); ++root) {
    std::vector<int32_t> data(777, -1);
    if (comm().rank() == root)
      std::iota(data.begin(), data.end(), root * 100000);
    comm().broadcast(data.data(), data.size() * sizeof(int32_t), root);
    EXPECT_EQ(data.front(), root * 100000);
    EXPECT_EQ(data.back(), root * 100000 + 776);
  }
  EXPECT_THROW(comm().broadcast(nullptr, 0, comm().size()), Error);
}

TEST(Communicator, SendReceiveAroundARing) {
  int n = comm().size(), r = comm().rank();
  if (n == 1) {
    float x = 0;
    EXPECT_THROW(comm().send(&x, sizeof x, 0), Error);
    EXPECT_THROW(comm().recv(&x, sizeof x, 1), Error);
    return;
  }
  int next = (r + 1) % n, prev = (r + n - 1) % n;
  std::vector<float> out(100003), in(out.size(), 0.0f);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = valueOf(r, i);
  auto sendOut = [&] { comm().send(out.data(), out.size() * sizeof(float), next); };
  auto recvIn = [&] { comm().recv(in.data(), in.size() * sizeof(float), prev); };
  // Even ranks send first, odd ones receive first: no cycle of blocked sends.
  if (r % 2 == 0) {
    sendOut();
    recvIn();
  } else {
    recvIn();
    sendOut();
  }
  for (size_t i = 0; i < in.size(); i += 1009)
    EXPECT_EQ(in[i], valueOf(prev, i)) << i;
}

TEST(Communicator, SameOnAllRanksPassesAndRefusesDifferences) {
  comm().barrier();
  EXPECT_NO_THROW(checkSameOnAllRanks(comm(), "the module", "abc123"));
  if (comm().size() == 1)
    return;
  std::string value = comm().rank() == comm().size() - 1 ? "other" : "abc123";
  try {
    checkSameOnAllRanks(comm(), "the module", value);
    ADD_FAILURE() << "a difference on the last rank must throw on every rank";
  } catch (const Error &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("differ in the module"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank(s) " + std::to_string(comm().size() - 1)),
              std::string::npos)
        << msg;
  }
}

TEST(Communicator, SplitIntoTheGroupsOfAMesh) {
  test::checkMeshSplit(comm());
}

TEST(Communicator, LocalBackendIsTheIdentity) {
  std::unique_ptr<Communicator> local = createLocalCommunicator();
  EXPECT_EQ(local->size(), 1);
  float x[2] = {1.5f, -2.0f};
  local->allReduceSum(x, 2);
  EXPECT_EQ(x[0], 1.5f);
  EXPECT_EQ(x[1], -2.0f);
  EXPECT_THROW(local->broadcast(x, sizeof x, 1), Error);
}

} // namespace
