//===- CudaDevice.cpp - one GPU: context, stream, memory, kernels ---------===//

#include "CudaDevice.h"

#include "CudaError.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace snnrt::cuda;

static bool envFlag(const char *name, bool fallback) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  return !(std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0 ||
           std::strcmp(v, "false") == 0);
}

DeviceOptions DeviceOptions::fromEnvironment() {
  DeviceOptions o;
  o.tf32 = envFlag("SNNRT_CUDA_TF32", false);
  o.bf16 = envFlag("SNNRT_CUDA_BF16", false);
  o.graphs = envFlag("SNNRT_CUDA_GRAPHS", true);
  o.cudnn = envFlag("SNNRT_CUDA_CUDNN", true);
  o.profile = envFlag("SNNRT_CUDA_PROFILE", false);
  o.conditional = envFlag("SNNRT_CUDA_CONDITIONAL", true);
  return o;
}

CudaDevice::CudaDevice(int ordinal, DeviceOptions options)
    : deviceName("cuda:" + std::to_string(ordinal)), opts(options),
      alloc(deviceName) {
  const DriverApi &d = loadDriver(deviceName);
  int count = 0;
  SNNRT_CU(d.cuDeviceGetCount(&count), deviceName);
  if (ordinal < 0 || ordinal >= count)
    throwError(deviceName + ": no such device: this machine has " +
               std::to_string(count) + " CUDA device" +
               (count == 1 ? "" : "s") +
               (count ? " (cuda:0 .. cuda:" + std::to_string(count - 1) + ")"
                      : std::string()) +
               "; check CUDA_VISIBLE_DEVICES or use --device cpu");
  SNNRT_CU(d.cuDeviceGet(&dev, ordinal), deviceName);
  SNNRT_CU(d.cuDevicePrimaryCtxRetain(&context, dev), deviceName);
  SNNRT_CU(d.cuCtxSetCurrent(context), deviceName);
  SNNRT_CU(d.cuDeviceGetAttribute(
               &ccMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
           deviceName);
  SNNRT_CU(d.cuDeviceGetAttribute(
               &ccMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
           deviceName);
  SNNRT_CU(d.cuDeviceGetAttribute(
               &smCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
           deviceName);
  SNNRT_CU(d.cuDeviceGetAttribute(
               &sharedOptIn,
               CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev),
           deviceName);
  char gpu[256] = {0};
  d.cuDeviceGetName(gpu, sizeof(gpu) - 1, dev);
  deviceDescription = deviceName + " (" + gpu + ", sm_" +
                      std::to_string(ccMajor) + std::to_string(ccMinor) + ", " +
                      std::to_string(smCount) + " SMs)";
  SNNRT_CU(d.cuStreamCreate(&cuStream, CU_STREAM_NON_BLOCKING), deviceName);
  modules.loadBuiltin(deviceName);

  blas = &loadCublas(deviceName);
  SNNRT_CUBLAS(blas->cublasCreate(&handle), deviceName);
  SNNRT_CUBLAS(blas->cublasSetMathMode(handle, opts.tf32
                                                   ? CUBLAS_TF32_TENSOR_OP_MATH
                                                   : CUBLAS_DEFAULT_MATH),
               deviceName);
  bindBlasStream(deviceName);
  if (opts.cudnn)
    cudnnConv = CudnnConv::create(*this, opts.tf32 || opts.bf16);
}

void CudaDevice::addProfile(const std::string &program, const std::string &key,
                            double ms) {
  addToProfile(profileTable, program, key, ms);
}

CudaDevice::~CudaDevice() {
  // No exceptions from a destructor: teardown errors are ignored.
  if (opts.profile)
    printProfile(deviceName, profileTable);
  const DriverApi &d = driver();
  d.cuCtxSetCurrent(context);
  if (cuStream)
    d.cuStreamSynchronize(cuStream);
  if (handle)
    blas->cublasDestroy(handle);
  cudnnConv.reset();
  for (auto &[key, s] : scratchBuffers)
    alloc.free(s.ptr);
  for (CUdeviceptr p : retiredScratch)
    alloc.free(p);
  if (cuStream)
    d.cuStreamDestroy(cuStream);
  if (bodyStream)
    d.cuStreamDestroy(bodyStream);
  // alloc and modules release their memory in their destructors, which run
  // before the context is released below.
}

void CudaDevice::makeCurrent() const {
  SNNRT_CU(driver().cuCtxSetCurrent(context), deviceName);
}

unsigned CudaDevice::elementwiseGrid(long long n) const {
  // Enough blocks to fill the GPU; the kernels loop over the rest.
  long long blocks = (n + 255) / 256;
  return static_cast<unsigned>(
      std::max(1LL, std::min(blocks, 32LL * smCount)));
}

void CudaDevice::launchRaw(CUfunction fn, unsigned grid, unsigned block,
                           unsigned sharedBytes, void **params,
                           const std::string &where) {
  if (grid == 0)
    return; // an empty tensor: nothing to do
  SNNRT_CU(driver().cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, sharedBytes,
                                   cuStream, params, nullptr),
           where);
}

void CudaDevice::allowSharedMemory(CUfunction fn, unsigned bytes,
                                   const std::string &where) {
  auto [it, added] = sharedAllowed.try_emplace(fn, 0);
  if (it->second >= bytes)
    return;
  if (bytes > static_cast<unsigned>(sharedOptIn))
    throwError(where + ": the kernel needs " + std::to_string(bytes) +
               " bytes of shared memory per block, " + deviceDescription +
               " allows " + std::to_string(sharedOptIn) +
               "; compile the module for this GPU's architecture "
               "(snn-opt --snn-compile=\"chips=sm_" +
               std::to_string(ccMajor) + std::to_string(ccMinor) + "\")");
  SNNRT_CU(driver().cuFuncSetAttribute(
               fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
               static_cast<int>(bytes)),
           where);
  it->second = bytes;
}

void CudaDevice::gemm(const RowMajorGemm &g, const std::string &where) {
  snnrt::cuda::gemm(*blas, handle, g, where, opts.bf16);
}

void CudaDevice::copyToDevice(CUdeviceptr dst, const void *src,
                              std::size_t bytes, const std::string &where) {
  if (bytes)
    SNNRT_CU(driver().cuMemcpyHtoDAsync(dst, src, bytes, cuStream), where);
}

void CudaDevice::copyToHost(void *dst, CUdeviceptr src, std::size_t bytes,
                            const std::string &where) {
  if (!bytes)
    return;
  SNNRT_CU(driver().cuMemcpyDtoHAsync(dst, src, bytes, cuStream), where);
  // The caller reads `dst` next: wait for the copy (pageable memory).
  SNNRT_CU(driver().cuStreamSynchronize(cuStream), where);
}

void CudaDevice::copyOnDevice(CUdeviceptr dst, CUdeviceptr src,
                              std::size_t bytes, const std::string &where) {
  if (bytes && dst != src)
    SNNRT_CU(driver().cuMemcpyDtoDAsync(dst, src, bytes, cuStream), where);
}

void CudaDevice::zero(CUdeviceptr dst, std::size_t bytes,
                      const std::string &where) {
  fillBytes(dst, 0, bytes, where);
}

void CudaDevice::fillWords(CUdeviceptr dst, uint32_t word, std::size_t count,
                           const std::string &where) {
  if (count)
    SNNRT_CU(driver().cuMemsetD32Async(dst, word, count, cuStream), where);
}

void CudaDevice::fillBytes(CUdeviceptr dst, unsigned char value,
                           std::size_t bytes, const std::string &where) {
  if (bytes)
    SNNRT_CU(driver().cuMemsetD8Async(dst, value, bytes, cuStream), where);
}

void CudaDevice::synchronize(const std::string &where) {
  SNNRT_CU(driver().cuStreamSynchronize(cuStream), where);
}

CUdeviceptr CudaDevice::scratch(const std::string &key, std::size_t bytes,
                                const std::string &where) {
  Scratch &s = scratchBuffers[key];
  if (s.bytes >= bytes)
    return s.ptr;
  if (isCapturing)
    throwError(where + ": scratch buffer " + key +
               " grows while a CUDA graph is captured (an internal error; "
               "set SNNRT_CUDA_GRAPHS=0 to work around it)");
  if (s.ptr)
    retiredScratch.push_back(s.ptr);
  s.ptr = alloc.allocate(bytes, "scratch " + key + " of " + where);
  s.bytes = bytes;
  return s.ptr;
}

void CudaDevice::beginCapture(const std::string &where) {
  SNNRT_CU(driver().cuStreamBeginCapture(cuStream,
                                         CU_STREAM_CAPTURE_MODE_RELAXED),
           where);
  isCapturing = true;
}

CUgraphExec CudaDevice::endCapture(const std::string &where) {
  CUgraph graph = nullptr;
  SNNRT_CU(driver().cuStreamEndCapture(cuStream, &graph), where);
  isCapturing = false;
  CUgraphExec exec = nullptr;
  CUresult r = driver().cuGraphInstantiateWithFlags(&exec, graph, 0);
  driver().cuGraphDestroy(graph);
  check(r, "cuGraphInstantiateWithFlags", where);
  return exec;
}

void CudaDevice::abortCapture() {
  if (!isCapturing)
    return;
  isCapturing = false;
  CUgraph graph = nullptr;
  driver().cuStreamEndCapture(cuStream, &graph);
  if (graph)
    driver().cuGraphDestroy(graph);
}

void CudaDevice::bindBlasStream(const std::string &where) {
  SNNRT_CUBLAS(blas->cublasSetStream(handle, cuStream), where);
  // A fixed workspace: cuBLAS then allocates nothing while a graph is
  // captured. Set after the stream: cublasSetStream resets the workspace.
  constexpr std::size_t workspaceBytes = 32u << 20;
  CUdeviceptr workspace = scratch("cublas.workspace", workspaceBytes, where);
  SNNRT_CUBLAS(blas->cublasSetWorkspace(handle,
                                        reinterpret_cast<void *>(workspace),
                                        workspaceBytes),
               where);
}

void CudaDevice::runUnlessEventPath(CUdeviceptr decision,
                                    const std::function<void()> &dense,
                                    const std::string &where) {
  CUfunction setCondition =
      isCapturing && opts.conditional
          ? modules.findBuiltin("snnrt_set_dense_condition")
          : nullptr;
  if (!setCondition) {
    dense();
    return;
  }
  const DriverApi &d = driver();
  CUstreamCaptureStatus status;
  CUgraph graph = nullptr;
  const CUgraphNode *deps = nullptr;
  const CUgraphEdgeData *edges = nullptr;
  size_t numDeps = 0;
  SNNRT_CU(d.cuStreamGetCaptureInfo(cuStream, &status, nullptr, &graph, &deps,
                                    &edges, &numDeps),
           where);
  // Default 1 at every launch of the graph: the dense path, unless the
  // kernel below says otherwise.
  CUgraphConditionalHandle condition = 0;
  SNNRT_CU(d.cuGraphConditionalHandleCreate(&condition, graph, context, 1,
                                            CU_GRAPH_COND_ASSIGN_DEFAULT),
           where);
  launch(setCondition, 1, 32, 0, where, condition, decision);
  SNNRT_CU(d.cuStreamGetCaptureInfo(cuStream, &status, nullptr, &graph, &deps,
                                    &edges, &numDeps),
           where);
  CUgraphNodeParams params = {};
  params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  params.conditional.handle = condition;
  params.conditional.type = CU_GRAPH_COND_TYPE_IF;
  params.conditional.size = 1;
  params.conditional.ctx = context;
  CUgraphNode node = nullptr;
  SNNRT_CU(d.cuGraphAddNode(&node, graph, deps, edges, numDeps, &params),
           where);
  SNNRT_CU(d.cuStreamUpdateCaptureDependencies(
               cuStream, &node, nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES),
           where);
  // The body: `dense` captured on a second stream into the node's graph
  // (cuBLAS follows the device's stream while it runs).
  if (!bodyStream)
    SNNRT_CU(d.cuStreamCreate(&bodyStream, CU_STREAM_NON_BLOCKING), where);
  SNNRT_CU(d.cuStreamBeginCaptureToGraph(bodyStream,
                                         params.conditional.phGraph_out[0],
                                         nullptr, nullptr, 0,
                                         CU_STREAM_CAPTURE_MODE_RELAXED),
           where);
  CUstream mainStream = cuStream;
  auto useStream = [&](CUstream s) {
    cuStream = s;
    bindBlasStream(where);
  };
  useStream(bodyStream);
  try {
    dense();
  } catch (...) {
    useStream(mainStream);
    CUgraph body = nullptr;
    d.cuStreamEndCapture(bodyStream, &body);
    throw;
  }
  useStream(mainStream);
  CUgraph body = nullptr;
  SNNRT_CU(d.cuStreamEndCapture(bodyStream, &body), where);
}

void CudaDevice::disableConditionalNodes(const std::string &why) {
  opts.conditional = false;
  std::fprintf(stderr,
               "snnrt: %s: a CUDA graph with conditional nodes failed (%s); "
               "the dense GEMMs of event-driven layers now run every call\n",
               deviceName.c_str(), why.c_str());
}

void CudaDevice::replay(CUgraphExec graph, const std::string &where) {
  SNNRT_CU(driver().cuGraphLaunch(graph, cuStream), where);
}

void CudaDevice::destroyGraph(CUgraphExec graph) {
  if (graph)
    driver().cuGraphExecDestroy(graph);
}

void CudaDevice::setRunValues(float learningRate, int64_t step, uint64_t seed,
                              const std::string &where) {
  uint32_t words[4];
  std::memcpy(&words[0], &learningRate, sizeof(float));
  words[1] = static_cast<uint32_t>(step);
  words[2] = static_cast<uint32_t>(seed);
  words[3] = static_cast<uint32_t>(seed >> 32);
  CUdeviceptr base = runValues(where);
  // A memset takes its value by argument: nothing on the host must outlive
  // the call, and the stream orders it before the kernels that read it.
  for (int k = 0; k < 4; ++k)
    if (!runValuesWritten || words[k] != runValueWords[k])
      SNNRT_CU(driver().cuMemsetD32Async(base + 4 * k, words[k], 1, cuStream),
               where);
  std::memcpy(runValueWords, words, sizeof words);
  runValuesWritten = true;
}
