//===- CudaBackendTest.cpp - every CUDA op against a host reference -------===//
//
// Each test runs one manifest op on cuda:0 with fresh random inputs and
// compares it with an independent host reference (float64). Without a GPU
// or driver every test is skipped, except the one that checks the error
// such a machine gets.
//
//===----------------------------------------------------------------------===//

#include "CudaModule.h"
#include "CudaProgram.h"
#include "OpHarness.h"

#ifdef SNNRT_USE_MINITEST
#include "MiniTest.h"
#else
#include <gtest/gtest.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>

using namespace snnrt::cuda;
using namespace snnrt::cuda::test;
using nlohmann::json;

#define REQUIRE_GPU()                                                          \
  std::string whyNot;                                                          \
  CudaDevice *device = sharedDevice(whyNot);                                   \
  if (!device)                                                                 \
    GTEST_SKIP() << "no usable GPU: " << whyNot;                               \
  OpHarness hx(*device);                                                       \
  Random rnd;                                                                  \
  SCOPED_TRACE("random seed " + std::to_string(rnd.seed()))

#define EXPECT_CLOSE(got, want, rtol, atol)                                    \
  EXPECT_LE(worstError((got), (want), (rtol), (atol)), 1.0)

#ifndef EXPECT_LE
#define EXPECT_LE(a, b) EXPECT_TRUE((a) <= (b))
#endif

namespace {
std::vector<double> toDouble(const std::vector<float> &v) {
  return std::vector<double>(v.begin(), v.end());
}

std::vector<int64_t> ids(std::initializer_list<int64_t> list) { return list; }
} // namespace

//===-- no driver ---------------------------------------------------------===//

TEST(CudaBackend, ExplainsAMachineWithoutDriver) {
  std::string whyNot;
  if (sharedDevice(whyNot))
    GTEST_SKIP() << "this machine has a GPU";
  // Either no driver at all, or a driver without a usable device: both
  // errors name the device and say what to do.
  EXPECT_EQ(whyNot.rfind("cuda:0: ", 0), 0u);
  EXPECT_TRUE(whyNot.find("--device cpu") != std::string::npos) << whyNot;
}

TEST(CudaBackend, ListsTheDevicesOfABadOrdinal) {
  std::string whyNot;
  if (!sharedDevice(whyNot))
    GTEST_SKIP() << "no usable GPU: " << whyNot;
  try {
    CudaDevice bad(4096);
    FAIL() << "cuda:4096 started";
  } catch (const std::exception &e) {
    std::string m = e.what();
    EXPECT_TRUE(m.find("cuda:4096: no such device: this machine has") !=
                std::string::npos)
        << m;
  }
}

//===-- neuron ------------------------------------------------------------===//

// The neuron ops run only the module's generated kernels: their numerics on
// the GPU are checked on compiled modules (CudaExecutor.RunsACompiledModules-
// Kernels, and bench/gpu-train.sh against the float64 reference).
TEST(CudaNeuron, BadAttributesAndMissingKernelsAreErrors) {
  REQUIRE_GPU();
  int64_t x = hx.add("x", {2, 8}, rnd.uniform(16, 0, 1));
  int64_t s = hx.addOutput("s", {2, 8});
  json op{{"op", "neuron"}, {"model", "hodgkin"}, {"features", 8},
          {"in", ids({x})}, {"out", ids({s})}};
  try {
    hx.run(op);
    FAIL() << "an unknown model ran";
  } catch (const std::exception &e) {
    EXPECT_TRUE(std::string(e.what()).find("unknown neuron model 'hodgkin'") !=
                std::string::npos)
        << e.what();
  }
  op["model"] = "lif";
  try {
    hx.run(op);
    FAIL() << "a neuron op without a generated kernel ran";
  } catch (const std::exception &e) {
    EXPECT_TRUE(std::string(e.what()).find("names no generated kernel") !=
                std::string::npos)
        << e.what();
  }
}

//===-- linear and convolution --------------------------------------------===//

TEST(CudaLayers, LinearForwardAndBackward) {
  REQUIRE_GPU();
  const int64_t T = 3, B = 5, K = 37, N = 19, M = T * B;
  std::vector<float> x = rnd.uniform(M * K, -1, 1), w = rnd.uniform(N * K, -1, 1);
  // The bias and its gradient are generated kernels, which a hand-written
  // op cannot name (bench/gpu-train.sh grads checks them in compiled
  // modules).
  std::vector<float> gy = rnd.uniform(M * N, -1, 1);
  int64_t xi = hx.add("x", {T, B, K}, x), wi = hx.add("w", {N, K}, w);
  int64_t yi = hx.addOutput("y", {T, B, N});
  hx.run({{"op", "linear"}, {"has_bias", false}, {"in", ids({xi, wi})},
          {"out", ids({yi})}});
  std::vector<double> y(M * N), gx(M * K, 0.0), gw(N * K, 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        acc += (double)x[m * K + k] * w[n * K + k];
        gx[m * K + k] += (double)gy[m * N + n] * w[n * K + k];
        gw[n * K + k] += (double)gy[m * N + n] * x[m * K + k];
      }
      y[m * N + n] = acc;
    }
  EXPECT_CLOSE(hx.read(yi), y, 1e-5, 1e-5);

  int64_t gyi = hx.add("gy", {T, B, N}, gy), gxi = hx.addOutput("gx", {T, B, K});
  int64_t gwi = hx.addOutput("gw", {N, K});
  json bwd{{"op", "linear_bwd"}, {"has_bias", false}, {"need_gx", true},
           {"in", ids({gyi, xi, wi})}, {"out", ids({gxi, gwi})}};
  hx.run(bwd);
  // cuDNN's fastest fp32 algorithms (Winograd, FFT), which Find may pick,
  // round more than a direct sum: 1.2e-5 was seen on a 3x3 data gradient.
  double tol = hx.device().cudnn() ? 5e-5 : 1e-5;
  EXPECT_CLOSE(hx.read(gxi), gx, tol, tol);
  EXPECT_CLOSE(hx.read(gwi), gw, tol, tol);
  // need_gx = false, accumulate into gw.
  hx.run({{"op", "linear_bwd"}, {"has_bias", false}, {"need_gx", false},
          {"accumulate", true}, {"in", ids({gyi, xi, wi})},
          {"out", ids({gwi})}});
  for (double &g : gw)
    g *= 2;
  EXPECT_CLOSE(hx.read(gwi), gw, 1e-5, 1e-5);
}

namespace {
struct ConvCase {
  int64_t m, c, h, w, o, kh, kw, stride, pad, dil, groups;
};

void checkConv(const ConvCase &k, OpHarness &hx, Random &rnd) {
  SCOPED_TRACE("conv C=" + std::to_string(k.c) + " O=" + std::to_string(k.o) +
               " k=" + std::to_string(k.kh) + " s=" + std::to_string(k.stride) +
               " p=" + std::to_string(k.pad) + " d=" + std::to_string(k.dil) +
               " g=" + std::to_string(k.groups));
  int64_t cg = k.c / k.groups, og = k.o / k.groups;
  int64_t oh = (k.h + 2 * k.pad - k.dil * (k.kh - 1) - 1) / k.stride + 1;
  int64_t ow = (k.w + 2 * k.pad - k.dil * (k.kw - 1) - 1) / k.stride + 1;
  std::vector<float> x = rnd.uniform(k.m * k.c * k.h * k.w, -1, 1);
  std::vector<float> w = rnd.uniform(k.o * cg * k.kh * k.kw, -1, 1);
  std::vector<float> gy = rnd.uniform(k.m * k.o * oh * ow, -1, 1);
  std::vector<double> y(gy.size()), gx(x.size(), 0.0), gw(w.size(), 0.0);
  for (int64_t m = 0; m < k.m; ++m)
    for (int64_t o = 0; o < k.o; ++o)
      for (int64_t py = 0; py < oh; ++py)
        for (int64_t px = 0; px < ow; ++px) {
          int64_t yi = ((m * k.o + o) * oh + py) * ow + px;
          double acc = 0.0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t a = 0; a < k.kh; ++a)
              for (int64_t e = 0; e < k.kw; ++e) {
                int64_t iy = py * k.stride - k.pad + a * k.dil;
                int64_t ix = px * k.stride - k.pad + e * k.dil;
                if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w)
                  continue;
                int64_t c = (o / og) * cg + ci;
                int64_t xi = ((m * k.c + c) * k.h + iy) * k.w + ix;
                int64_t wi = ((o * cg + ci) * k.kh + a) * k.kw + e;
                acc += (double)x[xi] * w[wi];
                gx[xi] += (double)gy[yi] * w[wi];
                gw[wi] += (double)gy[yi] * x[xi];
              }
          y[yi] = acc;
        }
  json attrs{{"stride", {k.stride, k.stride}}, {"padding", {k.pad, k.pad}},
             {"dilation", {k.dil, k.dil}}, {"groups", k.groups},
             {"has_bias", false}};
  int64_t T = 2, B = k.m / 2; // the rows are [T, B]
  int64_t xi = hx.add("x", {T, B, k.c, k.h, k.w}, x);
  int64_t wi = hx.add("w", {k.o, cg, k.kh, k.kw}, w);
  int64_t yi = hx.addOutput("y", {T, B, k.o, oh, ow});
  json fwd = attrs;
  fwd["op"] = "conv2d";
  fwd["in"] = ids({xi, wi});
  fwd["out"] = ids({yi});
  hx.run(fwd);
  EXPECT_CLOSE(hx.read(yi), y, 1e-5, 1e-5);

  int64_t gyi = hx.add("gy", {T, B, k.o, oh, ow}, gy);
  int64_t gxi = hx.addOutput("gx", {T, B, k.c, k.h, k.w});
  int64_t gwi = hx.addOutput("gw", {k.o, cg, k.kh, k.kw});
  json bwd = attrs;
  bwd["op"] = "conv2d_bwd";
  bwd["need_gx"] = true;
  bwd["in"] = ids({gyi, xi, wi});
  bwd["out"] = ids({gxi, gwi});
  hx.run(bwd);
  // cuDNN's fastest fp32 algorithms (Winograd, FFT), which Find may pick,
  // round more than a direct sum: 1.2e-5 was seen on a 3x3 data gradient.
  double tol = hx.device().cudnn() ? 5e-5 : 1e-5;
  EXPECT_CLOSE(hx.read(gxi), gx, tol, tol);
  EXPECT_CLOSE(hx.read(gwi), gw, tol, tol);
}

void checkConvs(OpHarness &hx, Random &rnd) {
  checkConv({4, 3, 9, 8, 5, 3, 3, 1, 1, 1, 1}, hx, rnd);
  checkConv({6, 4, 11, 10, 6, 3, 3, 2, 1, 1, 2}, hx, rnd); // stride, groups
  checkConv({2, 2, 12, 12, 4, 3, 2, 1, 2, 2, 1}, hx, rnd); // dilation, KH!=KW
}
} // namespace

TEST(CudaLayers, Bf16GemmOptionUsesReducedPrecisionProducts) {
  REQUIRE_GPU();
  // A device of its own with SNNRT_CUDA_BF16's option: the same GEMM is
  // close to float64 (bf16 products, fp32 accumulation) but not fp32-exact.
  DeviceOptions opts = device->options();
  opts.bf16 = true;
  opts.tf32 = false;
  CudaDevice bf16Device(0, opts);
  OpHarness h(bf16Device);
  const int64_t M = 64, K = 256, N = 48;
  std::vector<float> x = rnd.uniform(M * K, -1, 1), w = rnd.uniform(N * K, -1, 1);
  int64_t xi = h.add("x", {M, K}, x), wi = h.add("w", {N, K}, w);
  int64_t yi = h.addOutput("y", {M, N});
  h.run({{"op", "linear"}, {"has_bias", false}, {"in", ids({xi, wi})},
         {"out", ids({yi})}});
  std::vector<float> y = h.read(yi);
  double worst = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += (double)x[m * K + k] * w[n * K + k];
      worst = std::max(worst, std::fabs(y[m * N + n] - acc));
    }
  // |y| ~ sqrt(K)/3 ~ 5: bf16 rounding of the operands gives ~1e-2.
  EXPECT_LT(worst, 0.15);
  EXPECT_GT(worst, 1e-4) << "the GEMM ran in fp32: the bf16 option is ignored";
}

TEST(CudaLayers, Conv2dForwardAndBackward) {
  REQUIRE_GPU();
  SCOPED_TRACE(device->cudnn() ? "cuDNN" : "im2col + cuBLAS");
  checkConvs(hx, rnd);
}

// Without cuDNN a convolution runs its `columns` (generated im2col and
// col2im, which a hand-written op cannot name; bench/gpu-train.sh grads runs
// compiled modules with SNNRT_CUDA_CUDNN=0): without them, one clear error.
TEST(CudaLayers, Conv2dWithoutCudnnNeedsItsColumns) {
  REQUIRE_GPU();
  DeviceOptions options = device->options();
  options.cudnn = false;
  CudaDevice plain(0, options);
  ASSERT_TRUE(plain.cudnn() == nullptr);
  OpHarness plainHx(plain);
  // x [T=1, B=2, 1, 5, 5] * w [3, 1, 3, 3] -> y [1, 2, 3, 3, 3]
  int64_t xi = plainHx.add("x", {1, 2, 1, 5, 5}, rnd.uniform(50, -1, 1));
  int64_t wi = plainHx.add("w", {3, 1, 3, 3}, rnd.uniform(27, -1, 1));
  int64_t yi = plainHx.addOutput("y", {1, 2, 3, 3, 3});
  try {
    plainHx.run({{"op", "conv2d"},
                 {"in", ids({xi, wi})},
                 {"out", ids({yi})},
                 {"stride", {1, 1}},
                 {"padding", {0, 0}},
                 {"dilation", {1, 1}},
                 {"groups", 1},
                 {"has_bias", false}});
    FAIL() << "a convolution without cuDNN and without columns ran";
  } catch (const std::exception &e) {
    EXPECT_TRUE(std::string(e.what()).find("needs its \"columns\"") !=
                std::string::npos)
        << e.what();
  }
}

TEST(CudaBackend, ProgramsReplayAsCudaGraphs) {
  REQUIRE_GPU();
  // linear -> linear, run eagerly, then captured, then replayed, with new
  // inputs each time: the graph must read the tensors' current contents.
  const int64_t M = 32, K = 24, N = 32, P = 8;
  int64_t xi = hx.add("x", {M, K}, rnd.uniform(M * K, -1, 1));
  std::vector<float> w = rnd.uniform(N * K, -0.5f, 0.5f);
  std::vector<float> w2 = rnd.uniform(P * N, -0.5f, 0.5f);
  int64_t wi = hx.add("w", {N, K}, w), yi = hx.addOutput("y", {M, N});
  int64_t w2i = hx.add("w2", {P, N}, w2), zi = hx.addOutput("z", {M, P});
  json ops = json::array();
  ops.push_back({{"op", "linear"}, {"has_bias", false},
                 {"in", ids({xi, wi})}, {"out", ids({yi})}});
  ops.push_back({{"op", "linear"}, {"has_bias", false},
                 {"in", ids({yi, w2i})}, {"out", ids({zi})}});
  CudaProgram program(*device, "infer", ops, [&](int64_t id) {
    return hx.tensor(id);
  });
  for (int run = 0; run < 4; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    std::vector<float> x = rnd.uniform(M * K, -1, 1);
    hx.write(xi, x);
    program.run({});
    device->synchronize("test");
    std::vector<float> y = hx.read(yi);
    std::vector<double> want(M * N), wantZ(M * P);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += (double)x[m * K + k] * w[n * K + k];
        want[m * N + n] = acc;
      }
    for (int64_t m = 0; m < M; ++m)
      for (int64_t p = 0; p < P; ++p) {
        double acc = 0;
        for (int64_t n = 0; n < N; ++n)
          acc += (double)y[m * N + n] * w2[p * N + n];
        wantZ[m * P + p] = acc;
      }
    EXPECT_CLOSE(y, want, 1e-5, 1e-5);
    EXPECT_CLOSE(hx.read(zi), wantZ, 1e-5, 1e-5);
    EXPECT_EQ(program.usesGraph(), run >= 1 && device->options().graphs);
  }
}

TEST(CudaBackend, SideWorkRunsAfterItsOpAndIsCapturedWithTheProgram) {
  REQUIRE_GPU();
  // linear y = x w^T, then linear z = y w2^T; after op 0, a copy of y on the
  // side stream (as a gradient bucket's all-reduce is). The copy must see
  // op 0's y of this run, be done when the program is, and replay with the
  // graph: enqueued at the eager run and the capture only.
  const int64_t M = 16, K = 24, N = 32, P = 8;
  int64_t xi = hx.add("x", {M, K}, rnd.uniform(M * K, -1, 1));
  std::vector<float> w = rnd.uniform(N * K, -0.5f, 0.5f);
  int64_t wi = hx.add("w", {N, K}, w);
  int64_t w2i = hx.add("w2", {P, N}, rnd.uniform(P * N, -0.5f, 0.5f));
  int64_t yi = hx.addOutput("y", {M, N}), zi = hx.addOutput("z", {M, P});
  int64_t ci = hx.addOutput("copy", {M, N});
  json ops = json::array();
  ops.push_back({{"op", "linear"}, {"has_bias", false},
                 {"in", ids({xi, wi})}, {"out", ids({yi})}});
  ops.push_back({{"op", "linear"}, {"has_bias", false},
                 {"in", ids({yi, w2i})}, {"out", ids({zi})}});
  CudaProgram program(*device, "backward", ops, [&](int64_t id) {
    return hx.tensor(id);
  });
  int enqueued = 0;
  SideWork work;
  work.afterOps = {0};
  work.enqueue = [&](size_t op, CUstream stream) {
    EXPECT_EQ(op, 0u);
    ++enqueued;
    SNNRT_CU(driver().cuMemcpyDtoDAsync(hx.tensor(ci).ptr, hx.tensor(yi).ptr,
                                        M * N * sizeof(float), stream),
             "side copy");
  };
  program.setSideWork(work);
  for (int run = 0; run < 4; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    hx.write(xi, rnd.uniform(M * K, -1, 1));
    program.run({});
    device->synchronize("test");
    std::vector<float> y = hx.read(yi);
    EXPECT_TRUE(hx.read(ci) == y);
    EXPECT_EQ(program.usesGraph(), run >= 1 && device->options().graphs);
  }
  EXPECT_EQ(enqueued, device->options().graphs ? 2 : 4);
  work.afterOps = {2};
  EXPECT_THROW(program.setSideWork(work), std::exception);
}

TEST(CudaBackend, DensePathOfAnEventLayerIsAConditionalGraphNode) {
  REQUIRE_GPU();
  // The dense linear of an event-driven layer (unless_event_path) reads the
  // decision on the device: captured, it runs only when decision[1] is 0.
  // Eager runs (the first) run it always. y is refilled with a sentinel
  // before each run, standing in for the event-driven kernel's output.
  const int64_t M = 24, K = 40, N = 36;
  std::vector<float> x = rnd.uniform(M * K, -1, 1), w = rnd.uniform(N * K, -1, 1);
  int64_t xi = hx.add("x", {M, K}, x), wi = hx.add("w", {N, K}, w);
  int64_t yi = hx.addOutput("y", {M, N});
  int64_t di = hx.addInts("decision", {2}, {0, 0});
  json ops = json::array();
  ops.push_back({{"op", "linear"}, {"has_bias", false}, {"unless_event_path", true},
                 {"in", ids({xi, wi, di})}, {"out", ids({yi})}});
  CudaProgram program(*device, "infer", ops,
                      [&](int64_t id) { return hx.tensor(id); });
  std::vector<double> dense(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k)
        acc += (double)x[m * K + k] * w[n * K + k];
      dense[m * N + n] = acc;
    }
  bool conditional = device->options().graphs && device->options().conditional &&
                     device->kernels().findBuiltin("snnrt_set_dense_condition");
  const int eventPath[] = {1, 1, 0, 1, 0};
  for (int run = 0; run < 5; ++run) {
    SCOPED_TRACE("run " + std::to_string(run) + ", decision[1] " +
                 std::to_string(eventPath[run]));
    float words[2];
    int32_t decision[2] = {0, eventPath[run]};
    std::memcpy(words, decision, sizeof words);
    hx.write(di, {words[0], words[1]});
    hx.write(yi, std::vector<float>(M * N, 7.0f));
    program.run({});
    device->synchronize("test");
    EXPECT_EQ(program.usesGraph(), run >= 1 && device->options().graphs);
    if (conditional && run >= 1 && eventPath[run])
      EXPECT_TRUE(hx.read(yi) == std::vector<float>(M * N, 7.0f));
    else
      EXPECT_CLOSE(hx.read(yi), dense, 1e-5, 1e-5);
  }
}

TEST(CudaBackend, ModuleStorageAliasesAndPrograms) {
  REQUIRE_GPU();
  // x[2, 3, 4] -> reshape (alias) to [6, 1, 2, 2] -> a one-step time_stack
  // (a copy) into y.
  json manifest = json::parse(R"({
    "format": "snn-module", "version": 1, "time_steps": 2, "batch": 3,
    "tensors": [
      {"id": 0, "name": "input", "shape": [2, 3, 4], "role": "input"},
      {"id": 1, "name": "flat", "shape": [6, 1, 2, 2], "role": "activation",
       "alias_of": 0},
      {"id": 2, "name": "y", "shape": [6, 1, 2, 2], "role": "activation"},
      {"id": 3, "name": "labels", "shape": [3], "role": "label",
       "dtype": "i32"},
      {"id": 4, "name": "mask", "shape": [24], "role": "saved", "dtype": "u8"}
    ],
    "programs": {"infer": [{"op": "time_stack", "in": [1], "out": [2]}]}
  })");
  CudaModule module(*device, manifest, "/nonexistent");
  EXPECT_EQ(module.tensor(1).ptr, module.tensor(0).ptr);
  EXPECT_EQ(module.bytes(3), 12u);
  EXPECT_EQ(module.bytes(4), 24u);
  std::vector<float> x = rnd.uniform(24, -1, 1), y(24);
  for (int run = 0; run < 3; ++run) {
    module.upload(0, x.data(), x.size() * 4);
    module.run("infer", {});
    module.download(2, y.data(), y.size() * 4);
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_EQ(y[i], x[i]);
  }
  try {
    module.run("train_forward", {});
    FAIL() << "a missing program ran";
  } catch (const std::exception &e) {
    EXPECT_TRUE(std::string(e.what()).find("no program 'train_forward'") !=
                std::string::npos)
        << e.what();
  }
  try {
    module.upload(0, x.data(), 8);
    FAIL() << "a short upload was accepted";
  } catch (const std::exception &e) {
    EXPECT_TRUE(std::string(e.what()).find("upload of 8 bytes into tensor "
                                           "input of 96 bytes") !=
                std::string::npos)
        << e.what();
  }
}

TEST(CudaBackend, UnknownOpIsAnError) {
  REQUIRE_GPU();
  int64_t x = hx.add("x", {4}, rnd.uniform(4, 0, 1));
  try {
    hx.run({{"op", "fft"}, {"in", ids({x})}, {"out", ids({x})}});
    FAIL() << "an unknown op ran";
  } catch (const std::exception &e) {
    EXPECT_TRUE(std::string(e.what()).find("op kind 'fft' is not supported") !=
                std::string::npos)
        << e.what();
  }
}
