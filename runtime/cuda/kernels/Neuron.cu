//===- Neuron.cu - built-in neuron scan kernels ---------------------------===//
//
// One kernel per neuron layer whatever T: a thread owns W neurons (W = 4:
// one 16-byte access per tensor and step, chosen by the host when N % 4 == 0
// and every pointer is 16-byte aligned), keeps the state in registers and
// loops over T. The arithmetic follows DESIGN §2 in the order of its
// formulas; the file is compiled with -fmad=false so that spikes match the
// CPU backend bit for bit.
//
//===----------------------------------------------------------------------===//

#include "KernelArgs.h"
#include "VectorAccess.cuh"

#include <cuda_bf16.h>

namespace {

/// The saved H, in f32 or (saved-h=bf16) rounded to bfloat16.
template <int W>
__device__ __forceinline__ Vec<W> loadH(const SnnNeuronArgs &a, long long at) {
  if (!a.hBf16)
    return load<W>(a.h, at);
  const __nv_bfloat16 *p = reinterpret_cast<const __nv_bfloat16 *>(a.h) + at;
  Vec<W> r;
#pragma unroll
  for (int l = 0; l < W; ++l)
    r.v[l] = __bfloat162float(p[l]);
  return r;
}

template <int W>
__device__ __forceinline__ void storeH(const SnnNeuronArgs &a, long long at,
                                       const Vec<W> &h) {
  if (!a.hBf16) {
    store<W>(a.h, at, h);
    return;
  }
  __nv_bfloat16 *p = reinterpret_cast<__nv_bfloat16 *>(a.h) + at;
#pragma unroll
  for (int l = 0; l < W; ++l)
    p[l] = __float2bfloat16_rn(h.v[l]);
}

/// The parameters of one neuron, read once before the time loop.
struct Params {
  float p[SNN_NUM_PARAMS];
  float w; // plif: the raw weight (k = sigmoid(w))
};

__device__ Params loadParams(const SnnNeuronArgs &a, long long neuron) {
  Params r;
  long long f = neuron % a.features;
#pragma unroll
  for (int i = 0; i < SNN_NUM_PARAMS; ++i) {
    const float *t = a.param[i];
    r.p[i] = t ? __ldg(t + (a.paramSize[i] == 1 ? 0 : f)) : a.scalar[i];
  }
  r.w = r.p[SNN_PARAM_K];
  if (a.model == SNN_MODEL_PLIF) {
    r.p[SNN_PARAM_K] = 1.0f / (1.0f + expf(-r.w));
    r.p[SNN_PARAM_C] = a.decayInput ? r.p[SNN_PARAM_K] : 1.0f;
  }
  return r;
}

__device__ __forceinline__ bool fires(const SnnNeuronArgs &a, float h,
                                      float vth) {
  return a.strict ? h > vth : h >= vth;
}

/// The membrane after the spike decision (hard or soft reset).
__device__ __forceinline__ float reset(const SnnNeuronArgs &a, float h,
                                       bool spike, const Params &q) {
  if (!spike)
    return h;
  return a.softReset ? h - q.p[SNN_PARAM_V_TH] : q.p[SNN_PARAM_V_RESET];
}

/// σ'(H - v_th), 0 below theta_grad and outside the band |H - v_th| <= B.
__device__ float surrogate(const SnnNeuronArgs &a, float h, float vth) {
  if (a.hasThetaGrad && h < a.thetaGrad)
    return 0.0f;
  float u = h - vth, alpha = a.alpha;
  if (a.hasGradBand && fabsf(u) > a.gradBand)
    return 0.0f;
  switch (a.surrogate) {
  case SNN_SG_SIGMOID: {
    float z = 1.0f / (1.0f + expf(-alpha * u));
    return (1.0f - z) * z * alpha;
  }
  case SNN_SG_ATAN: {
    float w = (3.14159265358979323846f / 2.0f * alpha) * u;
    return (alpha / 2.0f) / (1.0f + w * w);
  }
  case SNN_SG_TRIANGLE:
    return (1.0f / alpha) * fmaxf(0.0f, 1.0f - fabsf(u) / alpha);
  default: {
    float d = alpha * fabsf(u) + 1.0f;
    return 1.0f / (d * d);
  }
  }
}

template <int W> __device__ void neuronForward(const SnnNeuronArgs &a) {
  long long thread = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long base = thread * W;
  if (base >= a.neurons)
    return;
  Params q[W];
  float v[W], syn[W];
#pragma unroll
  for (int l = 0; l < W; ++l) {
    q[l] = loadParams(a, base + l);
    v[l] = q[l].p[SNN_PARAM_V_INIT];
    syn[l] = q[l].p[SNN_PARAM_I_INIT];
  }
  if (a.vIn) {
    Vec<W> s = load<W>(a.vIn, base);
#pragma unroll
    for (int l = 0; l < W; ++l)
      v[l] = s.v[l];
  }
  if (a.iIn) {
    Vec<W> s = load<W>(a.iIn, base);
#pragma unroll
    for (int l = 0; l < W; ++l)
      syn[l] = s.v[l];
  }
  const bool cuba = a.model == SNN_MODEL_CUBA, li = a.model == SNN_MODEL_LI;
  for (long long t = 0; t < a.steps; ++t) {
    long long at = t * a.neurons + base;
    Vec<W> x = load<W>(a.in, at), out, hs;
    if (a.addend) {
      Vec<W> y = load<W>(a.addend, at);
#pragma unroll
      for (int l = 0; l < W; ++l)
        x.v[l] = x.v[l] + y.v[l];
    }
#pragma unroll
    for (int l = 0; l < W; ++l) {
      const float *p = q[l].p;
      float in = x.v[l];
      if (cuba) {
        // I[t] = I[t-1] - k_syn I[t-1] + c_syn X[t]
        syn[l] = (syn[l] - p[SNN_PARAM_K_SYN] * syn[l]) +
                 p[SNN_PARAM_C_SYN] * in;
        in = syn[l];
      }
      // H = V + k (v_leak - V) + c X
      float h = (v[l] + p[SNN_PARAM_K] * (p[SNN_PARAM_V_LEAK] - v[l])) +
                p[SNN_PARAM_C] * in;
      hs.v[l] = h;
      if (li) {
        out.v[l] = h;
        v[l] = h;
      } else {
        bool spike = fires(a, h, p[SNN_PARAM_V_TH]);
        out.v[l] = spike ? 1.0f : 0.0f;
        v[l] = reset(a, h, spike, q[l]);
      }
      x.v[l] = syn[l]; // reused as the saved synaptic current
    }
    store<W>(a.out, at, out);
    if (a.h)
      storeH<W>(a, at, hs);
    if (a.syn)
      store<W>(a.syn, at, x);
  }
  Vec<W> state;
  if (a.vOut) {
#pragma unroll
    for (int l = 0; l < W; ++l)
      state.v[l] = v[l];
    store<W>(a.vOut, base, state);
  }
  if (a.iOut) {
#pragma unroll
    for (int l = 0; l < W; ++l)
      state.v[l] = syn[l];
    store<W>(a.iOut, base, state);
  }
}

template <int W> __device__ void neuronBackward(const SnnNeuronArgs &a) {
  long long thread = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long base = thread * W;
  bool active = base < a.neurons;
  const bool plif = a.model == SNN_MODEL_PLIF;
  float gk[W];
#pragma unroll
  for (int l = 0; l < W; ++l)
    gk[l] = 0.0f;
  if (active) {
    Params q[W];
    float gv[W], gi[W];
#pragma unroll
    for (int l = 0; l < W; ++l) {
      q[l] = loadParams(a, base + l);
      gv[l] = 0.0f;
      gi[l] = 0.0f;
    }
    if (a.vIn) { // neuron_step_bwd: the gradient of the next membrane
      Vec<W> g = load<W>(a.vIn, base);
#pragma unroll
      for (int l = 0; l < W; ++l)
        gv[l] = g.v[l];
    }
    if (a.iIn) { // and (cuba) of the next synaptic current
      Vec<W> g = load<W>(a.iIn, base);
#pragma unroll
      for (int l = 0; l < W; ++l)
        gi[l] = g.v[l];
    }
    const bool cuba = a.model == SNN_MODEL_CUBA, li = a.model == SNN_MODEL_LI;
    for (long long t = a.steps - 1; t >= 0; --t) {
      long long at = t * a.neurons + base;
      Vec<W> gs = load<W>(a.in, at), hv = loadH<W>(a, at), gx;
      Vec<W> hPrev, vBefore;
      if (plif && t > 0)
        hPrev = loadH<W>(a, at - a.neurons);
      if (plif && a.vBefore)
        vBefore = load<W>(a.vBefore, at);
#pragma unroll
      for (int l = 0; l < W; ++l) {
        const float *p = q[l].p;
        float h = hv.v[l], gh;
        if (li) {
          // The output is H itself and the membrane is not reset.
          gh = gs.v[l] + gv[l];
        } else {
          float vth = p[SNN_PARAM_V_TH];
          float sg = surrogate(a, h, vth);
          bool spike = fires(a, h, vth);
          float dvdh;
          if (!a.softReset) {
            // (1 - S) + (v_reset - H) sg; detach_reset: (1 - S)
            dvdh = spike ? 0.0f : 1.0f;
            if (!a.detachReset)
              dvdh = dvdh + (p[SNN_PARAM_V_RESET] - h) * sg;
          } else {
            // 1 - v_th sg; detach_reset: 1
            dvdh = a.detachReset ? 1.0f : 1.0f - vth * sg;
          }
          gh = gs.v[l] * sg + gv[l] * dvdh;
        }
        if (plif) {
          // dH/dk with V[t-1] recomputed from H[t-1]: v_leak - V[t-1], plus
          // X[t] = (H - V[t-1] - k (v_leak - V[t-1])) / k when c = k.
          float vPrev = a.vBefore ? vBefore.v[l] : p[SNN_PARAM_V_INIT];
          if (t > 0) {
            float hp = hPrev.v[l];
            vPrev = reset(a, hp, fires(a, hp, p[SNN_PARAM_V_TH]), q[l]);
          }
          float dk = a.decayInput ? (h - vPrev) / p[SNN_PARAM_K]
                                  : p[SNN_PARAM_V_LEAK] - vPrev;
          gk[l] += gh * dk;
        }
        float gin = p[SNN_PARAM_C] * gh;
        gv[l] = gh * (1.0f - p[SNN_PARAM_K]);
        if (cuba) {
          float g = gin + gi[l];
          gin = p[SNN_PARAM_C_SYN] * g;
          gi[l] = g * (1.0f - p[SNN_PARAM_K_SYN]);
        }
        gx.v[l] = gin;
      }
      if (a.accumulate) {
        Vec<W> old = load<W>(a.out, at);
#pragma unroll
        for (int l = 0; l < W; ++l)
          gx.v[l] += old.v[l];
      }
      store<W>(a.out, at, gx);
    }
    if (a.vOut) { // neuron_step_bwd: the gradient of the previous membrane
      Vec<W> g;
#pragma unroll
      for (int l = 0; l < W; ++l)
        g.v[l] = gv[l];
      store<W>(a.vOut, base, g);
    }
    if (a.iOut) { // and (cuba) of the previous synaptic current
      Vec<W> g;
#pragma unroll
      for (int l = 0; l < W; ++l)
        g.v[l] = gi[l];
      store<W>(a.iOut, base, g);
    }
    if (plif) {
#pragma unroll
      for (int l = 0; l < W; ++l) {
        float k = q[l].p[SNN_PARAM_K];
        gk[l] *= k * (1.0f - k); // dk/dw of the sigmoid
      }
    }
  }
  if (!plif || !a.gw)
    return;
  if (a.paramSize[SNN_PARAM_K] == 1) {
    // A scalar weight: reduce the warp first, then one atomic per warp.
    float sum = 0.0f;
#pragma unroll
    for (int l = 0; l < W; ++l)
      sum += gk[l];
    for (int off = 16; off > 0; off /= 2)
      sum += __shfl_down_sync(0xffffffffu, sum, off);
    if ((threadIdx.x & 31) == 0)
      atomicAdd(a.gw, sum);
    return;
  }
  if (active)
#pragma unroll
    for (int l = 0; l < W; ++l)
      atomicAdd(a.gw + (base + l) % a.features, gk[l]);
}

} // namespace

extern "C" __global__ void snnrt_neuron_fwd_w1(SnnNeuronArgs a) {
  neuronForward<1>(a);
}
extern "C" __global__ void snnrt_neuron_fwd_w4(SnnNeuronArgs a) {
  neuronForward<4>(a);
}
extern "C" __global__ void snnrt_neuron_bwd_w1(SnnNeuronArgs a) {
  neuronBackward<1>(a);
}
extern "C" __global__ void snnrt_neuron_bwd_w4(SnnNeuronArgs a) {
  neuronBackward<4>(a);
}
