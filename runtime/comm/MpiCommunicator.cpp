//===- MpiCommunicator.cpp - the MPI backend of Communicator --------------===//

#include "MpiCommunicator.h"
#include "Watchdog.h"

#include "snnrt/Error.h"

// The C API only (no MPI C++ bindings to link).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>

namespace snnrt {

namespace {

/// MPI counts are ints: larger transfers go in pieces of 1 GiB.
constexpr size_t kChunkBytes = size_t(1) << 30;

[[noreturn]] void abortJob(int rank, const std::string &why) {
  std::fprintf(stderr, "snn-run: error: rank %d: %s\n", rank, why.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1); // MPI_Abort does not return; in case it does
}

class MpiCommunicator : public Communicator {
public:
  /// `comm`: MPI_COMM_WORLD (which this object finalizes) or a group split
  /// from it (which it frees).
  MpiCommunicator(const CommOptions &options, MPI_Comm comm)
      : options(options), comm(comm),
        dog(options.timeoutSeconds,
            [this](const std::string &why) { abortJob(worldRank, why); }) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
    MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized)
      return;
    if (comm == MPI_COMM_WORLD)
      MPI_Finalize();
    else
      MPI_Comm_free(&comm);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string backendName() const override { return "mpi"; }

  void allReduceSum(float *data, size_t count, void *) override {
    Watchdog::Scope scope(dog, "all-reduce");
    constexpr size_t chunk = kChunkBytes / sizeof(float);
    for (size_t first = 0; first < count; first += chunk)
      check(MPI_Allreduce(MPI_IN_PLACE, data + first,
                          static_cast<int>(std::min(chunk, count - first)),
                          MPI_FLOAT, MPI_SUM, comm),
            "all-reduce");
  }
  void broadcast(void *data, size_t bytes, int root, void *) override {
    checkPeer(root, "broadcast");
    Watchdog::Scope scope(dog, "broadcast");
    auto *p = static_cast<char *>(data);
    for (size_t first = 0; first < bytes; first += kChunkBytes)
      check(MPI_Bcast(p + first,
                      static_cast<int>(std::min(kChunkBytes, bytes - first)),
                      MPI_BYTE, root, comm),
            "broadcast");
  }
  void send(const void *data, size_t bytes, int peer, void *) override {
    checkPeer(peer, "send");
    Watchdog::Scope scope(dog, "send");
    auto *p = static_cast<const char *>(data);
    for (size_t first = 0; first < bytes; first += kChunkBytes)
      check(MPI_Send(p + first,
                     static_cast<int>(std::min(kChunkBytes, bytes - first)),
                     MPI_BYTE, peer, kTag, comm),
            "send");
  }
  void recv(void *data, size_t bytes, int peer, void *) override {
    checkPeer(peer, "recv");
    Watchdog::Scope scope(dog, "recv");
    auto *p = static_cast<char *>(data);
    for (size_t first = 0; first < bytes; first += kChunkBytes) {
      int expected = static_cast<int>(std::min(kChunkBytes, bytes - first));
      MPI_Status status;
      check(MPI_Recv(p + first, expected, MPI_BYTE, peer, kTag, comm,
                     &status),
            "recv");
      int got = 0;
      MPI_Get_count(&status, MPI_BYTE, &got);
      if (got != expected)
        throw Error("recv from rank " + std::to_string(peer) + ": expected " +
                    std::to_string(expected) + " bytes, got " +
                    std::to_string(got) + "; the ranks disagree on the size");
    }
  }
  void barrier() override {
    Watchdog::Scope scope(dog, "barrier");
    check(MPI_Barrier(comm), "barrier");
  }
  [[noreturn]] void abort(const std::string &why) override {
    abortJob(worldRank, why); // MPI_Abort on MPI_COMM_WORLD: the whole job
  }
  std::unique_ptr<Communicator> split(int color, int key) override {
    if (color < 0 || key < 0)
      throw Error("split: color and key must be >= 0");
    MPI_Comm group = MPI_COMM_NULL;
    {
      Watchdog::Scope scope(dog, "a split of the ranks");
      check(MPI_Comm_split(comm, color, key, &group), "split");
    }
    MPI_Comm_set_errhandler(group, MPI_ERRORS_RETURN);
    return std::make_unique<MpiCommunicator>(options, group);
  }

private:
  static constexpr int kTag = 0x5ee;
  void check(int code, const char *what) const {
    if (code == MPI_SUCCESS)
      return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw Error(std::string("MPI ") + what + " failed on rank " +
                std::to_string(worldRank) + ": " + std::string(text, length));
  }
  void checkPeer(int peer, const char *what) const {
    if (peer < 0 || peer >= size_)
      throw Error(std::string(what) + ": rank " + std::to_string(peer) +
                  " does not exist in a job of " + std::to_string(size_) +
                  " ranks");
  }
  CommOptions options;
  MPI_Comm comm;
  int rank_ = 0, size_ = 1, worldRank = 0;
  Watchdog dog;
};

} // namespace

std::unique_ptr<Communicator> createMpiCommunicator(const CommOptions &options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // The watchdog thread may call MPI_Abort while the main thread is inside
    // a collective.
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) !=
        MPI_SUCCESS)
      throw Error("MPI_Init failed: is this process started by mpirun?");
  }
  // Errors come back as codes (reported with their rank), not as a silent
  // abort inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::make_unique<MpiCommunicator>(options, MPI_COMM_WORLD);
}

} // namespace snnrt
