//===- NcclCommunicator.cpp - the NCCL backend of Communicator ------------===//

#include "NcclCommunicator.h"
#include "CudaDriver.h"
#include "NcclApi.h"

#include "snnrt/Error.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>

namespace snnrt {

namespace nccl {

const Api &load() {
  static Api api;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) {
      error = "cannot load libnccl.so.2 (install NCCL, or start the ranks "
              "with --comm mpi/tcp: GPU tensors are then staged through the "
              "host)";
      return;
    }
#define SNNRT_RESOLVE(name)                                                    \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, #name));          \
  if (!api.name) {                                                             \
    error = "libnccl.so.2 has no " #name ": NCCL 2.19 or newer is needed";    \
    return;                                                                    \
  }
    SNNRT_RESOLVE(ncclGetVersion)
    SNNRT_RESOLVE(ncclGetUniqueId)
    SNNRT_RESOLVE(ncclCommInitRank)
    SNNRT_RESOLVE(ncclCommDestroy)
    SNNRT_RESOLVE(ncclCommAbort)
    SNNRT_RESOLVE(ncclCommGetAsyncError)
    SNNRT_RESOLVE(ncclGetErrorString)
    SNNRT_RESOLVE(ncclGetLastError)
    SNNRT_RESOLVE(ncclAllReduce)
    SNNRT_RESOLVE(ncclBroadcast)
    SNNRT_RESOLVE(ncclSend)
    SNNRT_RESOLVE(ncclRecv)
    SNNRT_RESOLVE(ncclGroupStart)
    SNNRT_RESOLVE(ncclGroupEnd)
#undef SNNRT_RESOLVE
  });
  if (!error.empty())
    throw Error(error);
  return api;
}

} // namespace nccl

namespace {

using Clock = std::chrono::steady_clock;

class NcclCommunicator : public Communicator {
public:
  NcclCommunicator(const CommOptions &options,
                   std::unique_ptr<Communicator> hostRanks)
      : api(nccl::load()), options(options), hostComm(std::move(hostRanks)),
        timeout(options.timeoutSeconds) {
    const std::string where = "cuda:" + std::to_string(options.cudaDevice);
    const cuda::DriverApi &cu = cuda::loadDriver(where);
    // NCCL works in the current context: the device's primary context, the
    // one the CUDA backend runs the programs in.
    CUdevice dev = 0;
    SNNRT_CU(cu.cuDeviceGet(&dev, options.cudaDevice), where);
    SNNRT_CU(cu.cuDevicePrimaryCtxRetain(&context, dev), where);
    SNNRT_CU(cu.cuCtxSetCurrent(context), where);
    nccl::UniqueId id{};
    if (hostComm->rank() == 0)
      check(api.ncclGetUniqueId(&id), "ncclGetUniqueId");
    hostComm->broadcast(&id, sizeof id, 0);
    check(api.ncclCommInitRank(&comm, hostComm->size(), id, hostComm->rank()),
          "ncclCommInitRank");
    watchdog = std::thread([this] { watch(); });
  }
  ~NcclCommunicator() override {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    if (watchdog.joinable())
      watchdog.join();
    if (comm)
      api.ncclCommDestroy(comm);
    for (auto &pending : inFlight)
      cuda::driver().cuEventDestroy(pending.event);
  }
  int rank() const override { return hostComm->rank(); }
  int size() const override { return hostComm->size(); }
  std::string backendName() const override { return "nccl"; }
  bool deviceBuffers() const override { return true; }
  Communicator &host() override { return *hostComm; }

  void allReduceSum(float *data, size_t count, void *stream) override {
    check(api.ncclAllReduce(data, data, count, nccl::Float32, nccl::Sum, comm,
                            stream),
          "ncclAllReduce");
    enqueued(stream);
  }
  void allReduceAverage(float *data, size_t count, void *stream) override {
    check(api.ncclAllReduce(data, data, count, nccl::Float32, nccl::Avg, comm,
                            stream),
          "ncclAllReduce");
    enqueued(stream);
  }
  void broadcast(void *data, size_t bytes, int root, void *stream) override {
    check(api.ncclBroadcast(data, data, bytes, nccl::Uint8, root, comm, stream),
          "ncclBroadcast");
    enqueued(stream);
  }
  void send(const void *data, size_t bytes, int peer, void *stream) override {
    check(api.ncclSend(data, bytes, nccl::Uint8, peer, comm, stream), "ncclSend");
    enqueued(stream);
  }
  void recv(void *data, size_t bytes, int peer, void *stream) override {
    check(api.ncclRecv(data, bytes, nccl::Uint8, peer, comm, stream), "ncclRecv");
    enqueued(stream);
  }
  void groupStart() override {
    check(api.ncclGroupStart(), "ncclGroupStart");
    ++groupDepth;
  }
  void groupEnd() override {
    check(api.ncclGroupEnd(), "ncclGroupEnd");
    if (--groupDepth == 0 && groupStream)
      track(groupStream);
    if (groupDepth == 0)
      groupStream = nullptr;
  }
  void watchStream(void *stream) override { track(stream); }
  /// A communicator of its own for the group: the host ranks split first
  /// (MPI_Comm_split or a view over TCP), then the group's rank 0 makes a
  /// unique id that goes over the host group to a new ncclCommInitRank
  /// (works with every NCCL 2.x, unlike ncclCommSplit).
  std::unique_ptr<Communicator> split(int color, int key) override {
    std::unique_ptr<Communicator> hostGroup = hostComm->split(color, key);
    return std::make_unique<NcclCommunicator>(options, std::move(hostGroup));
  }
  void barrier() override { hostComm->barrier(); }
  [[noreturn]] void abort(const std::string &why) override {
    // ncclCommAbort ends this rank's kernels; the host ranks end the job.
    if (comm)
      api.ncclCommAbort(comm);
    hostComm->abort(why);
    std::_Exit(1); // the host backends' abort does not return
  }

private:
  struct Pending {
    CUevent event;
    Clock::time_point since;
  };

  void check(nccl::Result r, const char *call) {
    if (r == nccl::Success || r == nccl::InProgress)
      return;
    std::string last = comm ? api.ncclGetLastError(comm) : "";
    throw Error(std::string(call) + " failed on rank " +
                std::to_string(hostComm->rank()) + ": " +
                api.ncclGetErrorString(r) + (last.empty() ? "" : " (" + last + ")"));
  }
  /// Watches the stream once the collective (or its group) is enqueued.
  void enqueued(void *stream) {
    if (groupDepth > 0) {
      groupStream = stream;
      return;
    }
    track(stream);
  }
  void track(void *stream) {
    if (timeout <= 0)
      return;
    const cuda::DriverApi &cu = cuda::driver();
    // A stream being captured into a graph: its event would belong to the
    // capture (and querying it would break it); the graph's launches are
    // watched instead (watchStream).
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    SNNRT_CU(cu.cuStreamIsCapturing(static_cast<CUstream>(stream), &capture),
             "nccl watchdog");
    if (capture != CU_STREAM_CAPTURE_STATUS_NONE)
      return;
    CUevent event = nullptr;
    SNNRT_CU(cu.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING), "nccl watchdog");
    SNNRT_CU(cu.cuEventRecord(event, static_cast<CUstream>(stream)),
             "nccl watchdog");
    std::lock_guard<std::mutex> lock(mutex);
    inFlight.push_back({event, Clock::now()});
    wake.notify_all();
  }
  /// Every 50 ms: NCCL's asynchronous error, and the oldest collective's
  /// event against the timeout.
  void watch() {
    const cuda::DriverApi &cu = cuda::driver();
    cu.cuCtxSetCurrent(context);
    std::unique_lock<std::mutex> lock(mutex);
    while (!stopping) {
      wake.wait_for(lock, std::chrono::milliseconds(50));
      if (stopping)
        break;
      nccl::Result async = nccl::Success;
      api.ncclCommGetAsyncError(comm, &async);
      if (async != nccl::Success && async != nccl::InProgress)
        fail(std::string("NCCL reported an asynchronous error: ") +
             api.ncclGetErrorString(async));
      while (!inFlight.empty()) {
        Pending &front = inFlight.front();
        CUresult r = cu.cuEventQuery(front.event);
        if (r == CUDA_SUCCESS) {
          cu.cuEventDestroy(front.event);
          inFlight.pop_front();
          continue;
        }
        if (r != CUDA_ERROR_NOT_READY)
          fail("the GPU failed during a collective: " + cuda::describe(r));
        double waited =
            std::chrono::duration<double>(Clock::now() - front.since).count();
        if (waited > timeout) {
          char msg[200];
          std::snprintf(msg, sizeof msg,
                        "an NCCL collective did not finish within %g s "
                        "(--comm-timeout): a peer rank stopped, failed or "
                        "hangs; ending the job",
                        timeout);
          fail(msg);
        }
        break;
      }
    }
  }
  [[noreturn]] void fail(const std::string &why) { abort(why); }

  const nccl::Api &api;
  CommOptions options;
  std::unique_ptr<Communicator> hostComm;
  double timeout;
  CUcontext context = nullptr;
  nccl::Comm comm = nullptr;
  int groupDepth = 0;
  void *groupStream = nullptr;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::deque<Pending> inFlight;
  std::thread watchdog;
};

} // namespace

std::unique_ptr<Communicator>
createNcclCommunicator(const JobEnvironment &job, const CommOptions &options,
                       std::unique_ptr<Communicator> &host) {
  (void)job;
  nccl::load(); // throws with `host` left to the caller
  return std::make_unique<NcclCommunicator>(options, std::move(host));
}

} // namespace snnrt
