//===- SplitChecks.h - Communicator::split on every backend -----*- C++ -*-===//
//
// The checks of a 2-D mesh of the ranks of `comm`, shared by the tests of
// the process backends (local, MPI, TCP) and of the threads backend: rank
// r = d * P + p, the time group (color d) and the data group (color p);
// each rank checks sums, broadcasts and sends that depend on the members,
// and both groups at once from two threads (the data parallel reducer's
// thread beside the time split's programs).
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_TEST_SPLITCHECKS_H
#define SNNRT_TEST_SPLITCHECKS_H

#include "snnrt/Communicator.h"
#include "snnrt/Error.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace snnrt::test {

inline float splitValue(int rank, size_t i) {
  std::mt19937 gen(static_cast<uint32_t>(rank * 104729 + i));
  return std::uniform_real_distribution<float>(-1.0f, 1.0f)(gen);
}

/// Sums of `group` (whose members are the ranks of the job in `members`)
/// are the members' values, the same bits on each member.
inline void checkGroupSum(Communicator &group, const std::vector<int> &members,
                          int worldRank, size_t count) {
  std::vector<float> data(count);
  for (size_t i = 0; i < count; ++i)
    data[i] = splitValue(worldRank, i);
  group.allReduceSum(data.data(), count);
  for (size_t i = 0; i < count; i += 97) {
    double expected = 0;
    for (int m : members)
      expected += splitValue(m, i);
    EXPECT_NEAR(data[i], expected, 1e-5) << "rank " << worldRank << " i " << i;
  }
  std::vector<float> root = data;
  group.broadcast(root.data(), root.size() * sizeof(float), 0);
  EXPECT_EQ(0, std::memcmp(root.data(), data.data(), count * sizeof(float)));
}

inline void checkMeshSplit(Communicator &comm) {
  const int n = comm.size(), r = comm.rank();
  const int parts = n % 2 == 0 ? 2 : n, replicas = n / parts;
  const int p = r % parts, d = r / parts;
  std::unique_ptr<Communicator> time = comm.split(d, p);
  std::unique_ptr<Communicator> data = comm.split(p, d);
  ASSERT_EQ(time->size(), parts);
  ASSERT_EQ(time->rank(), p);
  ASSERT_EQ(data->size(), replicas);
  ASSERT_EQ(data->rank(), d);
  std::vector<int> timeMembers, dataMembers;
  for (int q = 0; q < parts; ++q)
    timeMembers.push_back(d * parts + q);
  for (int e = 0; e < replicas; ++e)
    dataMembers.push_back(e * parts + p);
  checkGroupSum(*time, timeMembers, r, 1001);
  checkGroupSum(*data, dataMembers, r, 1001);
  checkGroupSum(time->host(), timeMembers, r, 17);

  // Both groups at once, many rounds.
  std::thread other([&] {
    for (int k = 0; k < 20; ++k)
      checkGroupSum(*data, dataMembers, r, 513);
  });
  for (int k = 0; k < 20; ++k)
    checkGroupSum(*time, timeMembers, r, 257);
  other.join();

  // Along the time group: each rank receives its predecessor's values.
  if (parts > 1) {
    std::vector<float> out(4099), in(out.size(), 0.0f);
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = splitValue(r, i);
    if (p + 1 < parts)
      time->send(out.data(), out.size() * sizeof(float), p + 1);
    if (p > 0) {
      time->recv(in.data(), in.size() * sizeof(float), p - 1);
      for (size_t i = 0; i < in.size(); i += 101)
        EXPECT_EQ(in[i], splitValue(r - 1, i)) << i;
    }
  }
  EXPECT_THROW(time->send(nullptr, 0, parts, nullptr), Error);

  // The key orders the group: here, the reverse of the job's ranks.
  std::unique_ptr<Communicator> reversed = comm.split(0, n - 1 - r);
  EXPECT_EQ(reversed->size(), n);
  EXPECT_EQ(reversed->rank(), n - 1 - r);
  int32_t token = reversed->rank() == 0 ? 4242 : 0;
  reversed->broadcast(&token, sizeof token, 0);
  EXPECT_EQ(token, 4242);
  reversed->barrier();

  EXPECT_THROW(comm.split(-1, 0), Error);
}

} // namespace snnrt::test

#endif // SNNRT_TEST_SPLITCHECKS_H
