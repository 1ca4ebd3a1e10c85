//===- KernelArgs.h - arguments of the built-in kernels ----------*- C++ -*-===//
//
// Shared by the host code and the device code: these structs are passed by
// value through cuLaunchKernel, so both sides must see the same layout
// (plain scalars and pointers only).
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_KERNELS_KERNELARGS_H
#define SNNRT_CUDA_KERNELS_KERNELARGS_H

/// A 2-d convolution (or pooling window) over images [M, C, H, W].
struct SnnConvShape {
  long long images; // rows M (of this chunk, for convolutions)
  long long channels, height, width;
  long long outHeight, outWidth;
  long long kernelH, kernelW, strideH, strideW, padH, padW, dilH, dilW;
  long long groupChannels; // input channels per group (convolutions)
};

#endif // SNNRT_CUDA_KERNELS_KERNELARGS_H
