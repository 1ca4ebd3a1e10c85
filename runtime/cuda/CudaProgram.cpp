//===- CudaProgram.cpp - one manifest program on a CUDA device ------------===//

#include "CudaProgram.h"
#include "CudaDriver.h"
#include "CudaError.h"

#include <algorithm>
#include <iostream>
#include <unordered_map>

using namespace snnrt::cuda;
using nlohmann::json;

/// Whether an op of `ops` (or of a time loop's body) has the attribute
/// `key` set to true.
static bool hasOpWith(const json &ops, const char *key) {
  for (const json &op : ops) {
    if (op.is_object() && op.value(key, false))
      return true;
    // A kernel op's launches.
    if (op.is_object() && op.contains("launches") &&
        op["launches"].is_array() && hasOpWith(op["launches"], key))
      return true;
    if (op.is_object() && op.contains("body") && op["body"].is_array() &&
        hasOpWith(op["body"], key))
      return true;
  }
  return false;
}

/// Whether `ops` talk to the other ranks of a time split.
static bool hasTransfers(const json &ops) {
  for (const json &op : ops) {
    std::string kind = op.is_object() ? op.value("op", "") : "";
    if (kind == "send" || kind == "recv" || kind == "all_reduce_sum" ||
        kind == "gather_time")
      return true;
  }
  return false;
}

CudaProgram::CudaProgram(CudaDevice &device, std::string name, json ops,
                         std::function<DeviceTensor(int64_t)> resolve,
                         std::function<bool(int64_t)> sharesStorage)
    : device(device), name(std::move(name)), ops(std::move(ops)),
      resolve(std::move(resolve)), sharesStorage(std::move(sharesStorage)) {
  if (!this->sharesStorage)
    this->sharesStorage = [](int64_t) { return true; };
  if (!this->ops.is_array())
    throwError(device.name() + ": program '" + this->name +
               "' is not a list of ops");
  // Kernel arguments are the same at every step: what changes (learning
  // rate, step, seed) is read from the run values.
  capturable = device.options().graphs && !device.options().profile;
  // The transfers of a time split run op by op: each send checks its tag
  // with the peer on the host, and the threads backend's copies wait for
  // events of other streams, which a graph cannot hold.
  if (device.timeSplit() && hasTransfers(this->ops))
    capturable = false;
  runValues = hasOpWith(this->ops, "run_values");
  kernels.resize(this->ops.size());
}

CudaProgram::~CudaProgram() {
  device.destroyGraph(graph);
  for (CUevent e : sideEvents)
    driver().cuEventDestroy(e);
  if (sideStream)
    driver().cuStreamDestroy(sideStream);
}

void CudaProgram::setSideWork(SideWork work) {
  const std::string where = device.name() + ": program '" + name + "'";
  const DriverApi &d = driver();
  device.destroyGraph(graph);
  graph = nullptr;
  runs = 0;
  for (CUevent e : sideEvents)
    d.cuEventDestroy(e);
  sideEvents.clear();
  for (size_t op : work.afterOps)
    if (op >= ops.size())
      throwError(where + " has " + std::to_string(ops.size()) +
                 " ops: no side work after op #" + std::to_string(op));
  side = std::move(work);
  if (side.afterOps.empty())
    return;
  if (!sideStream)
    SNNRT_CU(d.cuStreamCreate(&sideStream, CU_STREAM_NON_BLOCKING), where);
  sideEvents.resize(side.afterOps.size() + 1);
  for (CUevent &e : sideEvents)
    SNNRT_CU(d.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), where);
}

static std::string describeOp(const std::string &program, size_t index,
                              const json &op,
                              const std::vector<DeviceTensor> &in,
                              const std::vector<DeviceTensor> &out) {
  std::string s = program + " op #" + std::to_string(index) + " '" +
                  op.value("op", std::string("?")) + "' (in:";
  for (size_t i = 0; i < in.size(); ++i)
    s += (i ? ", " : " ") + in[i].name;
  s += "; out:";
  for (size_t i = 0; i < out.size(); ++i)
    s += (i ? ", " : " ") + out[i].name;
  return s + ")";
}

void CudaProgram::runEagerly(const StepValues &values) {
  runOps(ops, name, values, &kernels, resolve);
  if (side.afterOps.empty())
    return;
  // The side stream joins the program's stream (also ends a capture's fork).
  const std::string where = device.name() + ": program '" + name + "'";
  const DriverApi &d = driver();
  SNNRT_CU(d.cuEventRecord(sideEvents.back(), sideStream), where);
  SNNRT_CU(d.cuStreamWaitEvent(device.stream(), sideEvents.back(), 0), where);
}

void CudaProgram::runOps(const json &list, const std::string &prefix,
                         const StepValues &values,
                         std::vector<std::string> *used,
                         const Resolver &resolver) {
  const bool top = &list == &ops;
  size_t nextSide = 0;
  auto enqueueSide = [&](size_t i) {
    for (; top && nextSide < side.afterOps.size() &&
           side.afterOps[nextSide] <= i;
         ++nextSide) {
      const std::string where = device.name() + ": " + prefix +
                                " side work after op #" + std::to_string(i);
      const DriverApi &d = driver();
      SNNRT_CU(d.cuEventRecord(sideEvents[nextSide], device.stream()), where);
      SNNRT_CU(d.cuStreamWaitEvent(sideStream, sideEvents[nextSide], 0), where);
      side.enqueue(side.afterOps[nextSide], sideStream);
    }
  };
  for (size_t i = 0; i < list.size(); enqueueSide(i), ++i) {
    const json &op = list[i];
    if (!op.is_object() || !op.contains("in") || !op["in"].is_array() ||
        !op.contains("out") || !op["out"].is_array())
      throwError(device.name() + ": " + prefix + " op #" + std::to_string(i) +
                 ": an op needs \"op\", \"in\" and \"out\" lists");
    if (op.value("op", "") == "time_loop") {
      runTimeLoop(op, prefix + " op #" + std::to_string(i) + " 'time_loop'",
                  values, resolver);
      continue; // (the loop's increment enqueues op i's side work)
    }
    OpCall call{op, {}, {}, resolver, ""};
    for (const json &id : op["in"])
      call.in.push_back(resolver(id.get<int64_t>()));
    for (const json &id : op["out"])
      call.out.push_back(resolver(id.get<int64_t>()));
    call.where =
        device.name() + ": " + describeOp(prefix, i, op, call.in, call.out);
    call.kernelUsed = used && i < used->size() ? &(*used)[i] : nullptr;
    if (!device.options().profile) {
      runOp(device, call);
      continue; // (the loop's increment enqueues op i's side work)
    }
    // Profiling: the op alone between two events (one wait per op).
    const DriverApi &d = driver();
    CUevent start = nullptr, stop = nullptr;
    SNNRT_CU(d.cuEventCreate(&start, 0), call.where);
    SNNRT_CU(d.cuEventCreate(&stop, 0), call.where);
    SNNRT_CU(d.cuEventRecord(start, device.stream()), call.where);
    runOp(device, call);
    SNNRT_CU(d.cuEventRecord(stop, device.stream()), call.where);
    SNNRT_CU(d.cuEventSynchronize(stop), call.where);
    float ms = 0;
    SNNRT_CU(d.cuEventElapsedTime(&ms, start, stop), call.where);
    d.cuEventDestroy(start);
    d.cuEventDestroy(stop);
    device.addProfile(name, profileKey(op.value("op", std::string("?")), op),
                      ms);
  }
}

void CudaProgram::runTimeLoop(const json &op, const std::string &label,
                              const StepValues &values,
                              const Resolver &resolver) {
  const std::string where = device.name() + ": " + label;
  auto ids = [&](const char *key) {
    if (!op.contains(key) || !op[key].is_array())
      throwError(where + ": needs the list '" + key + "'");
    std::vector<DeviceTensor> r;
    for (const json &id : op[key])
      r.push_back(resolver(id.get<int64_t>()));
    return r;
  };
  std::vector<DeviceTensor> in = ids("in"), out = ids("out"),
                            args = ids("args"), yields = ids("yields");
  long long steps = op.value("steps", 0LL);
  size_t numInputs = op.value("num_inputs", size_t(0));
  if (steps <= 0 || !op.contains("body") || !op["body"].is_array())
    throwError(where + ": needs 'steps' > 0 and a 'body' op list");
  if (numInputs > in.size() || args.size() != in.size() ||
      yields.size() != out.size() || out.size() < in.size() - numInputs)
    throwError(where + ": needs one block argument per input and init and "
                       "one yield per result");
  size_t numStates = in.size() - numInputs;
  size_t numOutputs = out.size() - numStates;
  auto expect = [&](const DeviceTensor &t, int64_t n) {
    if (t.numel() != n)
      throwError(where + ": tensor " + t.name + " has " +
                 std::to_string(t.numel()) + " elements; expected " +
                 std::to_string(n));
  };
  for (size_t i = 0; i < numInputs; ++i)
    expect(in[i], steps * args[i].numel());
  for (size_t k = 0; k < numOutputs; ++k)
    expect(out[k], steps * yields[k].numel());
  for (size_t j = 0; j < numStates; ++j) {
    int64_t n = args[numInputs + j].numel();
    expect(in[numInputs + j], n);
    expect(yields[numOutputs + j], n);
    expect(out[numOutputs + j], n);
  }
  auto copy = [&](const DeviceTensor &dst, size_t dstOffset,
                  const DeviceTensor &src, size_t srcOffset, int64_t n) {
    device.copyOnDevice(dst.ptr + dstOffset * sizeof(float),
                        src.ptr + srcOffset * sizeof(float),
                        n * sizeof(float), where);
  };
  auto view = [](DeviceTensor t, const DeviceTensor &of, int64_t offset) {
    t.ptr = of.ptr + offset * sizeof(float);
    return t;
  };
  std::vector<int64_t> argIds, yieldIds;
  for (const json &id : op["args"])
    argIds.push_back(id.get<int64_t>());
  for (const json &id : op["yields"])
    yieldIds.push_back(id.get<int64_t>());
  auto isArg = [&](int64_t id) {
    return std::find(argIds.begin(), argIds.end(), id) != argIds.end();
  };
  auto yieldCount = [&](int64_t id) {
    return std::count(yieldIds.begin(), yieldIds.end(), id);
  };
  // Input slices are views of the inputs. A step output written by the body
  // is a view of its slice of the stacked result. A state yielded only as
  // that state ping-pongs: step t reads buffer t % 2 and writes the other.
  // Tensors that share storage with an alias keep their copies.
  std::vector<bool> viewInput(numInputs), viewOutput(numOutputs),
      pingPong(numStates);
  for (size_t i = 0; i < numInputs; ++i)
    viewInput[i] = !sharesStorage(argIds[i]);
  for (size_t k = 0; k < numOutputs; ++k)
    viewOutput[k] = !sharesStorage(yieldIds[k]) && !isArg(yieldIds[k]) &&
                    yieldCount(yieldIds[k]) == 1;
  // A state that is also a step output (a layer's spikes fed back) is read
  // from the previous step's slice of that output.
  std::vector<int> fromOutput(numStates, -1);
  for (size_t j = 0; j < numStates; ++j) {
    int64_t a = argIds[numInputs + j], y = yieldIds[numOutputs + j];
    bool own = !sharesStorage(a) && !sharesStorage(y) && !isArg(y);
    pingPong[j] = own && yieldCount(y) == 1;
    for (size_t k = 0; k < numOutputs; ++k)
      if (own && yieldCount(y) == 2 && yieldIds[k] == y)
        fromOutput[j] = static_cast<int>(k);
  }
  for (size_t k = 0; k < numOutputs; ++k)
    viewOutput[k] = viewOutput[k] ||
                    std::count(fromOutput.begin(), fromOutput.end(), int(k)) == 1;

  for (size_t j = 0; j < numStates; ++j)
    copy(args[numInputs + j], 0, in[numInputs + j], 0,
         args[numInputs + j].numel());
  std::unordered_map<int64_t, DeviceTensor> redirect;
  Resolver step = [&](int64_t id) {
    auto it = redirect.find(id);
    return it != redirect.end() ? it->second : resolver(id);
  };
  std::string body = label + " body";
  for (long long t = 0; t < steps; ++t) {
    redirect.clear();
    for (size_t i = 0; i < numInputs; ++i) {
      int64_t n = args[i].numel();
      if (viewInput[i])
        redirect[argIds[i]] = view(args[i], in[i], t * n);
      else
        copy(args[i], 0, in[i], t * n, n);
    }
    for (size_t k = 0; k < numOutputs; ++k)
      if (viewOutput[k])
        redirect[yieldIds[k]] =
            view(yields[k], out[k], t * yields[k].numel());
    for (size_t j = 0; j < numStates; ++j) {
      if (pingPong[j] && t % 2) {
        redirect[argIds[numInputs + j]] = yields[numOutputs + j];
        redirect[yieldIds[numOutputs + j]] = args[numInputs + j];
      }
      if (fromOutput[j] >= 0 && t > 0) {
        int k = fromOutput[j];
        redirect[argIds[numInputs + j]] =
            view(args[numInputs + j], out[k], (t - 1) * yields[k].numel());
      }
    }
    runOps(op["body"], body, values, nullptr, step);
    for (size_t k = 0; k < numOutputs; ++k)
      if (!viewOutput[k])
        copy(out[k], t * yields[k].numel(), step(yieldIds[k]), 0,
             yields[k].numel());
    for (size_t j = 0; j < numStates; ++j)
      if (!pingPong[j] && fromOutput[j] < 0)
        copy(args[numInputs + j], 0, step(yieldIds[numOutputs + j]), 0,
             args[numInputs + j].numel());
  }
  // The final state: in the argument's buffer, for a ping-pong state after
  // an odd number of steps in the yield's, or the output's last slice.
  for (size_t j = 0; j < numStates; ++j) {
    DeviceTensor last =
        pingPong[j] && steps % 2 ? yields[numOutputs + j] : args[numInputs + j];
    if (fromOutput[j] >= 0)
      last = view(last, out[fromOutput[j]],
                  (steps - 1) * yields[fromOutput[j]].numel());
    copy(out[numOutputs + j], 0, last, 0, last.numel());
  }
}

void CudaProgram::run(const StepValues &values) {
  const std::string where = device.name() + ": program '" + name + "'";
  ++runs;
  if (runValues)
    device.setRunValues(values.learningRate, values.step, values.seed, where);
  if (graph) {
    device.replay(graph, where);
    return;
  }
  // The first run allocates the scratch buffers (their addresses are then
  // stable); the second is captured.
  if (!capturable || runs < 2) {
    runEagerly(values);
    return;
  }
  device.beginCapture(where);
  try {
    runEagerly(values);
    graph = device.endCapture(where);
  } catch (const std::exception &e) {
    device.abortCapture();
    if (device.conditionalNodes() && hasOpWith(ops, "unless_event_path")) {
      // Conditional graph nodes (CudaDevice::runUnlessEventPath) are the
      // newest thing in the capture: without them, capture again next run.
      device.disableConditionalNodes(e.what());
      runEagerly(values);
      return;
    }
    // A library call that cannot be captured: run this program eagerly from
    // now on (a real error of an op shows again in the eager run).
    capturable = false;
    if (!side.afterOps.empty()) // its collectives then cost a launch each
      std::cerr << "snn-run: note: " << where
                << " runs op by op: its capture failed (" << e.what()
                << ")\n";
    runEagerly(values);
    return;
  }
  device.replay(graph, where);
}
