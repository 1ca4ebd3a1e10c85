//===- Common.cuh - utilities shared by the built-in kernels ------*- CUDA -*-===//

#ifndef SNNRT_CUDA_KERNELS_COMMON_CUH
#define SNNRT_CUDA_KERNELS_COMMON_CUH

/// for (i = global thread; i < n; i += all threads), with i of type I (int
/// where the host guarantees n < 2^30: 32-bit index arithmetic is faster).
#define SNNRT_GRID_LOOP_T(I, i, n)                                             \
  for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < (I)(n);             \
       i += (I)blockDim.x * gridDim.x)
#define SNNRT_GRID_LOOP(i, n) SNNRT_GRID_LOOP_T(long long, i, n)

/// Sum of `v` over the block (blockDim.x a multiple of 32, at most 1024);
/// the result is valid in every thread. `scratch` holds 32 floats.
__device__ __forceinline__ float blockSum(float v, float *scratch) {
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffffu, v, off);
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads(); // scratch may still be read by a previous call
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  int warps = blockDim.x / 32;
  v = lane < warps ? scratch[lane] : 0.0f;
  for (int off = 16; off > 0; off /= 2)
    v += __shfl_down_sync(0xffffffffu, v, off);
  return __shfl_sync(0xffffffffu, v, 0);
}

#endif // SNNRT_CUDA_KERNELS_COMMON_CUH
