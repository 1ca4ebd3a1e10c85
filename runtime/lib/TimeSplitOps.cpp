//===- TimeSplitOps.cpp - the ops of a module split in time ---------------===//

#include "snnrt/TimeSplitOps.h"
#include "snnrt/Error.h"

#include <algorithm>
#include <cstring>

namespace snnrt {

bool isTimeSplitOp(const std::string &kind) {
  return kind == "time_range" || kind == "gather_time" || kind == "send" ||
         kind == "recv" || kind == "all_reduce_sum";
}

namespace {

struct SplitOp {
  const Module &m;
  const Op &op;
  size_t index;
  const TensorLookup &tensor;
  Communicator *comm;

  [[noreturn]] void fail(const std::string &what) const {
    throw Error(m.dir + ": " + op.describe(index) + ": " + what);
  }
  void arity(size_t in, size_t out) const {
    if (op.in.size() != in || op.out.size() != out)
      fail("takes " + std::to_string(in) + " input(s) and " +
           std::to_string(out) + " output(s), got " +
           std::to_string(op.in.size()) + " and " +
           std::to_string(op.out.size()));
  }
  const TensorInfo &in(size_t i) const { return m.tensor(op.in[i]); }
  const TensorInfo &out(size_t i) const { return m.tensor(op.out[i]); }
  Communicator &ranks() const {
    if (!comm || comm->size() != m.split.parts)
      fail("needs the " + std::to_string(m.split.parts) +
           " ranks of the time split; run the module under mpirun -np " +
           std::to_string(m.split.parts));
    return *comm;
  }
  /// Rows of `t` after its leading (time) dimension.
  size_t rowSize(const TensorInfo &t) const {
    if (t.shape.empty() || t.shape[0] <= 0)
      fail("'" + t.name + "' has no leading time dimension");
    return t.numel() / static_cast<size_t>(t.shape[0]);
  }
  /// The neighbouring rank `peer` names, or -1 where there is none.
  int peerRank() const {
    std::string peer = op.attrs.value("peer", std::string());
    int r = m.split.rank;
    if (peer == "prev")
      return r > 0 ? r - 1 : -1;
    if (peer == "next")
      return r + 1 < m.split.parts ? r + 1 : -1;
    fail("'peer' must be \"prev\" or \"next\", got '" + peer + "'");
  }
  int64_t tag() const {
    int64_t t = op.attrs.value("tag", int64_t(-1));
    if (t < 0)
      fail("needs a 'tag' >= 0");
    return t;
  }
};

/// Sent ahead of each tensor: the receiver checks that it expects this one.
struct TransferHeader {
  int64_t tag, bytes;
};

void timeRange(const SplitOp &c) {
  c.arity(1, 1);
  const TensorInfo &whole = c.in(0), &local = c.out(0);
  size_t row = c.rowSize(whole);
  if (whole.shape[0] != c.m.split.steps && c.m.split.parts > 1)
    c.fail("reads " + whole.shapeString() + " but the split has " +
           std::to_string(c.m.split.steps) + " steps");
  if (c.rowSize(local) != row ||
      local.shape[0] != (c.m.split.parts > 1 ? c.m.split.length()
                                              : whole.shape[0]))
    c.fail("writes " + local.shapeString() + ", not this rank's " +
           std::to_string(c.m.split.length()) + " steps of " +
           whole.shapeString());
  const float *src = c.tensor(whole.id) + c.m.split.begin() * row;
  std::copy(src, src + local.numel(), c.tensor(local.id));
}

void gatherTime(const SplitOp &c) {
  c.arity(1, 1);
  const TensorInfo &local = c.in(0), &whole = c.out(0);
  size_t row = c.rowSize(whole);
  if (c.rowSize(local) != row || local.shape[0] != c.m.split.length() ||
      whole.shape[0] != c.m.split.steps)
    c.fail("gathers " + local.shapeString() + " into " + whole.shapeString() +
           ", which is not this rank's range of the split");
  // Every other rank adds zeros to this rank's steps: the sum is exact.
  float *dst = c.tensor(whole.id);
  std::fill(dst, dst + whole.numel(), 0.0f);
  const float *src = c.tensor(local.id);
  std::copy(src, src + local.numel(), dst + c.m.split.begin() * row);
  c.ranks().allReduceSum(dst, whole.numel());
}

void send(const SplitOp &c) {
  c.arity(1, 0);
  int peer = c.peerRank();
  int64_t tag = c.tag();
  if (peer < 0)
    return;
  const TensorInfo &t = c.in(0);
  TransferHeader header{tag, static_cast<int64_t>(t.numel() * sizeof(float))};
  Communicator &comm = c.ranks();
  comm.send(&header, sizeof header, peer);
  comm.send(c.tensor(t.id), static_cast<size_t>(header.bytes), peer);
}

void recv(const SplitOp &c) {
  c.arity(1, 1);
  const TensorInfo &fallback = c.in(0), &t = c.out(0);
  if (fallback.numel() != t.numel())
    c.fail("its fallback " + fallback.shapeString() + " is not like its "
           "result " + t.shapeString());
  int peer = c.peerRank();
  int64_t tag = c.tag();
  float *dst = c.tensor(t.id);
  if (peer < 0) {
    const float *src = c.tensor(fallback.id);
    std::copy(src, src + t.numel(), dst);
    return;
  }
  Communicator &comm = c.ranks();
  TransferHeader header{};
  comm.recv(&header, sizeof header, peer);
  int64_t bytes = static_cast<int64_t>(t.numel() * sizeof(float));
  if (header.tag != tag || header.bytes != bytes)
    c.fail("expected tag " + std::to_string(tag) + " (" +
           std::to_string(bytes) + " bytes) from rank " +
           std::to_string(peer) + " but it sent tag " +
           std::to_string(header.tag) + " (" + std::to_string(header.bytes) +
           " bytes): the ranks run different programs; compile the module "
           "once and run that on every rank");
  comm.recv(dst, static_cast<size_t>(bytes), peer);
}

void allReduceSum(const SplitOp &c) {
  c.arity(1, 1);
  const TensorInfo &in = c.in(0), &out = c.out(0);
  if (in.numel() != out.numel())
    c.fail("sums " + in.shapeString() + " into " + out.shapeString());
  float *dst = c.tensor(out.id);
  if (in.id != out.id) {
    const float *src = c.tensor(in.id);
    std::copy(src, src + in.numel(), dst);
  }
  c.ranks().allReduceSum(dst, out.numel());
}

} // namespace

void runTimeSplitOp(const Module &module, const Op &op, size_t index,
                    const TensorLookup &tensor, Communicator *comm) {
  SplitOp c{module, op, index, tensor, comm};
  const std::string &k = op.kind;
  if (k == "time_range")
    return timeRange(c);
  if (k == "gather_time")
    return gatherTime(c);
  if (k == "send")
    return send(c);
  if (k == "recv")
    return recv(c);
  if (k == "all_reduce_sum")
    return allReduceSum(c);
  c.fail("is not an op of a time split");
}

} // namespace snnrt
