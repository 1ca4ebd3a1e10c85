//===- Communicator.h - collectives between the ranks of a job --*- C++ -*-===//
//
// One Communicator per process of a multi-process job (data parallel
// training, time split). Backends: "local" (one rank, no peers), "mpi"
// (host buffers; Open MPI, CPU processes and CPU-staged GPU tensors) and
// "nccl" (device buffers on a CUDA stream; libnccl.so.2 is dlopen'ed).
//
// Failure is never a hang: a collective that does not finish within
// CommOptions::timeoutSeconds, a peer that exits, or abort() on any rank ends
// every rank with an error message and a non-zero exit status.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_COMMUNICATOR_H
#define SNNRT_COMMUNICATOR_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace snnrt {

struct CommOptions {
  /// "" picks from the environment: "mpi" under mpirun (OMPI_/PMI_
  /// variables), "tcp" for torchrun-style variables (RANK, WORLD_SIZE,
  /// MASTER_ADDR, MASTER_PORT), else "local"; with device "cuda" and a
  /// registered NCCL backend, "nccl" on top of the MPI or TCP ranks.
  /// "mpi", "tcp", "nccl" and "local" force a backend.
  std::string backend;
  /// Where the collectives' buffers live: "cpu" or "cuda" (NCCL needs cuda).
  std::string device = "cpu";
  /// The CUDA device ordinal of this rank (NCCL).
  int cudaDevice = 0;
  /// Seconds a collective may block before every rank is ended (<= 0: no
  /// limit).
  double timeoutSeconds = 300.0;
};

/// Where this process stands in its job, read from the environment: Open MPI
/// (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK), PMI (PMI_RANK/PMI_SIZE) or
/// torchrun (RANK, WORLD_SIZE, LOCAL_RANK); one rank of one otherwise.
struct JobEnvironment {
  std::string launcher = "none"; ///< "mpi", "torchrun" or "none"
  int rank = 0, size = 1, localRank = 0;
  std::string masterAddr;   ///< torchrun: MASTER_ADDR
  int masterPort = 0;       ///< torchrun: MASTER_PORT
};
JobEnvironment detectJobEnvironment();

class Communicator {
public:
  virtual ~Communicator();
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string backendName() const = 0; ///< "mpi", "nccl", "local"
  /// Collective and point-to-point on buffers that live where the backend
  /// expects them (host memory for MPI; device memory + the given CUDA
  /// stream for NCCL; stream may be null on the CPU).
  virtual void allReduceSum(float *data, size_t count, void *stream = nullptr) = 0;
  virtual void broadcast(void *data, size_t bytes, int root, void *stream = nullptr) = 0;
  virtual void send(const void *data, size_t bytes, int peer, void *stream = nullptr) = 0;
  virtual void recv(void *data, size_t bytes, int peer, void *stream = nullptr) = 0;
  virtual void barrier() = 0;
  /// Ends every rank with an error naming `why`; never returns, never hangs.
  [[noreturn]] virtual void abort(const std::string &why) = 0;
  /// Whether the buffers are device memory (NCCL) rather than host memory.
  virtual bool deviceBuffers() const { return false; }
  /// The same ranks on host buffers: itself for MPI, TCP and local; for
  /// NCCL the communicator that started it (MPI or TCP).
  virtual Communicator &host() { return *this; }
  /// allReduceSum divided by size() (NCCL: ncclAvg on the device).
  virtual void allReduceAverage(float *data, size_t count, void *stream = nullptr);
  /// Collectives between groupStart() and groupEnd() may be fused (NCCL
  /// groups); host backends run them one by one.
  virtual void groupStart() {}
  virtual void groupEnd() {}
  /// Device backends: the work enqueued on `stream` so far holds collectives
  /// that were not watched when enqueued (captured into a CUDA graph, whose
  /// replay is a single launch): watch it with the same timeout.
  virtual void watchStream(void * /*stream*/) {}
  /// The ranks that pass the same `color`, ordered by (`key`, rank), as a
  /// communicator of their own (MPI_Comm_split): rank() and size() count in
  /// the group, peers are group ranks. Every rank calls it, in the same
  /// order relative to the other collectives; colors and keys are in
  /// [0, 2^24). Host backends without their own (TCP, local) get a view
  /// over this communicator's send/recv whose sums run in group rank order
  /// (the same bits on every member); MPI splits its communicator, NCCL
  /// starts one over the host group, threads share a group of their own. A
  /// group's timeout or abort ends the whole job, as this one's does.
  /// The result must not outlive this communicator.
  virtual std::unique_ptr<Communicator> split(int color, int key);
};

/// A view of the ranks `members` (ranks of `parent`, in group rank order;
/// this process is one of them) over the parent's send/recv: the default
/// Communicator::split. Host buffers only.
std::unique_ptr<Communicator> createGroupView(Communicator &parent,
                                              std::vector<int> members);

/// Every rank's (color, key) of a split, through `comm`'s host ranks;
/// returns the members of this rank's group in group rank order (ranks of
/// `comm`), checking the range of color and key.
std::vector<int> splitMembers(Communicator &comm, int color, int key);

/// The NCCL backend lives with the CUDA backend; a program that has both
/// registers its factory (snn-run does). `host` is the communicator of the
/// same ranks on host buffers that carries NCCL's unique id; the factory
/// takes it over, or leaves it and throws when NCCL cannot start.
using NcclFactory = std::unique_ptr<Communicator> (*)(
    const JobEnvironment &job, const CommOptions &options,
    std::unique_ptr<Communicator> &host);
void registerNcclBackend(NcclFactory factory);

/// The communicator of this process: from the MPI environment, the torchrun
/// environment, or a single local rank. Errors (an MPI job but a runtime
/// built without MPI, a backend that cannot start) throw snnrt::Error.
std::unique_ptr<Communicator> createCommunicator(const CommOptions &options);

/// One rank alone: every collective is the identity.
std::unique_ptr<Communicator> createLocalCommunicator();

/// Whether this runtime was built with the MPI backend.
bool haveMpiBackend();

/// Checks that every rank holds the same `value` (a hash of the module and
/// the options that must agree); on a mismatch every rank throws an Error
/// that names `what` and the ranks that differ.
void checkSameOnAllRanks(Communicator &comm, const std::string &what,
                         const std::string &value);

} // namespace snnrt

#endif // SNNRT_COMMUNICATOR_H
