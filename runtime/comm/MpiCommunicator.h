//===- MpiCommunicator.h - the MPI backend of Communicator ------*- C++ -*-===//

#ifndef SNNRT_COMM_MPICOMMUNICATOR_H
#define SNNRT_COMM_MPICOMMUNICATOR_H

#include "snnrt/Communicator.h"

namespace snnrt {

/// Initializes MPI (once per process) and returns MPI_COMM_WORLD as a
/// Communicator on host buffers. MPI errors throw snnrt::Error; a collective
/// past the timeout, or abort(), calls MPI_Abort, which ends every rank.
std::unique_ptr<Communicator> createMpiCommunicator(const CommOptions &options);

} // namespace snnrt

#endif // SNNRT_COMM_MPICOMMUNICATOR_H
