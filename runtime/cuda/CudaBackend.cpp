//===- CudaBackend.cpp - a compiled module's programs on a GPU ------------===//

#include "CudaBackend.h"

#include <cstring>

#include "CudaModule.h"
#include "StreamTransport.h"
#include "snnrt/Error.h"

#include <fstream>

using namespace snnrt;
using nlohmann::json;

int snnrt::parseCudaDevice(const std::string &device) {
  if (device == "cuda")
    return 0;
  if (device.rfind("cuda:", 0) != 0)
    return -1;
  std::string n = device.substr(5);
  if (n.empty() || n.size() > 6 ||
      n.find_first_not_of("0123456789") != std::string::npos)
    throw Error("--device " + device +
                ": expected cpu, cuda or cuda:N with N a device number");
  return std::stoi(n);
}

int snnrt::cudaDeviceCount() {
  try {
    const cuda::DriverApi &d = cuda::loadDriver("cuda");
    int count = 0;
    return d.cuDeviceGetCount(&count) == CUDA_SUCCESS ? count : 0;
  } catch (const std::exception &) {
    return 0;
  }
}

/// The manifest as the device side reads it (the core keeps its parse; it
/// may have been edited in memory, e.g. to record layer state).
static json readManifest(const Module &m) {
  if (!m.manifest.is_null())
    return m.manifest;
  return Module::readManifest(m.dir);
}

CudaExecutor::CudaExecutor(Executor &host, const std::string &name,
                           bool profile)
    : host(host) {
  int ordinal = parseCudaDevice(name);
  if (ordinal < 0)
    throw Error("--device " + name + " is not a CUDA device");
  cuda::DeviceOptions options = cuda::DeviceOptions::fromEnvironment();
  options.profile = options.profile || profile;
  device = std::make_unique<cuda::CudaDevice>(ordinal, options);
  const TimeSplit &split = host.module().split;
  if (split.parts > 1) {
    // The split ops talk to the ranks; ranks that are threads of this
    // process move this device's buffers on its stream.
    Communicator *comm = host.communicator();
    if (comm)
      attachThreadTransport(*comm, cuda::createStreamTransport(*device));
    device->setTimeSplit({comm, split.rank, split.parts, split.steps,
                          split.begin(), split.length()});
  }
  // The device's own plan: its dtypes (bf16, u8) are narrower than the
  // host's 4-byte slots; 256-byte offsets suit every kernel and cuBLAS.
  MemoryPlanMode mode = memoryPlanMode();
  if (mode != MemoryPlanMode::Off)
    plan = planMemory(
        host.module(), [](const TensorInfo &t) { return t.bytes(); }, 256);
  module = std::make_unique<cuda::CudaModule>(
      *device, readManifest(host.module()), host.module().dir, plan,
      mode == MemoryPlanMode::Poison);
  // Planned tensors are scratch that the programs write before reading.
  for (const TensorInfo &t : host.module().tensors)
    if (t.aliasOf < 0 && !plan.planned(t.id))
      upload(t.id);
  synchronize();
}

CudaExecutor::~CudaExecutor() {
  // A thread rank's transport uses the device: back to host buffers.
  if (host.module().split.parts > 1 && host.communicator()) {
    try {
      synchronize();
    } catch (const std::exception &) {
    } // (a device error was reported where it happened)
    attachThreadTransport(*host.communicator(), createHostTransport());
  }
  module.reset(); // before the device it lives on
}

std::string CudaExecutor::describe() const { return device->description(); }

std::string CudaExecutor::arch() const {
  return "sm_" + std::to_string(device->computeMajor()) +
         std::to_string(device->computeMinor());
}

void CudaExecutor::upload(int id) {
  const TensorInfo &t = host.module().tensor(id);
  const float *slots = host.data(id);
  if (t.dtype == DType::U8) {
    std::vector<uint8_t> bytes(t.numel());
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<uint8_t>(slots[i]);
    module->upload(id, bytes.data(), bytes.size());
    return;
  }
  if (t.dtype == DType::BF16) { // the upper half of each float's bits
    std::vector<uint16_t> half(t.numel());
    for (size_t i = 0; i < half.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, &slots[i], sizeof bits);
      half[i] = static_cast<uint16_t>(bits >> 16);
    }
    module->upload(id, half.data(), half.size() * 2);
    return;
  }
  module->upload(id, slots, t.bytes());
}

void CudaExecutor::download(int id) {
  const TensorInfo &t = host.module().tensor(id);
  float *slots = host.data(id);
  if (t.dtype == DType::U8) {
    std::vector<uint8_t> bytes(t.numel());
    module->download(id, bytes.data(), bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i)
      slots[i] = bytes[i];
    return;
  }
  if (t.dtype == DType::BF16) {
    std::vector<uint16_t> half(t.numel());
    module->download(id, half.data(), half.size() * 2);
    for (size_t i = 0; i < half.size(); ++i) {
      uint32_t bits = uint32_t(half[i]) << 16;
      std::memcpy(&slots[i], &bits, sizeof bits);
    }
    return;
  }
  module->download(id, slots, t.bytes());
}

void CudaExecutor::downloadWindow(int id, size_t first, size_t count) {
  const TensorInfo &t = host.module().tensor(id);
  if (t.dtype != DType::F32 && t.dtype != DType::I32)
    return download(id);
  if (first + count > t.numel())
    throw Error("download of elements [" + std::to_string(first) + ", " +
                std::to_string(first + count) + ") of tensor '" + t.name +
                "' of " + std::to_string(t.numel()));
  module->downloadBytes(id, first * 4, host.data(id) + first, count * 4);
}

void CudaExecutor::uploadLabels(const std::vector<int32_t> &labels) {
  int id = host.module().labels;
  if (id < 0)
    throw Error(host.module().dir + ": the module has no labels tensor");
  module->upload(id, labels.data(), labels.size() * sizeof(int32_t));
}

void CudaExecutor::downloadState() {
  for (const TensorInfo &t : host.module().tensors)
    if (t.aliasOf < 0 && (t.role == "param" || t.role == "buffer" ||
                          t.role == "optimizer_state"))
      download(t.id);
}

void CudaExecutor::run(const std::string &name, float learningRate,
                       int64_t step, uint64_t seed) {
  cuda::StepValues values;
  values.learningRate = learningRate;
  values.step = step;
  values.seed = seed;
  module->run(name, values);
}

void CudaExecutor::synchronize() { module->synchronize(); }

std::size_t CudaExecutor::deviceBytes() const {
  const cuda::CachingAllocator &alloc = device->allocator();
  return alloc.bytesInUse() + alloc.bytesCached();
}

std::vector<std::string>
CudaExecutor::kernelsUsed(const std::string &name) const {
  return module->kernelsUsed(name);
}

std::string CudaExecutor::compiledKernels() const {
  return module->compiledKernels();
}

void *CudaExecutor::devicePointer(int id) {
  return reinterpret_cast<void *>(module->tensor(id).ptr);
}

void *CudaExecutor::stream() { return device->stream(); }

void CudaExecutor::enqueueAfterOps(
    const std::string &program, std::vector<size_t> afterOps,
    std::function<void(size_t, void *)> enqueue) {
  cuda::SideWork work;
  work.afterOps = std::move(afterOps);
  work.enqueue = [enqueue = std::move(enqueue)](size_t op, CUstream s) {
    enqueue(op, s);
  };
  module->setSideWork(program, std::move(work));
}
