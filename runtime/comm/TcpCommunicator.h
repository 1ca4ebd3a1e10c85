//===- TcpCommunicator.h - ranks connected by TCP sockets -------*- C++ -*-===//
//
// The host backend of jobs started without MPI (torchrun-style variables,
// `snn-run --nproc` without mpirun): rank 0 listens on MASTER_ADDR:
// MASTER_PORT, every rank connects to it and then to every other rank (a
// full mesh). All-reduce sums on rank 0 in rank order, so every rank gets
// the same bits; it also carries NCCL's unique id and the host-side checks
// of NCCL jobs. A rank that exits closes its sockets: its peers see the
// connection drop and end the job with an error.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_COMM_TCPCOMMUNICATOR_H
#define SNNRT_COMM_TCPCOMMUNICATOR_H

#include "snnrt/Communicator.h"

namespace snnrt {

/// Connects rank `job.rank` of `job.size` through `job.masterAddr`:
/// `job.masterPort`; waits up to options.timeoutSeconds for the others.
std::unique_ptr<Communicator> createTcpCommunicator(const JobEnvironment &job,
                                                    const CommOptions &options);

} // namespace snnrt

#endif // SNNRT_COMM_TCPCOMMUNICATOR_H
