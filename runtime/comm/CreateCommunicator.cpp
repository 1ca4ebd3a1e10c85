//===- CreateCommunicator.cpp - the backend for this process's job --------===//

#include "TcpCommunicator.h"

#include "snnrt/Communicator.h"
#include "snnrt/Error.h"

#ifdef SNNRT_HAVE_MPI
#include "MpiCommunicator.h"
#endif

#include <cstdio>

namespace snnrt {

namespace {
NcclFactory gNccl = nullptr;
} // namespace

void registerNcclBackend(NcclFactory factory) { gNccl = factory; }

bool haveMpiBackend() {
#ifdef SNNRT_HAVE_MPI
  return true;
#else
  return false;
#endif
}

namespace {

std::unique_ptr<Communicator> createMpi(const JobEnvironment &job,
                                        const CommOptions &options) {
#ifdef SNNRT_HAVE_MPI
  (void)job;
  return createMpiCommunicator(options);
#else
  (void)options;
  throw Error("this runtime was built without MPI, but it runs in an MPI "
              "job of " + std::to_string(job.size) +
              " ranks; rebuild it with MPI (apt-get install libopenmpi-dev) "
              "or start the ranks with snn-run --nproc / torchrun-style "
              "variables");
#endif
}

} // namespace

std::unique_ptr<Communicator> createCommunicator(const CommOptions &options) {
  JobEnvironment job = detectJobEnvironment();
  std::string backend = options.backend;
  if (backend == "local" || (backend.empty() && job.launcher == "none")) {
    if (job.size > 1)
      throw Error("the local backend runs one rank, but the environment "
                  "(" + job.launcher + ") says " + std::to_string(job.size) +
                  " ranks");
    return createLocalCommunicator();
  }
  // The host ranks first: MPI under mpirun, else TCP (torchrun variables).
  auto hostRanks = [&]() -> std::unique_ptr<Communicator> {
    if (job.launcher == "mpi")
      return createMpi(job, options);
    if (job.launcher == "torchrun")
      return createTcpCommunicator(job, options);
    throw Error("the " + backend + " backend needs a job of ranks: start "
                "with mpirun, snn-run --nproc or torchrun-style variables");
  };
  if (backend == "mpi") {
    if (job.launcher != "mpi")
      throw Error("the mpi backend needs a job started by mpirun");
    return createMpi(job, options);
  }
  if (backend == "tcp") {
    if (job.launcher != "torchrun")
      throw Error("the tcp backend needs the torchrun-style variables RANK, "
                  "WORLD_SIZE, MASTER_ADDR, MASTER_PORT");
    return createTcpCommunicator(job, options);
  }
  if (backend == "nccl") {
    if (!gNccl)
      throw Error("the NCCL backend is not in this build (it comes with the "
                  "CUDA backend)");
    std::unique_ptr<Communicator> host = hostRanks();
    return gNccl(job, options, host);
  }
  if (backend.empty() && options.device == "cuda" && gNccl && job.size > 1) {
    // NCCL when it loads; else the host ranks, staging GPU tensors.
    std::unique_ptr<Communicator> host = hostRanks();
    try {
      return gNccl(job, options, host);
    } catch (const Error &e) {
      if (!host)
        throw;
      if (host->rank() == 0)
        std::fprintf(stderr, "snn-run: NCCL unavailable (%s): GPU tensors go "
                             "through the host (%s)\n",
                     e.what(), host->backendName().c_str());
      return host;
    }
  }
  if (!backend.empty())
    throw Error("unknown communicator backend '" + backend +
                "' (expected mpi, tcp, nccl or local)");
  return hostRanks();
}

} // namespace snnrt
