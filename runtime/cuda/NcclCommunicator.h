//===- NcclCommunicator.h - the NCCL backend of Communicator ----*- C++ -*-===//

#ifndef SNNRT_CUDA_NCCLCOMMUNICATOR_H
#define SNNRT_CUDA_NCCLCOMMUNICATOR_H

#include "snnrt/Communicator.h"

namespace snnrt {

/// NCCL over the ranks of `host` (MPI or TCP), which carries the unique id
/// and the host-side collectives. Buffers are device memory of GPU
/// options.cudaDevice; collectives are enqueued on the given stream. A
/// watchdog thread polls NCCL's asynchronous errors and the events recorded
/// after each collective: an error, or a collective unfinished after
/// options.timeoutSeconds, aborts the NCCL communicator and ends the job.
/// Registered with registerNcclBackend by programs that have the CUDA
/// backend (snn-run).
std::unique_ptr<Communicator>
createNcclCommunicator(const JobEnvironment &job, const CommOptions &options,
                       std::unique_ptr<Communicator> &host);

} // namespace snnrt

#endif // SNNRT_CUDA_NCCLCOMMUNICATOR_H
