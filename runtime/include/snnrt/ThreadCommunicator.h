//===- ThreadCommunicator.h - ranks as threads of one process ---*- C++ -*-===//
//
// The "threads" backend of Communicator: P ranks in one process, one thread
// each. It runs a job of more ranks than the machine has GPUs ("virtual
// devices": the ranks of a time split on streams of one GPU, which NCCL
// refuses), and the same schedule on the CPU, where the tests check it.
//
// A send is buffered: it packs a copy of the data (a parcel) into the
// peer's mailbox and returns. A recv waits for the parcel; a collective
// waits until every rank has packed its part, then each rank combines the
// parts in rank order (the same bits on every rank). How data is copied is
// the transport's: memcpy on host buffers, or on a GPU stream-ordered device
// copies whose events order each copy after the data's producer on the
// other rank's stream (runtime/cuda/StreamTransport.cpp), so that no thread
// waits for the device.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_THREADCOMMUNICATOR_H
#define SNNRT_THREADCOMMUNICATOR_H

#include "snnrt/Communicator.h"

#include <memory>
#include <vector>

namespace snnrt {

/// A copy of a buffer in flight between ranks; it lives until every reader
/// has enqueued its copy.
struct Parcel {
  virtual ~Parcel();
  size_t bytes = 0;
};

/// How the ranks' buffers are copied.
class ThreadTransport {
public:
  virtual ~ThreadTransport();
  /// Whether the buffers are device memory.
  virtual bool deviceBuffers() const = 0;
  /// A copy of [src, src + bytes), taken after the work enqueued on
  /// `stream` so far.
  virtual std::shared_ptr<Parcel> pack(const void *src, size_t bytes,
                                       void *stream) = 0;
  /// dst = the parcel's bytes, on `stream`.
  virtual void unpack(Parcel &parcel, void *dst, void *stream) = 0;
  /// dst[i] += the parcel's floats, on `stream`.
  virtual void accumulate(Parcel &parcel, float *dst, size_t count,
                          void *stream) = 0;
};

/// memcpy and a loop, on host buffers.
std::unique_ptr<ThreadTransport> createHostTransport();

/// The `size` ranks of one group: element r is rank r. Each rank is used by
/// one thread. A wait for a peer longer than `timeoutSeconds` (<= 0: no
/// limit) ends the process with an error, as abort() on any rank does.
std::vector<std::unique_ptr<Communicator>>
createThreadGroup(int size, double timeoutSeconds);

/// Gives rank `comm` of a thread group the transport of its buffers (a GPU's,
/// once the device exists); host() keeps host buffers. False when `comm` is
/// not a thread rank.
bool attachThreadTransport(Communicator &comm,
                           std::unique_ptr<ThreadTransport> transport);

} // namespace snnrt

#endif // SNNRT_THREADCOMMUNICATOR_H
