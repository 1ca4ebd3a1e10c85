//===- CudnnConv.h - convolutions through cuDNN (dlopen) --------*- C++ -*-===//
//
// cuDNN's implicit-GEMM convolutions avoid the column buffers of im2col.
// libcudnn.so.9 is opened at run time; without it (or with
// SNNRT_CUDA_CUDNN=0, see DeviceOptions) convolutions use im2col + cuBLAS.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_CUDNNCONV_H
#define SNNRT_CUDA_CUDNNCONV_H

#include "kernels/KernelArgs.h"

#include <cudnn.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace snnrt::cuda {

class CudaDevice;
struct CudnnApi;

/// A convolution over all rows: x[M, C, H, W] * w[O, C/g, KH, KW], or with
/// `channelsLast` x[M, H, W, C] * w[O, KH, KW, C] (cuDNN's NHWC and KRSC).
struct ConvProblem {
  SnnConvShape shape; // images = M
  long long out = 0, groups = 1;
  bool channelsLast = false;
  auto key() const {
    const SnnConvShape &s = shape;
    return std::make_tuple(s.images, s.channels, s.height, s.width, out,
                           groups, s.kernelH, s.kernelW, s.strideH, s.strideW,
                           s.padH, s.padW, s.dilH, s.dilW, channelsLast);
  }
};

class CudnnConv {
public:
  /// cuDNN on `device`, or null when libcudnn.so.9 is missing or unusable.
  static std::unique_ptr<CudnnConv> create(CudaDevice &device, bool tf32);
  ~CudnnConv();

  /// y = conv(x, w) (beta = 0).
  void forward(const ConvProblem &p, const float *x, const float *w, float *y,
               const std::string &where);
  /// gx (+)= conv_transpose(gy, w).
  void backwardData(const ConvProblem &p, const float *gy, const float *w,
                    float *gx, bool accumulate, const std::string &where);
  /// gw (+)= correlation of x and gy over all rows.
  void backwardFilter(const ConvProblem &p, const float *x, const float *gy,
                      float *gw, bool accumulate, const std::string &where);

private:
  struct Plan;
  CudnnConv(CudaDevice &device, const CudnnApi &api, bool tf32);
  Plan &plan(const ConvProblem &p, const std::string &where);
  void *workspace(std::size_t bytes, const std::string &where);

  CudaDevice &device;
  const CudnnApi &api;
  bool tf32;
  cudnnHandle_t handle = nullptr;
  std::map<decltype(std::declval<ConvProblem>().key()), std::unique_ptr<Plan>>
      plans;
};

} // namespace snnrt::cuda

#endif // SNNRT_CUDA_CUDNNCONV_H
