//===- ThreadCommunicator.cpp - ranks as threads of one process -----------===//

#include "snnrt/ThreadCommunicator.h"
#include "snnrt/Error.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

namespace snnrt {

Parcel::~Parcel() = default;
ThreadTransport::~ThreadTransport() = default;

namespace {

struct HostParcel : Parcel {
  std::vector<char> data;
};

class HostTransport : public ThreadTransport {
public:
  bool deviceBuffers() const override { return false; }
  std::shared_ptr<Parcel> pack(const void *src, size_t bytes, void *) override {
    auto p = std::make_shared<HostParcel>();
    p->bytes = bytes;
    p->data.assign(static_cast<const char *>(src),
                   static_cast<const char *>(src) + bytes);
    return p;
  }
  void unpack(Parcel &parcel, void *dst, void *) override {
    auto &p = static_cast<HostParcel &>(parcel);
    std::memcpy(dst, p.data.data(), p.bytes);
  }
  void accumulate(Parcel &parcel, float *dst, size_t count, void *) override {
    const float *src =
        reinterpret_cast<const float *>(static_cast<HostParcel &>(parcel).data.data());
    for (size_t i = 0; i < count; ++i)
      dst[i] += src[i];
  }
};

using Clock = std::chrono::steady_clock;

/// What the ranks of one group share. Two channels: the ranks' own buffers
/// (host or device, by their transports) and host() (host buffers); each
/// has its own mailboxes and its own sequence of collectives.
struct Group {
  struct Round {
    std::vector<std::shared_ptr<Parcel>> parcels;
    int arrived = 0, left = 0;
  };
  struct Channel {
    std::map<std::pair<int, int>, std::deque<std::shared_ptr<Parcel>>> mail;
    std::map<uint64_t, Round> rounds;
  };
  /// A group split from this one, until each of its members took it.
  struct Pending {
    std::shared_ptr<Group> group;
    size_t taken = 0;
  };
  Group(int size, double timeout) : size(size), timeout(timeout) {}
  const int size;
  const double timeout;
  std::mutex mutex;
  std::condition_variable changed;
  Channel channels[2];
  /// (split number, first member) -> the sub-group being formed.
  std::map<std::pair<uint64_t, int>, Pending> splits;
};

[[noreturn]] void endProcess(int rank, const std::string &why) {
  std::fflush(stdout);
  std::fprintf(stderr, "snn-run: error: rank %d: %s\n", rank, why.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

class ThreadRank : public Communicator {
public:
  /// `global`: this rank in the job, for messages (a split's group ranks
  /// count from 0 again).
  ThreadRank(std::shared_ptr<Group> group, int rank, int channel, int global)
      : group(std::move(group)), me(rank), global(global), channel(channel),
        transport(createHostTransport()) {
    if (channel == 1)
      hostRank = std::make_unique<ThreadRank>(this->group, rank, 0, global);
  }
  int rank() const override { return me; }
  int size() const override { return group->size; }
  std::string backendName() const override { return "threads"; }
  bool deviceBuffers() const override { return transport->deviceBuffers(); }
  Communicator &host() override { return hostRank ? *hostRank : *this; }
  void attach(std::unique_ptr<ThreadTransport> t) { transport = std::move(t); }

  void allReduceSum(float *data, size_t count, void *stream) override {
    std::vector<std::shared_ptr<Parcel>> parts =
        exchange(transport->pack(data, count * sizeof(float), stream),
                 "an all-reduce");
    // Rank order: every rank adds the same numbers in the same order.
    transport->unpack(*parts[0], data, stream);
    for (int r = 1; r < group->size; ++r)
      transport->accumulate(*parts[r], data, count, stream);
  }
  void broadcast(void *data, size_t bytes, int root, void *stream) override {
    if (root < 0 || root >= group->size)
      throw Error("broadcast from rank " + std::to_string(root) +
                  ", which a group of " + std::to_string(group->size) +
                  " ranks does not have");
    std::vector<std::shared_ptr<Parcel>> parts = exchange(
        me == root ? transport->pack(data, bytes, stream) : nullptr,
        "a broadcast");
    if (me != root)
      transport->unpack(*parts[root], data, stream);
  }
  void send(const void *data, size_t bytes, int peer, void *stream) override {
    checkPeer(peer);
    std::shared_ptr<Parcel> parcel = transport->pack(data, bytes, stream);
    std::lock_guard<std::mutex> lock(group->mutex);
    group->channels[channel].mail[{me, peer}].push_back(std::move(parcel));
    group->changed.notify_all();
  }
  void recv(void *data, size_t bytes, int peer, void *stream) override {
    checkPeer(peer);
    std::shared_ptr<Parcel> parcel;
    {
      std::unique_lock<std::mutex> lock(group->mutex);
      auto &box = group->channels[channel].mail[{peer, me}];
      waitFor(lock, [&] { return !box.empty(); },
              "a receive from rank " + std::to_string(peer));
      parcel = std::move(box.front());
      box.pop_front();
    }
    if (parcel->bytes != bytes)
      throw Error("rank " + std::to_string(me) + " expected " +
                  std::to_string(bytes) + " bytes from rank " +
                  std::to_string(peer) + " but it sent " +
                  std::to_string(parcel->bytes) +
                  ": the ranks run different programs");
    transport->unpack(*parcel, data, stream);
  }
  void barrier() override { exchange(nullptr, "a barrier"); }
  [[noreturn]] void abort(const std::string &why) override {
    endProcess(global, why);
  }
  /// The members share a Group of their own (device transports attach to
  /// it as to the job's); the first member to arrive makes it.
  std::unique_ptr<Communicator> split(int color, int key) override {
    std::vector<int> members = splitMembers(*this, color, key);
    uint64_t n = nextSplit++;
    std::shared_ptr<Group> sub;
    {
      std::lock_guard<std::mutex> lock(group->mutex);
      std::pair<uint64_t, int> id{n, members.front()};
      Group::Pending &pending = group->splits[id];
      if (!pending.group)
        pending.group = std::make_shared<Group>(
            static_cast<int>(members.size()), group->timeout);
      sub = pending.group;
      if (++pending.taken == members.size())
        group->splits.erase(id);
    }
    int rank = static_cast<int>(
        std::find(members.begin(), members.end(), me) - members.begin());
    return std::make_unique<ThreadRank>(std::move(sub), rank, 1, global);
  }

private:
  void checkPeer(int peer) const {
    if (peer < 0 || peer >= group->size || peer == me)
      throw Error("rank " + std::to_string(me) + " of " +
                  std::to_string(group->size) + " has no peer rank " +
                  std::to_string(peer));
  }
  template <typename Ready>
  void waitFor(std::unique_lock<std::mutex> &lock, Ready ready,
               const std::string &what) {
    if (group->timeout <= 0) {
      group->changed.wait(lock, ready);
      return;
    }
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(group->timeout));
    if (!group->changed.wait_until(lock, deadline, ready)) {
      char msg[160];
      std::snprintf(msg, sizeof msg, " did not finish within %g s "
                                     "(--comm-timeout): a peer rank stopped, "
                                     "failed or hangs; ending the job",
                    group->timeout);
      lock.unlock();
      endProcess(global, what + msg);
    }
  }
  /// Collective number n (every rank calls them in the same order): packs
  /// this rank's part, waits for every rank's, returns them all.
  std::vector<std::shared_ptr<Parcel>> exchange(std::shared_ptr<Parcel> mine,
                                                const char *what) {
    uint64_t n = nextRound++;
    std::unique_lock<std::mutex> lock(group->mutex);
    Group::Channel &ch = group->channels[channel];
    Group::Round &round = ch.rounds[n]; // map references stay valid
    if (round.parcels.empty())
      round.parcels.resize(static_cast<size_t>(group->size));
    round.parcels[static_cast<size_t>(me)] = std::move(mine);
    ++round.arrived;
    group->changed.notify_all();
    waitFor(lock, [&] { return round.arrived == group->size; },
            what);
    std::vector<std::shared_ptr<Parcel>> parts = round.parcels;
    if (++round.left == group->size)
      ch.rounds.erase(n);
    return parts;
  }

  std::shared_ptr<Group> group;
  const int me, global, channel;
  std::unique_ptr<ThreadTransport> transport;
  std::unique_ptr<ThreadRank> hostRank; ///< host(): channel 0
  uint64_t nextRound = 0, nextSplit = 0;
};

} // namespace

std::unique_ptr<ThreadTransport> createHostTransport() {
  return std::make_unique<HostTransport>();
}

std::vector<std::unique_ptr<Communicator>>
createThreadGroup(int size, double timeoutSeconds) {
  if (size < 1)
    throw Error("a group of threads needs at least one rank, not " +
                std::to_string(size));
  auto group = std::make_shared<Group>(size, timeoutSeconds);
  std::vector<std::unique_ptr<Communicator>> ranks;
  for (int r = 0; r < size; ++r)
    ranks.push_back(std::make_unique<ThreadRank>(group, r, 1, r));
  return ranks;
}

bool attachThreadTransport(Communicator &comm,
                           std::unique_ptr<ThreadTransport> transport) {
  auto *rank = dynamic_cast<ThreadRank *>(&comm);
  if (!rank)
    return false;
  rank->attach(std::move(transport));
  return true;
}

} // namespace snnrt
