//===- StreamTransport.cpp - the threads backend on one GPU ---------------===//

#include "StreamTransport.h"
#include "CudaError.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace snnrt::cuda {

namespace {

/// Device buffers of finished parcels, for the sender's next ones.
class ParcelPool {
public:
  struct Block {
    CUdeviceptr ptr = 0;
    std::size_t capacity = 0;
    CUevent ready = nullptr;
    std::vector<CUevent> reads; ///< recorded after each reader's copy
  };
  ~ParcelPool() {
    // A peer's stream may still be copying from a block: wait for its
    // reads before the memory goes back.
    const DriverApi &d = driver();
    for (Block &b : blocks) {
      for (CUevent e : b.reads)
        d.cuEventSynchronize(e);
      forget(b);
      d.cuMemFree(b.ptr);
    }
  }
  /// A block of at least `bytes` whose readers are done (or a new one).
  Block take(std::size_t bytes, const std::string &where) {
    const DriverApi &d = driver();
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (size_t i = 0; i < blocks.size(); ++i) {
        Block &b = blocks[i];
        if (b.capacity < bytes || !finished(b))
          continue;
        Block mine = std::move(b);
        blocks.erase(blocks.begin() + static_cast<long>(i));
        forget(mine);
        return mine;
      }
    }
    Block b;
    b.capacity = std::max<std::size_t>(bytes, 256);
    SNNRT_CU(d.cuMemAlloc(&b.ptr, b.capacity), where);
    return b;
  }
  void give(Block b) {
    std::lock_guard<std::mutex> lock(mutex);
    blocks.push_back(std::move(b));
  }

private:
  static bool finished(const Block &b) {
    if (b.ready && driver().cuEventQuery(b.ready) != CUDA_SUCCESS)
      return false;
    for (CUevent e : b.reads)
      if (driver().cuEventQuery(e) != CUDA_SUCCESS)
        return false;
    return true;
  }
  static void forget(Block &b) {
    for (CUevent e : b.reads)
      driver().cuEventDestroy(e);
    b.reads.clear();
    if (b.ready)
      driver().cuEventDestroy(b.ready);
    b.ready = nullptr;
  }
  std::mutex mutex;
  std::vector<ParcelPool::Block> blocks;
};

struct DeviceParcel : Parcel {
  std::shared_ptr<ParcelPool> pool;
  ParcelPool::Block block;
  std::mutex mutex; ///< readers on several threads (collectives)
  ~DeviceParcel() override { pool->give(std::move(block)); }
  void readBy(CUstream stream, const std::string &where) {
    CUevent done = nullptr;
    SNNRT_CU(driver().cuEventCreate(&done, CU_EVENT_DISABLE_TIMING), where);
    SNNRT_CU(driver().cuEventRecord(done, stream), where);
    std::lock_guard<std::mutex> lock(mutex);
    block.reads.push_back(done);
  }
};

class StreamTransport : public ThreadTransport {
public:
  explicit StreamTransport(CudaDevice &device)
      : device(device), pool(std::make_shared<ParcelPool>()),
        where(device.name() + " (threads backend)") {}
  bool deviceBuffers() const override { return true; }

  std::shared_ptr<Parcel> pack(const void *src, size_t bytes,
                               void *stream) override {
    const DriverApi &d = driver();
    auto p = std::make_shared<DeviceParcel>();
    p->pool = pool;
    p->bytes = bytes;
    p->block = pool->take(bytes, where);
    CUstream s = checked(stream);
    if (bytes)
      SNNRT_CU(d.cuMemcpyDtoDAsync(p->block.ptr, pointer(src), bytes, s), where);
    SNNRT_CU(d.cuEventCreate(&p->block.ready, CU_EVENT_DISABLE_TIMING), where);
    SNNRT_CU(d.cuEventRecord(p->block.ready, s), where);
    return p;
  }
  void unpack(Parcel &parcel, void *dst, void *stream) override {
    auto &p = static_cast<DeviceParcel &>(parcel);
    CUstream s = checked(stream);
    const DriverApi &d = driver();
    SNNRT_CU(d.cuStreamWaitEvent(s, p.block.ready, 0), where);
    if (p.bytes)
      SNNRT_CU(d.cuMemcpyDtoDAsync(pointer(dst), p.block.ptr, p.bytes, s),
               where);
    p.readBy(s, where);
  }
  void accumulate(Parcel &parcel, float *dst, size_t count,
                  void *stream) override {
    auto &p = static_cast<DeviceParcel &>(parcel);
    CUstream s = checked(stream);
    SNNRT_CU(driver().cuStreamWaitEvent(s, p.block.ready, 0), where);
    if (count)
      device.launchElementwise("snnrt_accumulate",
                               static_cast<long long>(count), where,
                               pointer(dst), p.block.ptr,
                               static_cast<long long>(count));
    p.readBy(s, where);
  }

private:
  static CUdeviceptr pointer(const void *p) {
    return reinterpret_cast<CUdeviceptr>(p);
  }
  /// The device's stream: the kernels of accumulate run there.
  CUstream checked(void *stream) const {
    CUstream s = stream ? static_cast<CUstream>(stream) : device.stream();
    if (s != device.stream())
      throwError(where + ": a transfer on another stream than the device's");
    return s;
  }
  CudaDevice &device;
  std::shared_ptr<ParcelPool> pool;
  std::string where;
};

} // namespace

std::unique_ptr<ThreadTransport> createStreamTransport(CudaDevice &device) {
  return std::make_unique<StreamTransport>(device);
}

} // namespace snnrt::cuda
