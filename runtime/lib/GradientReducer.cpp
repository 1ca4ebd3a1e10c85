//===- GradientReducer.cpp - data parallel averaging of gradients ---------===//

#include "snnrt/GradientReducer.h"
#include "snnrt/Error.h"

#include <algorithm>
#include <map>

namespace snnrt {

GradientReducer::GradientReducer(Executor &exec, ProgramRunner &runner,
                                 Communicator &comm, size_t bucketBytes)
    : exec(exec), runner(runner), comm(comm) {
  const Module &m = exec.module();
  std::map<std::string, const TensorInfo *> params;
  for (const TensorInfo &t : m.tensors)
    if (t.role == "param")
      params[t.name] = &t;
  std::vector<int> gradIds, bufferIds;
  for (const TensorInfo &t : m.tensors) {
    if (t.role == "param" && !t.trainable)
      bufferIds.push_back(t.id);
    if (t.role != "grad" || t.name.rfind("grad:", 0) != 0)
      continue;
    auto it = params.find(t.name.substr(5));
    if (it != params.end() && it->second->trainable)
      gradIds.push_back(t.id);
  }
  if (gradIds.empty())
    throw Error(m.dir + ": data parallel training found no parameter "
                        "gradients (grad:<param>) in the module");
  // The backward program finishes the last layers' gradients first.
  std::reverse(gradIds.begin(), gradIds.end());
  grads = makeBuckets(m, gradIds, bucketBytes);
  buffers = makeBuckets(m, bufferIds, bucketBytes);
}

std::vector<GradientReducer::Bucket>
GradientReducer::makeBuckets(const Module &m, const std::vector<int> &ids,
                             size_t bucketBytes) {
  std::vector<Bucket> buckets;
  size_t limit = std::max<size_t>(1, bucketBytes / sizeof(float));
  for (int id : ids) {
    const TensorInfo &t = m.tensor(id);
    if (t.dtype != DType::F32)
      throw Error(m.dir + ": tensor '" + t.name +
                  "' is not float32; data parallel averaging needs float32 "
                  "gradients and buffers");
    if (buckets.empty() || buckets.back().floats + t.numel() > limit)
      buckets.emplace_back();
    buckets.back().tensors.push_back(id);
    buckets.back().floats += t.numel();
  }
  return buckets;
}

void GradientReducer::averageGradients() { average(grads); }
void GradientReducer::averageBuffers() { average(buffers); }

void GradientReducer::average(const std::vector<Bucket> &buckets) {
  const Module &m = exec.module();
  if (comm.deviceBuffers()) {
    // NCCL: in place on the device, on the programs' stream (ordered after
    // the backward, before the update); one fused group per bucket.
    for (const Bucket &bucket : buckets) {
      comm.groupStart();
      for (int id : bucket.tensors)
        comm.allReduceAverage(static_cast<float *>(runner.devicePointer(id)),
                              m.tensor(id).numel(), runner.stream());
      comm.groupEnd();
    }
    return;
  }
  // Host buffers (MPI, TCP): through a flat host bucket; on a GPU the
  // tensors are staged through the host.
  const float scale = 1.0f / static_cast<float>(comm.size());
  for (const Bucket &bucket : buckets) {
    flat.resize(std::max(flat.size(), bucket.floats));
    size_t at = 0;
    for (int id : bucket.tensors) {
      runner.download(id);
      const float *p = exec.data(id);
      size_t n = m.tensor(id).numel();
      std::copy(p, p + n, flat.begin() + at);
      at += n;
    }
    comm.allReduceSum(flat.data(), bucket.floats);
    at = 0;
    for (int id : bucket.tensors) {
      float *p = exec.data(id);
      size_t n = m.tensor(id).numel();
      for (size_t i = 0; i < n; ++i)
        p[i] = flat[at + i] * scale;
      at += n;
      runner.upload(id);
    }
  }
}

} // namespace snnrt
