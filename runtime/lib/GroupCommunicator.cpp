//===- GroupCommunicator.cpp - sub-communicators of a job -----------------===//
//
// Communicator::split for backends without their own: a group of the
// parent's ranks that talks through the parent's send/recv. The sums run on
// group rank 0 in group rank order and go back to every member, so each
// member holds the same bits, as the TCP backend's own sums do.
//
//===----------------------------------------------------------------------===//

#include "snnrt/Communicator.h"
#include "snnrt/Error.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

namespace snnrt {

namespace {

/// Colors and keys travel as floats (exact below 2^24).
constexpr int kMaxColor = 1 << 24;

class GroupView : public Communicator {
public:
  GroupView(Communicator &parent, std::vector<int> members)
      : parent(parent), members(std::move(members)) {
    auto it = std::find(this->members.begin(), this->members.end(),
                        parent.rank());
    if (it == this->members.end())
      throw Error("rank " + std::to_string(parent.rank()) +
                  " is not a member of the group it joins");
    me = static_cast<int>(it - this->members.begin());
    if (parent.deviceBuffers())
      throw Error(parent.backendName() + ": a group of ranks over the "
                                         "parent's send/recv needs host "
                                         "buffers");
    if (&parent.host() != &parent)
      hostView = std::make_unique<GroupView>(parent.host(), this->members);
  }
  int rank() const override { return me; }
  int size() const override { return static_cast<int>(members.size()); }
  std::string backendName() const override { return parent.backendName(); }
  Communicator &host() override { return hostView ? *hostView : *this; }

  void allReduceSum(float *data, size_t count, void *stream) override {
    if (size() == 1)
      return;
    size_t bytes = count * sizeof(float);
    if (me != 0) {
      parent.send(data, bytes, members[0], stream);
      parent.recv(data, bytes, members[0], stream);
      return;
    }
    std::vector<float> part(count);
    for (int r = 1; r < size(); ++r) {
      parent.recv(part.data(), bytes, members[size_t(r)], stream);
      for (size_t i = 0; i < count; ++i)
        data[i] += part[i];
    }
    for (int r = 1; r < size(); ++r)
      parent.send(data, bytes, members[size_t(r)], stream);
  }
  void broadcast(void *data, size_t bytes, int root, void *stream) override {
    checkPeer(root, "broadcast");
    if (me != root) {
      parent.recv(data, bytes, members[size_t(root)], stream);
      return;
    }
    for (int r = 0; r < size(); ++r)
      if (r != root)
        parent.send(data, bytes, members[size_t(r)], stream);
  }
  void send(const void *data, size_t bytes, int peer, void *stream) override {
    checkPeer(peer, "send");
    parent.send(data, bytes, members[size_t(peer)], stream);
  }
  void recv(void *data, size_t bytes, int peer, void *stream) override {
    checkPeer(peer, "recv");
    parent.recv(data, bytes, members[size_t(peer)], stream);
  }
  void barrier() override {
    float token = 1.0f;
    allReduceSum(&token, 1, nullptr);
  }
  [[noreturn]] void abort(const std::string &why) override {
    parent.abort(why);
    std::_Exit(1); // the parents' abort does not return
  }
  void watchStream(void *stream) override { parent.watchStream(stream); }

private:
  void checkPeer(int peer, const char *what) const {
    if (peer < 0 || peer >= size())
      throw Error(std::string(what) + ": rank " + std::to_string(peer) +
                  " does not exist in a group of " + std::to_string(size()) +
                  " ranks");
  }
  Communicator &parent;
  std::vector<int> members; ///< group rank -> parent rank
  int me = 0;
  std::unique_ptr<GroupView> hostView; ///< host(): over parent.host()
};

} // namespace

std::vector<int> splitMembers(Communicator &comm, int color, int key) {
  if (color < 0 || color >= kMaxColor || key < 0 || key >= kMaxColor)
    throw Error("split: color " + std::to_string(color) + " and key " +
                std::to_string(key) + " must be in [0, 2^24)");
  int n = comm.size();
  std::vector<float> table(2 * size_t(n), 0.0f);
  table[2 * size_t(comm.rank())] = static_cast<float>(color);
  table[2 * size_t(comm.rank()) + 1] = static_cast<float>(key);
  comm.host().allReduceSum(table.data(), table.size());
  std::vector<std::tuple<int, int>> group; // (key, rank)
  for (int r = 0; r < n; ++r)
    if (static_cast<int>(table[2 * size_t(r)]) == color)
      group.emplace_back(static_cast<int>(table[2 * size_t(r) + 1]), r);
  std::sort(group.begin(), group.end());
  std::vector<int> members;
  for (auto &[k, r] : group)
    members.push_back(r);
  return members;
}

std::unique_ptr<Communicator> createGroupView(Communicator &parent,
                                              std::vector<int> members) {
  return std::make_unique<GroupView>(parent, std::move(members));
}

std::unique_ptr<Communicator> Communicator::split(int color, int key) {
  return createGroupView(*this, splitMembers(*this, color, key));
}

} // namespace snnrt
