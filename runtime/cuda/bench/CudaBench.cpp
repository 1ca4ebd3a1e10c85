//===- CudaBench.cpp - snnrt-cuda-bench: built-in LIF kernels vs copy -----===//
//
// Times the built-in LIF forward and forward+backward kernels for 2^27
// neuron-steps at several T, and reports them against the memory floor: the
// bytes that must move divided by the measured device copy bandwidth.
//
//   forward:          read X, write S                 8 B / neuron-step
//   forward, save H:  + write H                      12 B
//   forward+backward: fwd with H, then read gS and H, write gX   24 B
//
//===----------------------------------------------------------------------===//

#include "CudaDevice.h"
#include "kernels/KernelArgs.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace snnrt::cuda;

namespace {
constexpr long long kNeuronSteps = 1LL << 27;
constexpr int kRepeats = 20;

/// Median time in ms of `kRepeats` runs of `work`, after one warm-up run.
float timeMs(CudaDevice &dev, const std::function<void()> &work) {
  const DriverApi &d = driver();
  const std::string where = dev.name() + ": timing";
  CUevent start, stop;
  SNNRT_CU(d.cuEventCreate(&start, CU_EVENT_DEFAULT), where);
  SNNRT_CU(d.cuEventCreate(&stop, CU_EVENT_DEFAULT), where);
  work();
  std::vector<float> times;
  for (int i = 0; i < kRepeats; ++i) {
    SNNRT_CU(d.cuEventRecord(start, dev.stream()), where);
    work();
    SNNRT_CU(d.cuEventRecord(stop, dev.stream()), where);
    SNNRT_CU(d.cuEventSynchronize(stop), where);
    float ms = 0;
    SNNRT_CU(d.cuEventElapsedTime(&ms, start, stop), where);
    times.push_back(ms);
  }
  d.cuEventDestroy(start);
  d.cuEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

SnnNeuronArgs lifArgs(long long steps, long long neurons) {
  SnnNeuronArgs a;
  std::memset(&a, 0, sizeof(a));
  a.model = SNN_MODEL_LIF;
  a.steps = steps;
  a.neurons = neurons;
  a.features = neurons;
  for (int i = 0; i < SNN_NUM_PARAMS; ++i)
    a.paramSize[i] = 1;
  // SpikingJelly's LIFNode(tau=2): k = c = 0.5, v_th = 1, hard reset to 0.
  a.scalar[SNN_PARAM_K] = 0.5f;
  a.scalar[SNN_PARAM_C] = 0.5f;
  a.scalar[SNN_PARAM_V_TH] = 1.0f;
  a.surrogate = SNN_SG_SIGMOID;
  a.alpha = 4.0f;
  return a;
}

int run(int ordinal) {
  CudaDevice dev(ordinal);
  std::printf("device: %s\n", dev.description().c_str());
  const std::string where = dev.name() + ": snnrt-cuda-bench";
  std::size_t bytes = kNeuronSteps * sizeof(float);
  CUdeviceptr x = dev.allocator().allocate(bytes, "x");
  CUdeviceptr s = dev.allocator().allocate(bytes, "s");
  CUdeviceptr h = dev.allocator().allocate(bytes, "h");
  CUdeviceptr gs = dev.allocator().allocate(bytes, "gs");
  CUdeviceptr gx = dev.allocator().allocate(bytes, "gx");
  {
    std::mt19937 rng(2026);
    std::uniform_real_distribution<float> dist(0.0f, 2.0f);
    std::vector<float> host(kNeuronSteps);
    for (float &v : host)
      v = dist(rng);
    dev.copyToDevice(x, host.data(), bytes, where);
    dev.copyToDevice(gs, host.data(), bytes, where);
    dev.synchronize(where);
  }

  // Device copy bandwidth: a DtoD copy reads and writes every byte.
  float copyMs =
      timeMs(dev, [&] { dev.copyOnDevice(s, x, bytes, where); });
  double copyGBs = 2.0 * bytes / (copyMs * 1e-3) / 1e9;
  std::printf("copy: %zu MiB in %.3f ms = %.1f GB/s (read + write)\n\n",
              bytes >> 20, copyMs, copyGBs);

  CUfunction fwd = dev.kernels().builtin("snnrt_neuron_fwd_w4", where);
  CUfunction bwd = dev.kernels().builtin("snnrt_neuron_bwd_w4", where);
  std::printf("%4s  %-14s %9s %9s %9s %11s\n", "T", "kernel", "ms",
              "GB/s", "floor ms", "of copy bw");
  for (long long steps : {4LL, 8LL, 16LL, 32LL, 64LL}) {
    long long neurons = kNeuronSteps / steps;
    unsigned grid = static_cast<unsigned>((neurons / 4 + 255) / 256);
    SnnNeuronArgs f = lifArgs(steps, neurons);
    f.in = reinterpret_cast<float *>(x);
    f.out = reinterpret_cast<float *>(s);
    SnnNeuronArgs fh = f;
    fh.h = reinterpret_cast<float *>(h);
    SnnNeuronArgs b = lifArgs(steps, neurons);
    b.in = reinterpret_cast<float *>(gs);
    b.h = reinterpret_cast<float *>(h);
    b.out = reinterpret_cast<float *>(gx);
    struct Case {
      const char *name;
      double bytesPerStep;
      std::function<void()> work;
    } cases[] = {
        {"fwd", 8, [&] { dev.launch(fwd, grid, 256, 0, where, f); }},
        {"fwd+save_h", 12, [&] { dev.launch(fwd, grid, 256, 0, where, fh); }},
        {"fwd+bwd", 24,
         [&] {
           dev.launch(fwd, grid, 256, 0, where, fh);
           dev.launch(bwd, grid, 256, 0, where, b);
         }},
    };
    for (Case &c : cases) {
      float ms = timeMs(dev, c.work);
      double moved = c.bytesPerStep * kNeuronSteps;
      double gbs = moved / (ms * 1e-3) / 1e9;
      double floorMs = moved / (copyGBs * 1e9) * 1e3;
      std::printf("%4lld  %-14s %9.3f %9.1f %9.3f %10.1f%%\n", steps, c.name,
                  ms, gbs, floorMs, 100.0 * gbs / copyGBs);
    }
  }
  for (CUdeviceptr p : {x, s, h, gs, gx})
    dev.allocator().free(p);
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  int ordinal = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--device=cuda:", 0) == 0) {
      ordinal = std::atoi(arg.c_str() + 14);
    } else {
      std::fprintf(stderr,
                   "usage: snnrt-cuda-bench [--device=cuda:N]\n"
                   "unknown argument '%s'\n",
                   arg.c_str());
      return 2;
    }
  }
  try {
    return run(ordinal);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "snnrt-cuda-bench: %s\n", e.what());
    return 1;
  }
}
