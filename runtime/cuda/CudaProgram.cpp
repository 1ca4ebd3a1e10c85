//===- CudaProgram.cpp - one manifest program on a CUDA device ------------===//

#include "CudaProgram.h"

#include "CudaError.h"

using namespace snnrt::cuda;
using nlohmann::json;

/// Whether the op's kernel arguments are the same at every step.
static bool hasStepValues(const json &op) {
  std::string kind = op.value("op", "");
  return kind == "sgd" || kind == "adam" ||
         (kind == "dropout" && op.value("training", false));
}

CudaProgram::CudaProgram(CudaDevice &device, std::string name, json ops,
                         std::function<DeviceTensor(int64_t)> resolve)
    : device(device), name(std::move(name)), ops(std::move(ops)),
      resolve(std::move(resolve)) {
  if (!this->ops.is_array())
    throwError(device.name() + ": program '" + this->name +
               "' is not a list of ops");
  capturable = device.options().graphs;
  for (const json &op : this->ops)
    capturable = capturable && !hasStepValues(op);
  kernels.resize(this->ops.size());
}

CudaProgram::~CudaProgram() { device.destroyGraph(graph); }

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
  for (size_t i = 0; i < ops.size(); ++i) {
    const json &op = ops[i];
    OpCall call{op, {}, {}, resolve, ""};
    if (!op.is_object() || !op.contains("in") || !op["in"].is_array() ||
        !op.contains("out") || !op["out"].is_array())
      throwError(device.name() + ": " + name + " op #" + std::to_string(i) +
                 ": an op needs \"op\", \"in\" and \"out\" lists");
    for (const json &id : op["in"])
      call.in.push_back(resolve(id.get<int64_t>()));
    for (const json &id : op["out"])
      call.out.push_back(resolve(id.get<int64_t>()));
    call.where =
        device.name() + ": " + describeOp(name, i, op, call.in, call.out);
    call.learningRate = values.learningRate;
    call.step = values.step;
    // A different stream of random numbers for every dropout op and step.
    call.seed = values.seed * 0x100000001B3ull + i;
    call.kernelUsed = &kernels[i];
    runOp(device, call);
  }
}

void CudaProgram::run(const StepValues &values) {
  const std::string where = device.name() + ": program '" + name + "'";
  ++runs;
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
  } catch (const std::exception &) {
    // A library call that cannot be captured: run this program eagerly from
    // now on (a real error of an op shows again in the eager run).
    device.abortCapture();
    capturable = false;
    runEagerly(values);
    return;
  }
  device.replay(graph, where);
}
