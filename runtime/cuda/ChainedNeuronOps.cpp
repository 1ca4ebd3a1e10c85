//===- ChainedNeuronOps.cpp - neuron layers split in time, on a GPU -------===//
//
// A neuron layer of a module split in time (`"chained_states": n`) starts
// its scan from the state the previous rank handed over and gives its final
// state on (docs/artifact-format.md, "Chained state"). It runs only as its
// generated kernel, whose arguments are those of the layer's kernel ABI,
// then the states in, the states out, then the tensor parameters: the same
// order as the CPU runtime's (runtime/lib/CpuNeuron.cpp, callChained).
//
//===----------------------------------------------------------------------===//

#include "CudaOps.h"

using namespace snnrt::cuda;
using nlohmann::json;

namespace {

/// The generated kernel `which` ("fwd" or "bwd") of the op, or an error.
CUfunction chainedKernel(CudaDevice &device, OpCall &call, const char *which,
                         unsigned &grid, unsigned &block) {
  const json *k = call.op.contains("kernel") ? &call.op["kernel"] : nullptr;
  if (!device.kernels().hasCompiled() || !k || !k->is_object() ||
      !k->contains(which) || !(*k)[which].is_string())
    opError(call, "a neuron layer split in time runs only as its generated "
                  "kernel, which this module lacks for this device; "
                  "recompile it with --snn-compile=\"target=cuda\" (or all)");
  long long b = k->value("block", 0LL), g = k->value("grid", 0LL);
  if (b <= 0 || b > 1024 || g <= 0 || g > 0x7fffffffLL)
    opError(call, "'kernel' needs block in 1..1024 and grid > 0");
  grid = static_cast<unsigned>(g);
  block = static_cast<unsigned>(b);
  std::string name = (*k)[which].get<std::string>();
  if (call.kernelUsed)
    *call.kernelUsed = "compiled kernel " + name;
  return device.kernels().compiledKernel(name, call.where);
}

} // namespace

bool snnrt::cuda::runChainedNeuronOp(CudaDevice &device, OpCall &call) {
  std::string kind = call.op.value("op", std::string());
  int64_t states = call.op.value("chained_states", int64_t(0));
  if ((kind != "neuron" && kind != "neuron_bwd") || states == 0)
    return false;
  bool cuba = call.op.value("model", std::string()) == "cuba_lif";
  size_t n = static_cast<size_t>(states);
  if (states != (cuba ? 2 : 1) || call.in.size() <= n || call.out.size() <= n)
    opError(call, "'chained_states' must be the layer's number of state "
                  "tensors (" + std::to_string(cuba ? 2 : 1) +
                  "), the last inputs and outputs");
  if (call.op.value("model", std::string()) == "plif" ||
      attrBool(call, "record", false) || attrBool(call, "accumulate", false) ||
      call.op.contains("pool"))
    opError(call, "a neuron layer split in time has no plif, --record, "
                  "pooling or accumulated gradient");
  const DeviceTensor &lead = call.in[0];
  if (lead.shape.empty() || lead.shape[0] <= 0)
    opError(call, "'" + lead.name + "' has no leading time dimension");
  int64_t perStep = lead.numel() / lead.shape[0];
  size_t firstIn = call.in.size() - n, firstOut = call.out.size() - n;
  for (size_t i = 0; i < n; ++i)
    for (const DeviceTensor *t : {&call.in[firstIn + i], &call.out[firstOut + i]})
      if (t->numel() != perStep)
        opError(call, "chained state " + t->name + " has " +
                          std::to_string(t->numel()) +
                          " elements; expected one per neuron (" +
                          std::to_string(perStep) + ")");
  bool forward = kind == "neuron";
  unsigned grid = 0, block = 0;
  CUfunction fn = chainedKernel(device, call, forward ? "fwd" : "bwd", grid,
                                block);
  // The ABI's tensors: forward x, then S, H (, I); backward gS, H, gX (, I).
  std::vector<CUdeviceptr> args;
  size_t params = 1;
  if (forward) {
    args.push_back(lead.ptr);
    for (size_t i = 0; i < firstOut; ++i)
      args.push_back(call.out[i].ptr);
  } else {
    if (firstOut != 1 || firstIn < (cuba ? 3u : 2u))
      opError(call, "the backward of a chained layer takes gS, H" +
                        std::string(cuba ? ", I" : "") +
                        " and gives gX before the states");
    args = {lead.ptr, call.in[1].ptr, call.out[0].ptr};
    if (cuba)
      args.push_back(call.in[2].ptr);
    params = cuba ? 3 : 2;
  }
  for (size_t i = 0; i < n; ++i)
    args.push_back(call.in[firstIn + i].ptr);
  for (size_t i = 0; i < n; ++i)
    args.push_back(call.out[firstOut + i].ptr);
  for (size_t i = params; i < firstIn; ++i)
    args.push_back(call.in[i].ptr);
  std::vector<void *> pointers;
  for (CUdeviceptr &p : args)
    pointers.push_back(&p);
  pointers.push_back(nullptr);
  device.launchRaw(fn, grid, block, 0, pointers.data(), call.where);
  return true;
}
