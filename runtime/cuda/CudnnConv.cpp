//===- CudnnConv.cpp - convolutions through cuDNN (dlopen) ----------------===//

#include "CudnnConv.h"

#include "CudaDevice.h"
#include "CudaError.h"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <string>
#include <mutex>

// The v7 algorithm queries are deprecated in cuDNN 9 but remain its
// documented way to pick an algorithm without running candidates.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace snnrt::cuda {

#define SNNRT_CUDNN_FUNCTIONS(X)                                               \
  X(cudnnCreate)                                                               \
  X(cudnnDestroy)                                                              \
  X(cudnnSetStream)                                                            \
  X(cudnnGetErrorString)                                                       \
  X(cudnnCreateTensorDescriptor)                                               \
  X(cudnnDestroyTensorDescriptor)                                              \
  X(cudnnSetTensor4dDescriptor)                                                \
  X(cudnnCreateFilterDescriptor)                                               \
  X(cudnnDestroyFilterDescriptor)                                              \
  X(cudnnSetFilter4dDescriptor)                                                \
  X(cudnnCreateConvolutionDescriptor)                                          \
  X(cudnnDestroyConvolutionDescriptor)                                         \
  X(cudnnSetConvolution2dDescriptor)                                           \
  X(cudnnSetConvolutionGroupCount)                                             \
  X(cudnnSetConvolutionMathType)                                               \
  X(cudnnGetConvolutionForwardAlgorithm_v7)                                    \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)                               \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)                             \
  X(cudnnGetConvolutionForwardWorkspaceSize)                                   \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize)                              \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize)                            \
  X(cudnnConvolutionForward)                                                   \
  X(cudnnConvolutionBackwardData)                                              \
  X(cudnnConvolutionBackwardFilter)

// Benchmarking searches: optional (null when this cuDNN lacks them).
#define SNNRT_CUDNN_FIND_FUNCTIONS(X)                                          \
  X(cudnnFindConvolutionForwardAlgorithm)                                      \
  X(cudnnFindConvolutionBackwardDataAlgorithm)                                 \
  X(cudnnFindConvolutionBackwardFilterAlgorithm)

struct CudnnApi {
#define SNNRT_DECLARE_MEMBER(name) decltype(&::name) name = nullptr;
  SNNRT_CUDNN_FUNCTIONS(SNNRT_DECLARE_MEMBER)
  SNNRT_CUDNN_FIND_FUNCTIONS(SNNRT_DECLARE_MEMBER)
#undef SNNRT_DECLARE_MEMBER
};

/// Descriptors and algorithms of one convolution shape.
struct CudnnConv::Plan {
  const CudnnApi *api = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t bwdData{};
  cudnnConvolutionBwdFilterAlgo_t bwdFilter{};
  std::size_t fwdBytes = 0, dataBytes = 0, filterBytes = 0;
  ~Plan() {
    if (x)
      api->cudnnDestroyTensorDescriptor(x);
    if (y)
      api->cudnnDestroyTensorDescriptor(y);
    if (w)
      api->cudnnDestroyFilterDescriptor(w);
    if (conv)
      api->cudnnDestroyConvolutionDescriptor(conv);
  }
};

} // namespace snnrt::cuda

using namespace snnrt::cuda;

namespace {
#define SNNRT_STRINGIFY_IMPL(x) #x
#define SNNRT_STRINGIFY(x) SNNRT_STRINGIFY_IMPL(x)

const CudnnApi *loadApi() {
  static CudnnApi api;
  static const CudnnApi *loaded = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void *lib = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib)
      return;
#define SNNRT_RESOLVE(name)                                                    \
  api.name = reinterpret_cast<decltype(api.name)>(                             \
      dlsym(lib, SNNRT_STRINGIFY(name)));                                      \
  if (!api.name)                                                               \
    return;
    SNNRT_CUDNN_FUNCTIONS(SNNRT_RESOLVE)
#undef SNNRT_RESOLVE
#define SNNRT_RESOLVE_OPTIONAL(name)                                           \
  api.name = reinterpret_cast<decltype(api.name)>(                             \
      dlsym(lib, SNNRT_STRINGIFY(name)));
    SNNRT_CUDNN_FIND_FUNCTIONS(SNNRT_RESOLVE_OPTIONAL)
#undef SNNRT_RESOLVE_OPTIONAL
    loaded = &api;
  });
  return loaded;
}

/// A workspace above this is not worth it: pick a leaner algorithm.
constexpr std::size_t kMaxWorkspace = std::size_t(256) << 20;

int narrow(long long v, const std::string &where) {
  if (v > INT_MAX)
    throwError(where + ": a convolution dimension exceeds 2^31-1");
  return static_cast<int>(v);
}

/// SNNRT_CUDA_DETERMINISTIC=0 lets cuDNN use algorithms whose sums depend
/// on scheduling (atomics), as PyTorch does by default; otherwise a resumed
/// training run repeats itself on the GPU too.
bool deterministicOnly() {
  const char *v = std::getenv("SNNRT_CUDA_DETERMINISTIC");
  return !v || std::string(v) != "0";
}

/// The first choice (fastest measured, or heuristic order) that succeeded,
/// is deterministic unless allowed otherwise, and fits the workspace limit.
template <typename Perf> const Perf *pick(const Perf *perf, int count) {
  bool deterministic = deterministicOnly();
  for (int i = 0; i < count; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS &&
        (!deterministic || perf[i].determinism == CUDNN_DETERMINISTIC) &&
        perf[i].memory <= kMaxWorkspace)
      return &perf[i];
  return nullptr;
}

/// By default each convolution takes cuDNN's heuristic choice, a function of
/// the shape, the GPU and the cuDNN version, so that every process runs the
/// same algorithms and a run repeats itself bit for bit. SNNRT_CUDA_CUDNN_FIND=1
/// times the candidates once per shape instead (as torch.backends.cudnn
/// .benchmark): two deterministic algorithms sum in different orders, and
/// on an H100 two processes timing them picked different ones (VGG-11
/// gradients 2.4e-5 apart; with the heuristic choice the same bits, and a
/// faster step, bench/results/2026-11-27-H100-cudnn-find-repeat.txt).
bool findEnabled() {
  const char *v = std::getenv("SNNRT_CUDA_CUDNN_FIND");
  return v && std::string(v) == "1";
}
} // namespace

#define SNNRT_CUDNN(call, where)                                               \
  do {                                                                         \
    cudnnStatus_t status_ = (call);                                            \
    if (status_ != CUDNN_STATUS_SUCCESS)                                       \
      throwError((where) + ": " #call " failed: " +                            \
                 api.cudnnGetErrorString(status_));                            \
  } while (false)

std::unique_ptr<CudnnConv> CudnnConv::create(CudaDevice &device, bool tf32) {
  const CudnnApi *api = loadApi();
  if (!api)
    return nullptr;
  std::unique_ptr<CudnnConv> conv(new CudnnConv(device, *api, tf32));
  if (api->cudnnCreate(&conv->handle) != CUDNN_STATUS_SUCCESS ||
      api->cudnnSetStream(conv->handle, device.stream()) !=
          CUDNN_STATUS_SUCCESS)
    return nullptr; // e.g. a cuDNN built for another CUDA: use im2col
  return conv;
}

CudnnConv::CudnnConv(CudaDevice &device, const CudnnApi &api, bool tf32)
    : device(device), api(api), tf32(tf32) {}

CudnnConv::~CudnnConv() {
  plans.clear();
  if (handle)
    api.cudnnDestroy(handle);
}

void *CudnnConv::workspace(std::size_t bytes, const std::string &where) {
  if (!bytes)
    return nullptr;
  return reinterpret_cast<void *>(device.scratch("cudnn.workspace", bytes, where));
}

CudnnConv::Plan &CudnnConv::plan(const ConvProblem &p,
                                 const std::string &where) {
  auto &slot = plans[p.key()];
  if (slot)
    return *slot;
  auto plan = std::make_unique<Plan>();
  plan->api = &api;
  const SnnConvShape &s = p.shape;
  // The dims are given as (N, C, H, W) in either layout; the format says
  // how they are stored (a filter in NHWC format is KRSC).
  cudnnTensorFormat_t format =
      p.channelsLast ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  SNNRT_CUDNN(api.cudnnCreateTensorDescriptor(&plan->x), where);
  SNNRT_CUDNN(api.cudnnCreateTensorDescriptor(&plan->y), where);
  SNNRT_CUDNN(api.cudnnCreateFilterDescriptor(&plan->w), where);
  SNNRT_CUDNN(api.cudnnCreateConvolutionDescriptor(&plan->conv), where);
  SNNRT_CUDNN(api.cudnnSetTensor4dDescriptor(
                  plan->x, format, CUDNN_DATA_FLOAT,
                  narrow(s.images, where), narrow(s.channels, where),
                  narrow(s.height, where), narrow(s.width, where)),
              where);
  SNNRT_CUDNN(api.cudnnSetTensor4dDescriptor(
                  plan->y, format, CUDNN_DATA_FLOAT,
                  narrow(s.images, where), narrow(p.out, where),
                  narrow(s.outHeight, where), narrow(s.outWidth, where)),
              where);
  SNNRT_CUDNN(api.cudnnSetFilter4dDescriptor(
                  plan->w, CUDNN_DATA_FLOAT, format,
                  narrow(p.out, where), narrow(s.channels / p.groups, where),
                  narrow(s.kernelH, where), narrow(s.kernelW, where)),
              where);
  SNNRT_CUDNN(api.cudnnSetConvolution2dDescriptor(
                  plan->conv, narrow(s.padH, where), narrow(s.padW, where),
                  narrow(s.strideH, where), narrow(s.strideW, where),
                  narrow(s.dilH, where), narrow(s.dilW, where),
                  CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
              where);
  SNNRT_CUDNN(api.cudnnSetConvolutionGroupCount(plan->conv,
                                                narrow(p.groups, where)),
              where);
  // Without TF32 the math must be plain fp32 FMA (cuDNN's default allows
  // TF32 tensor cores for fp32 data).
  SNNRT_CUDNN(api.cudnnSetConvolutionMathType(
                  plan->conv, tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH),
              where);

  constexpr int kMaxAlgos = 16;
  bool find = findEnabled() && api.cudnnFindConvolutionForwardAlgorithm &&
              api.cudnnFindConvolutionBackwardDataAlgorithm &&
              api.cudnnFindConvolutionBackwardFilterAlgorithm;
  // The searches run convolutions on scratch buffers of their own; a plan
  // is made on a program's first (eager) run, never inside a graph capture.
  int count = 0;
  cudnnConvolutionFwdAlgoPerf_t fwd[kMaxAlgos];
  if (find)
    SNNRT_CUDNN(api.cudnnFindConvolutionForwardAlgorithm(
                    handle, plan->x, plan->w, plan->conv, plan->y, kMaxAlgos,
                    &count, fwd),
                where);
  else
    SNNRT_CUDNN(api.cudnnGetConvolutionForwardAlgorithm_v7(
                    handle, plan->x, plan->w, plan->conv, plan->y, kMaxAlgos,
                    &count, fwd),
                where);
  const auto *f = pick(fwd, count);
  cudnnConvolutionBwdDataAlgoPerf_t data[kMaxAlgos];
  if (find)
    SNNRT_CUDNN(api.cudnnFindConvolutionBackwardDataAlgorithm(
                    handle, plan->w, plan->y, plan->conv, plan->x, kMaxAlgos,
                    &count, data),
                where);
  else
    SNNRT_CUDNN(api.cudnnGetConvolutionBackwardDataAlgorithm_v7(
                    handle, plan->w, plan->y, plan->conv, plan->x, kMaxAlgos,
                    &count, data),
                where);
  const auto *d = pick(data, count);
  cudnnConvolutionBwdFilterAlgoPerf_t filter[kMaxAlgos];
  if (find)
    SNNRT_CUDNN(api.cudnnFindConvolutionBackwardFilterAlgorithm(
                    handle, plan->x, plan->y, plan->conv, plan->w, kMaxAlgos,
                    &count, filter),
                where);
  else
    SNNRT_CUDNN(api.cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                    handle, plan->x, plan->y, plan->conv, plan->w, kMaxAlgos,
                    &count, filter),
                where);
  const auto *g = pick(filter, count);
  if (!f || !d || !g)
    throwError(where + ": cuDNN has no algorithm for this convolution within "
                       "a 256 MiB workspace; set SNNRT_CUDA_CUDNN=0 to use "
                       "im2col + cuBLAS");
  plan->fwd = f->algo, plan->fwdBytes = f->memory;
  plan->bwdData = d->algo, plan->dataBytes = d->memory;
  plan->bwdFilter = g->algo, plan->filterBytes = g->memory;
  slot = std::move(plan);
  return *slot;
}

void CudnnConv::forward(const ConvProblem &p, const float *x, const float *w,
                        float *y, const std::string &where) {
  Plan &pl = plan(p, where);
  float one = 1.0f, zero = 0.0f;
  void *ws = workspace(pl.fwdBytes, where);
  SNNRT_CUDNN(api.cudnnConvolutionForward(handle, &one, pl.x, x, pl.w, w,
                                          pl.conv, pl.fwd, ws, pl.fwdBytes,
                                          &zero, pl.y, y),
              where);
}

void CudnnConv::backwardData(const ConvProblem &p, const float *gy,
                             const float *w, float *gx, bool accumulate,
                             const std::string &where) {
  Plan &pl = plan(p, where);
  float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  void *ws = workspace(pl.dataBytes, where);
  SNNRT_CUDNN(api.cudnnConvolutionBackwardData(
                  handle, &one, pl.w, w, pl.y, gy, pl.conv, pl.bwdData, ws,
                  pl.dataBytes, &beta, pl.x, gx),
              where);
}

void CudnnConv::backwardFilter(const ConvProblem &p, const float *x,
                               const float *gy, float *gw, bool accumulate,
                               const std::string &where) {
  Plan &pl = plan(p, where);
  float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  void *ws = workspace(pl.filterBytes, where);
  SNNRT_CUDNN(api.cudnnConvolutionBackwardFilter(
                  handle, &one, pl.x, x, pl.y, gy, pl.conv, pl.bwdFilter, ws,
                  pl.filterBytes, &beta, pl.w, gw),
              where);
}
