//===- VectorAccess.cuh - W consecutive floats as one access --------------===//
//
// W = 4 is one 16-byte load or store (the address must be 16-byte aligned);
// other widths are W scalar accesses. Element order is kept.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_KERNELS_VECTORACCESS_CUH
#define SNNRT_CUDA_KERNELS_VECTORACCESS_CUH

template <int W> struct Vec {
  float v[W];
};

template <int W>
__device__ __forceinline__ Vec<W> load(const float *p, long long at) {
  Vec<W> r;
  if constexpr (W == 4) {
    float4 q = *reinterpret_cast<const float4 *>(p + at);
    r.v[0] = q.x, r.v[1] = q.y, r.v[2] = q.z, r.v[3] = q.w;
  } else {
#pragma unroll
    for (int l = 0; l < W; ++l)
      r.v[l] = p[at + l];
  }
  return r;
}

template <int W>
__device__ __forceinline__ void store(float *p, long long at, const Vec<W> &r) {
  if constexpr (W == 4) {
    *reinterpret_cast<float4 *>(p + at) =
        make_float4(r.v[0], r.v[1], r.v[2], r.v[3]);
  } else {
#pragma unroll
    for (int l = 0; l < W; ++l)
      p[at + l] = r.v[l];
  }
}

#endif // SNNRT_CUDA_KERNELS_VECTORACCESS_CUH
