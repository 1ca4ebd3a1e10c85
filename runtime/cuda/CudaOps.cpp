//===- CudaOps.cpp - op dispatch and attribute accessors ------------------===//

#include "CudaOps.h"

#include "CudaError.h"

using namespace snnrt::cuda;
using nlohmann::json;

void snnrt::cuda::opError(const OpCall &call, const std::string &message) {
  throwError(call.where + ": " + message);
}

double snnrt::cuda::attrNumber(const OpCall &call, const char *name) {
  if (!call.op.contains(name) || !call.op[name].is_number())
    opError(call, std::string("missing number attribute '") + name + "'");
  return call.op[name].get<double>();
}

double snnrt::cuda::attrNumber(const OpCall &call, const char *name,
                               double fallback) {
  if (!call.op.contains(name) || call.op[name].is_null())
    return fallback;
  if (!call.op[name].is_number())
    opError(call, std::string("attribute '") + name + "' must be a number");
  return call.op[name].get<double>();
}

bool snnrt::cuda::attrBool(const OpCall &call, const char *name,
                           bool fallback) {
  if (!call.op.contains(name) || call.op[name].is_null())
    return fallback;
  if (!call.op[name].is_boolean())
    opError(call, std::string("attribute '") + name + "' must be true/false");
  return call.op[name].get<bool>();
}

std::vector<int64_t> snnrt::cuda::attrInts(const OpCall &call,
                                           const char *name, size_t size) {
  const json *v = call.op.contains(name) ? &call.op[name] : nullptr;
  bool ok = v && v->is_array() && v->size() == size;
  std::vector<int64_t> out;
  for (size_t i = 0; ok && i < size; ++i) {
    ok = (*v)[i].is_number_integer();
    if (ok)
      out.push_back((*v)[i].get<int64_t>());
  }
  if (!ok)
    opError(call, std::string("attribute '") + name + "' must be a list of " +
                      std::to_string(size) + " integers");
  return out;
}

void snnrt::cuda::expectArity(const OpCall &call, size_t inMin, size_t inMax,
                              size_t outMin, size_t outMax) {
  auto range = [](size_t lo, size_t hi) {
    return lo == hi ? std::to_string(lo)
                    : std::to_string(lo) + ".." + std::to_string(hi);
  };
  if (call.in.size() < inMin || call.in.size() > inMax ||
      call.out.size() < outMin || call.out.size() > outMax)
    opError(call, "expected " + range(inMin, inMax) + " inputs and " +
                      range(outMin, outMax) + " outputs, got " +
                      std::to_string(call.in.size()) + " and " +
                      std::to_string(call.out.size()));
}

void snnrt::cuda::launchKernelAt(CudaDevice &device, OpCall &call,
                                 const json &launch,
                                 std::vector<CUdeviceptr> pointers) {
  if (!launch.contains("kernel") || !launch["kernel"].is_string())
    opError(call, "a kernel launch needs \"kernel\" (a name)");
  auto integer = [&](const char *name) {
    if (!launch.contains(name) || !launch[name].is_number())
      opError(call, std::string("a kernel launch needs the number '") +
                        name + "'");
    return static_cast<long long>(launch[name].get<double>());
  };
  long long grid = integer("grid"), block = integer("block");
  if (grid <= 0 || grid > 0x7fffffffLL || block <= 0 || block > 1024)
    opError(call, "'grid' must be in [1, 2^31) and 'block' in [1, 1024]");
  if (!device.kernels().hasCompiled())
    opError(call, "the module has no cubin or PTX for this device; "
                  "compile it with target=cuda or target=all");
  CUfunction fn = device.kernels().compiledKernel(launch["kernel"], call.where);
  // Dynamic shared memory (event_linear_tiles' weight tile).
  long long shared = 0;
  if (launch.contains("shared_bytes")) {
    shared = integer("shared_bytes");
    if (shared < 0 || shared > (1LL << 30))
      opError(call, "'shared_bytes' must be in [0, 2^30]");
    if (shared)
      device.allowSharedMemory(fn, static_cast<unsigned>(shared), call.where);
  }
  std::vector<void *> params;
  for (CUdeviceptr &p : pointers)
    params.push_back(&p);
  params.push_back(nullptr);
  device.launchRaw(fn, static_cast<unsigned>(grid),
                   static_cast<unsigned>(block), static_cast<unsigned>(shared),
                   params.data(), call.where);
}

/// One launch of a generated kernel of the module's cubin/PTX
/// (docs/artifact-format.md, "Generated op kernels"): one pointer per
/// tensor of `args`, then the run values when the launch says `run_values`;
/// grid and block from the launch.
static void launchGeneratedKernel(CudaDevice &device, OpCall &call,
                                  const json &launch) {
  const json *args = launch.contains("args") ? &launch["args"] : nullptr;
  if (!args || !args->is_array())
    opError(call, "a kernel launch needs \"kernel\" (a name) and \"args\" "
                  "(tensor ids)");
  std::vector<CUdeviceptr> pointers;
  for (const json &id : *args) {
    if (!id.is_number_integer())
      opError(call, "\"args\" must be tensor ids");
    pointers.push_back(call.tensor(id.get<int64_t>()).ptr);
  }
  if (launch.value("run_values", false))
    pointers.push_back(device.runValues(call.where));
  // A kernel whose blocks accumulate into outputs (spike_density): all of
  // them (true) or the listed ones (a counting compact_rows' decision).
  auto zero = [&](const DeviceTensor &t) {
    device.zero(t.ptr, static_cast<std::size_t>(t.numel()) * (t.bf16 ? 2 : 4),
                call.where);
  };
  if (call.op.contains("zero_outputs") && call.op["zero_outputs"].is_array()) {
    for (const json &id : call.op["zero_outputs"]) {
      if (!id.is_number_integer() ||
          std::find(call.op["out"].begin(), call.op["out"].end(), id) ==
              call.op["out"].end())
        opError(call, "\"zero_outputs\" must be true/false or a list of the "
                      "op's outputs");
      zero(call.tensor(id.get<int64_t>()));
    }
  } else if (attrBool(call, "zero_outputs", false)) {
    for (const DeviceTensor &t : call.out)
      zero(t);
  }
  launchKernelAt(device, call, launch, std::move(pointers));
}

void snnrt::cuda::runOpLaunches(CudaDevice &device, OpCall &call) {
  if (!call.op.contains("launches")) {
    if (attrBool(call, "has_bias", false))
      opError(call, "a layer with a bias needs its \"launches\" (the "
                    "generated bias kernel); recompile the module with this "
                    "snn-opt");
    return;
  }
  const json &launches = call.op["launches"];
  if (!launches.is_array())
    opError(call, "\"launches\" must be a list of kernel launches");
  for (const json &launch : launches)
    launchGeneratedKernel(device, call, launch);
}

/// A `kernel` op: one launch (the op's own kernel, args, grid, block), or
/// the kernels of its `launches` in turn.
static bool runGeneratedKernel(CudaDevice &device, OpCall &call) {
  if (call.op.value("op", "") != "kernel")
    return false;
  std::string used;
  if (call.op.contains("launches")) {
    const json &launches = call.op["launches"];
    if (!launches.is_array() || launches.empty())
      opError(call, "\"launches\" must be a non-empty list of kernel launches");
    for (const json &launch : launches) {
      launchGeneratedKernel(device, call, launch);
      used += (used.empty() ? "" : "+") + launch["kernel"].get<std::string>();
    }
  } else {
    launchGeneratedKernel(device, call, call.op);
    used = call.op["kernel"].get<std::string>();
  }
  if (call.kernelUsed)
    *call.kernelUsed = used;
  return true;
}

void snnrt::cuda::runOp(CudaDevice &device, OpCall &call) {
  if (runGeneratedKernel(device, call) || runChainedNeuronOp(device, call) ||
      runNeuronOp(device, call) ||
      runLayerOp(device, call) || runTimeSplitOp(device, call))
    return;
  opError(call, "op kind '" + call.op.value("op", std::string("?")) +
                    "' is not supported by the CUDA backend (see "
                    "docs/artifact-format.md for the ops it runs)");
}
