//===- CreateCommunicator.cpp - the backend for this process's job --------===//

#include "snnrt/Communicator.h"
#include "snnrt/Error.h"

#ifdef SNNRT_HAVE_MPI
#include "MpiCommunicator.h"
#endif

namespace snnrt {

bool haveMpiBackend() {
#ifdef SNNRT_HAVE_MPI
  return true;
#else
  return false;
#endif
}

std::unique_ptr<Communicator> createCommunicator(const CommOptions &options) {
  JobEnvironment job = detectJobEnvironment();
  std::string backend = options.backend;
  if (backend.empty())
    backend = job.launcher == "mpi"        ? "mpi"
              : job.launcher == "torchrun" ? (options.device == "cuda" ? "nccl"
                                                                       : "torchrun-cpu")
                                           : "local";
  if (backend == "local") {
    if (job.size > 1)
      throw Error("the local backend runs one rank, but the environment "
                  "(" + job.launcher + ") says " + std::to_string(job.size) +
                  " ranks");
    return createLocalCommunicator();
  }
  if (backend == "mpi") {
#ifdef SNNRT_HAVE_MPI
    return createMpiCommunicator(options);
#else
    throw Error("this runtime was built without MPI, but it runs in an MPI "
                "job; rebuild it with MPI (apt-get install libopenmpi-dev) or "
                "launch with --nproc / torchrun on GPUs");
#endif
  }
  if (backend == "torchrun-cpu")
    throw Error("torchrun-style variables (WORLD_SIZE=" +
                std::to_string(job.size) +
                ") start NCCL on GPUs; CPU processes need mpirun (mpirun -np " +
                std::to_string(job.size) + " snn-run ...)");
  if (backend == "nccl")
    throw Error("the NCCL backend is not available in this build; use "
                "mpirun (the MPI backend stages GPU tensors through the host)");
  throw Error("unknown communicator backend '" + backend +
              "' (expected mpi, nccl or local)");
}

} // namespace snnrt
