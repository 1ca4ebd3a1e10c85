//===- Communicator.cpp - job environment, the local backend, checks ------===//

#include "snnrt/Communicator.h"
#include "snnrt/Error.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace snnrt {

Communicator::~Communicator() = default;

void Communicator::allReduceAverage(float *data, size_t count, void *stream) {
  if (deviceBuffers())
    throw Error(backendName() + ": allReduceAverage on device buffers needs "
                                "the backend's own implementation");
  allReduceSum(data, count, stream);
  const float scale = 1.0f / static_cast<float>(size());
  for (size_t i = 0; i < count; ++i)
    data[i] *= scale;
}

namespace {

const char *env(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int envInt(const char *name, int fallback) {
  const char *v = env(name);
  if (!v)
    return fallback;
  char *end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end || n < 0)
    throw Error(std::string("the environment variable ") + name + "='" + v +
                "' is not a non-negative integer");
  return static_cast<int>(n);
}

class LocalCommunicator : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backendName() const override { return "local"; }
  void allReduceSum(float *, size_t, void *) override {}
  void broadcast(void *, size_t, int root, void *) override { checkPeer(root); }
  void send(const void *, size_t, int peer, void *) override {
    checkPeer(peer);
    throw Error("send: a job of one rank has no peer to send to");
  }
  void recv(void *, size_t, int peer, void *) override {
    checkPeer(peer);
    throw Error("recv: a job of one rank has no peer to receive from");
  }
  void barrier() override {}
  [[noreturn]] void abort(const std::string &why) override {
    std::fprintf(stderr, "snn-run: error: %s\n", why.c_str());
    std::exit(1);
  }

private:
  static void checkPeer(int peer) {
    if (peer != 0)
      throw Error("rank " + std::to_string(peer) +
                  " does not exist in a job of one rank");
  }
};

} // namespace

JobEnvironment detectJobEnvironment() {
  JobEnvironment job;
  if (env("OMPI_COMM_WORLD_SIZE")) {
    job.launcher = "mpi";
    job.rank = envInt("OMPI_COMM_WORLD_RANK", 0);
    job.size = envInt("OMPI_COMM_WORLD_SIZE", 1);
    job.localRank = envInt("OMPI_COMM_WORLD_LOCAL_RANK", 0);
  } else if (env("PMI_SIZE") || env("PMIX_RANK")) {
    job.launcher = "mpi";
    job.rank = envInt("PMI_RANK", envInt("PMIX_RANK", 0));
    job.size = envInt("PMI_SIZE", 1);
    job.localRank = envInt("MPI_LOCALRANKID", 0);
  } else if (env("WORLD_SIZE")) {
    job.launcher = "torchrun";
    job.rank = envInt("RANK", 0);
    job.size = envInt("WORLD_SIZE", 1);
    job.localRank = envInt("LOCAL_RANK", job.rank);
    job.masterAddr = env("MASTER_ADDR") ? env("MASTER_ADDR") : "127.0.0.1";
    job.masterPort = envInt("MASTER_PORT", 29500);
  }
  if (job.size < 1 || job.rank >= job.size)
    throw Error("the job environment says rank " + std::to_string(job.rank) +
                " of " + std::to_string(job.size) +
                " ranks; check the launcher's variables");
  return job;
}

std::unique_ptr<Communicator> createLocalCommunicator() {
  return std::make_unique<LocalCommunicator>();
}

void checkSameOnAllRanks(Communicator &comm, const std::string &what,
                         const std::string &value) {
  if (comm.size() == 1)
    return;
  Communicator &host = comm.host();
  // Rank 0's value goes to everyone (fixed size: the length, then the text);
  // each rank compares, and a sum of mismatch flags tells every rank.
  uint64_t length = value.size();
  host.broadcast(&length, sizeof length, 0);
  std::string reference(length, '\0');
  if (comm.rank() == 0)
    reference = value;
  host.broadcast(reference.data(), length, 0);
  std::vector<float> differs(static_cast<size_t>(comm.size()), 0.0f);
  differs[static_cast<size_t>(comm.rank())] = reference == value ? 0.0f : 1.0f;
  host.allReduceSum(differs.data(), differs.size());
  std::string ranks;
  for (size_t r = 0; r < differs.size(); ++r)
    if (differs[r] != 0.0f)
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  if (ranks.empty())
    return;
  std::string mine = reference == value ? ""
                     : ", rank " + std::to_string(comm.rank()) + ": " + value;
  throw Error("the ranks of this job differ in " + what + ": rank(s) " +
              ranks + " differ from rank 0 (rank 0: " + reference + mine +
              "); start every rank with the same module and options");
}

} // namespace snnrt
