//===- GraphCondition.cu - conditions of CUDA graph nodes -----------------===//
//
// Sets the condition of a conditional graph node on the device, so that a
// captured program skips work without a host synchronisation
// (CudaDevice::runUnlessEventPath). cudaGraphSetConditional is resolved by
// the driver when the module loads (driver >= 12.3); a driver without it
// fails this module only, and the dense work then always runs.
//
//===----------------------------------------------------------------------===//

#include <cuda_runtime.h>

/// The condition is 1 (run the dense path) unless the decision of an
/// event-driven layer (docs/artifact-format.md: word 1 is 1 for the
/// event-driven path) says the event-driven kernels ran.
extern "C" __global__ void
snnrt_set_dense_condition(cudaGraphConditionalHandle handle,
                          const int *decision) {
  if (threadIdx.x == 0)
    cudaGraphSetConditional(handle, decision[1] == 0 ? 1u : 0u);
}
