//===- StreamTransport.h - the threads backend on one GPU -------*- C++ -*-===//

#ifndef SNNRT_CUDA_STREAMTRANSPORT_H
#define SNNRT_CUDA_STREAMTRANSPORT_H

#include "CudaDevice.h"

#include "snnrt/ThreadCommunicator.h"

namespace snnrt::cuda {

/// Device buffers of ranks that are threads of one process, each with its
/// own CudaDevice (stream) on the same GPU: a parcel is a device copy made
/// on the sender's stream, with an event that the readers' streams wait for
/// before their device-to-device copy (or sum); a parcel's memory is reused
/// once its readers' copies have finished. No thread waits for the GPU.
std::unique_ptr<ThreadTransport> createStreamTransport(CudaDevice &device);

} // namespace snnrt::cuda

#endif // SNNRT_CUDA_STREAMTRANSPORT_H
