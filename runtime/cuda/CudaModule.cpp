//===- CudaModule.cpp - a compiled module resident on a GPU ---------------===//

#include "CudaModule.h"

#include "CudaError.h"

#include <climits>

using namespace snnrt::cuda;
using nlohmann::json;

static std::size_t bytesPerElement(const std::string &dtype,
                                   const std::string &where) {
  if (dtype == "f32" || dtype == "i32" || dtype == "u32")
    return 4;
  if (dtype == "u8")
    return 1;
  if (dtype == "bf16")
    return 2;
  throwError(where + ": unknown dtype '" + dtype +
             "' (expected f32, i32, u8, bf16, u32)");
}

CudaModule::CudaModule(CudaDevice &device, const json &manifest,
                       std::string dir, const MemoryPlan &plan, bool poison)
    : device(device), moduleDir(std::move(dir)) {
  const std::string where = device.name() + ": " + moduleDir + "/manifest.json";
  if (!manifest.contains("tensors") || !manifest["tensors"].is_array())
    throwError(where + ": no \"tensors\" list");
  if (plan.arenaBytes) {
    arenaPtr =
        device.allocator().allocate(plan.arenaBytes, "memory-plan arena");
    device.fillBytes(arenaPtr, poison ? 0xFF : 0, plan.arenaBytes, where);
  }
  // Owners first, then aliases (which may name a later tensor).
  std::vector<const json *> aliases;
  for (const json &t : manifest["tensors"]) {
    if (!t.contains("id") || !t["id"].is_number_integer() ||
        !t.contains("shape") || !t["shape"].is_array())
      throwError(where + ": a tensor needs an integer \"id\" and a \"shape\"");
    if (t.contains("alias_of")) {
      aliases.push_back(&t);
      continue;
    }
    Storage s;
    s.tensor.shape = t["shape"].get<std::vector<int64_t>>();
    s.tensor.name = t.value("name", "%" + std::to_string(t["id"].get<int64_t>()));
    s.tensor.bf16 = t.value("dtype", "f32") == "bf16";
    s.bytes = s.tensor.numel() *
              bytesPerElement(t.value("dtype", "f32"),
                              where + ": tensor " + s.tensor.name);
    int64_t id = t["id"].get<int64_t>();
    if (id <= INT_MAX && plan.planned(int(id))) {
      size_t offset = size_t(plan.offset[id]);
      if (offset + s.bytes > plan.arenaBytes)
        throwError(where + ": tensor " + s.tensor.name +
                   " lies outside the memory-plan arena");
      s.tensor.ptr = arenaPtr + offset;
      tensors[t["id"].get<int64_t>()] = s;
      continue;
    }
    s.tensor.ptr = device.allocator().allocate(s.bytes, s.tensor.name);
    s.owner = true;
    tensors[t["id"].get<int64_t>()] = s;
    // Defined contents until the runtime initializes them.
    device.zero(s.tensor.ptr, s.bytes, where);
  }
  for (const json *t : aliases) {
    int64_t target = (*t)["alias_of"].get<int64_t>();
    auto it = tensors.find(target);
    if (it == tensors.end())
      throwError(where + ": tensor " + t->value("name", std::string("?")) +
                 " is an alias of " + std::to_string(target) +
                 ", which is not a tensor of its own");
    Storage s = it->second;
    s.owner = false;
    sharedStorage.insert(target);
    sharedStorage.insert((*t)["id"].get<int64_t>());
    s.tensor.shape = (*t)["shape"].get<std::vector<int64_t>>();
    s.tensor.name = t->value("name", s.tensor.name);
    if (s.tensor.numel() != it->second.tensor.numel())
      throwError(where + ": alias " + s.tensor.name + " has " +
                 std::to_string(s.tensor.numel()) + " elements, its target " +
                 it->second.tensor.name + " " +
                 std::to_string(it->second.tensor.numel()));
    tensors[(*t)["id"].get<int64_t>()] = s;
  }
  if (manifest.contains("kernels") && manifest["kernels"].is_object()) {
    std::map<std::string, std::string> files;
    for (auto &[key, value] : manifest["kernels"].items())
      if (value.is_string())
        files[key] = value.get<std::string>();
    kernelFile = device.kernels().loadCompiled(
        moduleDir, files, device.computeMajor(), device.computeMinor(), where);
  }
  programSources = manifest.value("programs", json::object());
}

CudaModule::~CudaModule() {
  programs.clear();
  try {
    device.synchronize(device.name());
  } catch (...) {
    // Teardown: the memory is returned to the cache regardless.
  }
  for (auto &[id, s] : tensors)
    if (s.owner)
      device.allocator().free(s.tensor.ptr);
  if (arenaPtr)
    device.allocator().free(arenaPtr);
}

const DeviceTensor &CudaModule::tensor(int64_t id) const {
  auto it = tensors.find(id);
  if (it == tensors.end())
    throwError(device.name() + ": the manifest has no tensor " +
               std::to_string(id));
  return it->second.tensor;
}

std::size_t CudaModule::bytes(int64_t id) const {
  tensor(id);
  return tensors.at(id).bytes;
}

void CudaModule::upload(int64_t id, const void *data, std::size_t n) {
  const DeviceTensor &t = tensor(id);
  if (n != bytes(id))
    throwError(device.name() + ": upload of " + std::to_string(n) +
               " bytes into tensor " + t.name + " of " +
               std::to_string(bytes(id)) + " bytes");
  device.copyToDevice(t.ptr, data, n, device.name() + ": upload " + t.name);
}

void CudaModule::downloadBytes(int64_t id, std::size_t offset, void *data,
                               std::size_t n) {
  const DeviceTensor &t = tensor(id);
  if (offset + n > bytes(id))
    throwError(device.name() + ": download of bytes [" +
               std::to_string(offset) + ", " + std::to_string(offset + n) +
               ") from tensor " + t.name + " of " + std::to_string(bytes(id)) +
               " bytes");
  device.copyToHost(data, t.ptr + offset, n,
                    device.name() + ": download " + t.name);
}

void CudaModule::download(int64_t id, void *data, std::size_t n) {
  const DeviceTensor &t = tensor(id);
  if (n != bytes(id))
    throwError(device.name() + ": download of " + std::to_string(n) +
               " bytes from tensor " + t.name + " of " +
               std::to_string(bytes(id)) + " bytes");
  device.copyToHost(data, t.ptr, n, device.name() + ": download " + t.name);
}

void CudaModule::fillZero(int64_t id) {
  device.zero(tensor(id).ptr, bytes(id),
              device.name() + ": zero " + tensor(id).name);
}

bool CudaModule::hasProgram(const std::string &name) const {
  return programSources.contains(name);
}

void CudaModule::run(const std::string &name, const StepValues &values) {
  auto it = programs.find(name);
  if (it == programs.end()) {
    if (!hasProgram(name))
      throwError(device.name() + ": the module has no program '" + name +
                 "' (recompile it with training enabled for train programs)");
    auto program = std::make_unique<CudaProgram>(
        device, name, programSources[name],
        [this](int64_t id) { return tensor(id); },
        [this](int64_t id) { return sharedStorage.count(id) > 0; });
    auto work = sideWork.find(name);
    if (work != sideWork.end())
      program->setSideWork(std::move(work->second));
    it = programs.emplace(name, std::move(program)).first;
  }
  it->second->run(values);
}

void CudaModule::setSideWork(const std::string &name, SideWork work) {
  if (!hasProgram(name))
    throwError(device.name() + ": the module has no program '" + name + "'");
  auto it = programs.find(name);
  if (it != programs.end())
    it->second->setSideWork(std::move(work));
  else
    sideWork[name] = std::move(work);
}

std::vector<std::string> CudaModule::kernelsUsed(const std::string &name) const {
  auto it = programs.find(name);
  return it == programs.end() ? std::vector<std::string>{}
                              : it->second->kernelsUsed();
}

void CudaModule::synchronize() { device.synchronize(device.name()); }
