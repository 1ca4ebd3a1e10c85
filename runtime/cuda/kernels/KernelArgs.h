//===- KernelArgs.h - arguments of the built-in kernels ----------*- C++ -*-===//
//
// Shared by the host code and the device code: these structs are passed by
// value through cuLaunchKernel, so both sides must see the same layout
// (plain scalars and pointers only).
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_CUDA_KERNELS_KERNELARGS_H
#define SNNRT_CUDA_KERNELS_KERNELARGS_H

enum SnnNeuronParam {
  SNN_PARAM_K,
  SNN_PARAM_C,
  SNN_PARAM_V_LEAK,
  SNN_PARAM_V_TH,
  SNN_PARAM_V_RESET,
  SNN_PARAM_V_INIT,
  SNN_PARAM_K_SYN,
  SNN_PARAM_C_SYN,
  SNN_PARAM_I_INIT,
  SNN_NUM_PARAMS
};

enum SnnNeuronModel {
  SNN_MODEL_LIF,   // also `if` (k = 0)
  SNN_MODEL_PLIF,  // k = sigmoid(w); c = k (decay_input) or c = 1
  SNN_MODEL_LI,    // no threshold: the output is H
  SNN_MODEL_CUBA,  // a synaptic current feeds the LIF
};

enum SnnSurrogate {
  SNN_SG_SIGMOID,
  SNN_SG_ATAN,
  SNN_SG_TRIANGLE,
  SNN_SG_FAST_SIGMOID,
};

struct SnnNeuronArgs {
  // Forward: in = X, out = S (H for li), h = saved H, syn = saved I.
  // Backward: in = gS, out = gX, h = saved H (read), syn unused,
  // gw = gradient of the plif weight.
  const float *in;
  float *out;
  float *h;
  float *syn;
  float *gw;
  // A per-neuron parameter points to `paramSize[i]` (1 or F) values;
  // a null pointer means the scalar `scalar[i]`. For plif, param[K] is w.
  const float *param[SNN_NUM_PARAMS];
  float scalar[SNN_NUM_PARAMS];
  long long paramSize[SNN_NUM_PARAMS];
  long long steps;    // T
  long long neurons;  // N = B * F
  long long features; // F
  int model;
  int softReset;
  int strict;
  int detachReset;
  int decayInput; // plif
  int surrogate;
  float alpha;
  int hasThetaGrad;
  float thetaGrad;
  int hasGradBand; // σ' = 0 where |H - v_th| > gradBand
  float gradBand;
  int accumulate; // backward: gX += instead of gX =
  // neuron_step (forward, one step): the state before the step replaces
  // v_init/i_init, the state after it is written out (null: not used).
  // neuron_step_bwd: vIn is the gradient of the next membrane, vOut receives
  // the gradient of the previous one.
  const float *vIn;
  const float *iIn;
  float *vOut;
  float *iOut;
  // Forward: the input is in + addend (a fused snn.add; null: in alone).
  const float *addend;
  // h holds bfloat16 values (--snn-compile saved-h=bf16), not floats.
  int hBf16;
  // neuron_step_bwd of plif: the membrane before the step (dH/dk of the
  // weight gradient); null elsewhere (V[t-1] comes from H[t-1] or v_init).
  const float *vBefore;
};

/// A 2-d convolution (or pooling window) over images [M, C, H, W].
struct SnnConvShape {
  long long images; // rows M (of this chunk, for convolutions)
  long long channels, height, width;
  long long outHeight, outWidth;
  long long kernelH, kernelW, strideH, strideW, padH, padW, dilH, dilW;
  long long groupChannels; // input channels per group (convolutions)
};

#endif // SNNRT_CUDA_KERNELS_KERNELARGS_H
