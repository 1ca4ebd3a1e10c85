//===- TimeSplitOps.cpp - the ops of a module split in time, on a GPU -----===//
//
// time_range, gather_time, send, recv and all_reduce_sum
// (docs/artifact-format.md, "Split in time") on device
// buffers, in the stream order of the program: the same semantics as the
// CPU runtime's runtime/lib/TimeSplitOps.cpp.
//
// Transfers go through the device's TimeSplitRank communicator: NCCL (one
// rank per GPU) or the threads backend (ranks on streams of one GPU) move
// device buffers on the stream; a host backend (MPI, TCP) gets the tensor
// through host memory. Each send first hands its tag and size to the peer
// through comm.host(), which checks them as the CPU runtime does.
//
//===----------------------------------------------------------------------===//

#include "CudaOps.h"

#include "snnrt/Communicator.h"

#include <vector>

using namespace snnrt::cuda;

namespace {

struct SplitCall {
  CudaDevice &device;
  OpCall &call;
  const snnrt::cuda::TimeSplitRank &split;

  snnrt::Communicator &comm() const { return *split.comm; }
  CUstream stream() const { return device.stream(); }
  /// Elements of `t` after its leading (time) dimension.
  size_t rowSize(const DeviceTensor &t) const {
    if (t.shape.empty() || t.shape[0] <= 0)
      opError(call, "'" + t.name + "' has no leading time dimension");
    return static_cast<size_t>(t.numel() / t.shape[0]);
  }
  /// The neighbouring rank `peer` names, or -1 where there is none.
  int peerRank() const {
    std::string peer = call.op.value("peer", std::string());
    if (peer == "prev")
      return split.rank > 0 ? split.rank - 1 : -1;
    if (peer == "next")
      return split.rank + 1 < split.parts ? split.rank + 1 : -1;
    opError(call, "'peer' must be \"prev\" or \"next\", got '" + peer + "'");
  }
  int64_t tag() const {
    int64_t t = call.op.value("tag", int64_t(-1));
    if (t < 0)
      opError(call, "needs a 'tag' >= 0");
    return t;
  }
  size_t bytes(const DeviceTensor &t) const {
    return static_cast<size_t>(t.numel()) * sizeof(float);
  }
  /// The sum over the ranks of `t`, in place.
  void allReduce(const DeviceTensor &t) const {
    if (comm().deviceBuffers()) {
      comm().allReduceSum(t.f32(), static_cast<size_t>(t.numel()), stream());
      return;
    }
    std::vector<float> host(static_cast<size_t>(t.numel()));
    device.copyToHost(host.data(), t.ptr, bytes(t), call.where);
    comm().allReduceSum(host.data(), host.size());
    device.copyToDevice(t.ptr, host.data(), bytes(t), call.where);
  }
};

/// Sent ahead of each tensor through comm.host(): the receiver checks that
/// it expects this one.
struct TransferHeader {
  int64_t tag, bytes;
};

void timeRange(const SplitCall &c) {
  expectArity(c.call, 1, 1, 1, 1);
  const DeviceTensor &whole = c.call.in[0], &local = c.call.out[0];
  size_t row = c.rowSize(whole);
  if (whole.shape[0] != c.split.steps)
    opError(c.call, "reads " + whole.name + " of " +
                        std::to_string(whole.shape[0]) +
                        " steps but the split has " +
                        std::to_string(c.split.steps));
  if (c.rowSize(local) != row || local.shape[0] != c.split.length)
    opError(c.call, "writes " + local.name + ", not this rank's " +
                        std::to_string(c.split.length) + " steps of " +
                        whole.name);
  c.device.copyOnDevice(local.ptr, whole.ptr + c.split.begin * row * 4,
                        c.bytes(local), c.call.where);
}

void gatherTime(const SplitCall &c) {
  expectArity(c.call, 1, 1, 1, 1);
  const DeviceTensor &local = c.call.in[0], &whole = c.call.out[0];
  size_t row = c.rowSize(whole);
  if (c.rowSize(local) != row || local.shape[0] != c.split.length ||
      whole.shape[0] != c.split.steps)
    opError(c.call, "gathers " + local.name + " into " + whole.name +
                        ", which is not this rank's range of the split");
  // The other ranks add zeros to this rank's steps: the sum is exact.
  c.device.zero(whole.ptr, c.bytes(whole), c.call.where);
  c.device.copyOnDevice(whole.ptr + c.split.begin * row * 4, local.ptr,
                        c.bytes(local), c.call.where);
  c.allReduce(whole);
}

void send(const SplitCall &c) {
  expectArity(c.call, 1, 1, 0, 0);
  int peer = c.peerRank();
  int64_t tag = c.tag();
  if (peer < 0)
    return;
  const DeviceTensor &t = c.call.in[0];
  TransferHeader header{tag, static_cast<int64_t>(c.bytes(t))};
  c.comm().host().send(&header, sizeof header, peer);
  if (c.comm().deviceBuffers()) {
    c.comm().groupStart();
    c.comm().send(reinterpret_cast<const void *>(t.ptr), c.bytes(t), peer,
                  c.stream());
    c.comm().groupEnd();
    return;
  }
  std::vector<char> host(c.bytes(t));
  c.device.copyToHost(host.data(), t.ptr, host.size(), c.call.where);
  c.comm().send(host.data(), host.size(), peer);
}

void recv(const SplitCall &c) {
  expectArity(c.call, 1, 1, 1, 1);
  const DeviceTensor &fallback = c.call.in[0], &t = c.call.out[0];
  if (fallback.numel() != t.numel())
    opError(c.call, "its fallback " + fallback.name + " is not like its "
                    "result " + t.name);
  int peer = c.peerRank();
  int64_t tag = c.tag();
  if (peer < 0) {
    c.device.copyOnDevice(t.ptr, fallback.ptr, c.bytes(t), c.call.where);
    return;
  }
  TransferHeader header{};
  c.comm().host().recv(&header, sizeof header, peer);
  int64_t bytes = static_cast<int64_t>(c.bytes(t));
  if (header.tag != tag || header.bytes != bytes)
    opError(c.call, "expected tag " + std::to_string(tag) + " (" +
                        std::to_string(bytes) + " bytes) from rank " +
                        std::to_string(peer) + " but it sent tag " +
                        std::to_string(header.tag) + " (" +
                        std::to_string(header.bytes) +
                        " bytes): the ranks run different programs; compile "
                        "the module once and run that on every rank");
  if (c.comm().deviceBuffers()) {
    c.comm().groupStart();
    c.comm().recv(reinterpret_cast<void *>(t.ptr), c.bytes(t), peer,
                  c.stream());
    c.comm().groupEnd();
    return;
  }
  std::vector<char> host(c.bytes(t));
  c.comm().recv(host.data(), host.size(), peer);
  c.device.copyToDevice(t.ptr, host.data(), host.size(), c.call.where);
}

void allReduceSum(const SplitCall &c) {
  expectArity(c.call, 1, 1, 1, 1);
  const DeviceTensor &in = c.call.in[0], &out = c.call.out[0];
  if (in.numel() != out.numel())
    opError(c.call, "sums " + in.name + " into " + out.name +
                        " of another size");
  c.device.copyOnDevice(out.ptr, in.ptr, c.bytes(out), c.call.where);
  c.allReduce(out);
}

} // namespace

bool snnrt::cuda::runTimeSplitOp(CudaDevice &device, OpCall &call) {
  std::string kind = call.op.value("op", std::string());
  if (kind != "time_range" && kind != "gather_time" && kind != "send" &&
      kind != "recv" && kind != "all_reduce_sum")
    return false;
  const TimeSplitRank *split = device.timeSplit();
  if (!split || !split->comm || split->comm->size() != split->parts)
    opError(call, "an op of a module split in time, which needs the job's "
                  "ranks (snn-run --nproc P, or mpirun -np P)");
  for (const DeviceTensor &t : call.in)
    if (t.bf16)
      opError(call, "'" + t.name + "' is bf16; the split ops move f32");
  SplitCall c{device, call, *split};
  if (kind == "time_range")
    timeRange(c);
  else if (kind == "gather_time")
    gatherTime(c);
  else if (kind == "send")
    send(c);
  else if (kind == "recv")
    recv(c);
  else
    allReduceSum(c);
  return true;
}
