//===- GradientReducer.cpp - data parallel averaging of gradients ---------===//

#include "snnrt/GradientReducer.h"
#include "snnrt/Error.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

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
  // The last backward op that writes each bucket's tensors.
  const std::vector<Op> &ops = m.program("backward");
  std::map<int, size_t> lastWrite;
  for (size_t i = 0; i < ops.size(); ++i)
    for (int id : ops[i].out)
      lastWrite[id] = i;
  for (Bucket &bucket : grads)
    for (int id : bucket.tensors) {
      auto it = lastWrite.find(id);
      bucket.lastWriter =
          std::max(bucket.lastWriter, it == lastWrite.end() ? 0 : it->second);
    }
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

void GradientReducer::gather(const Bucket &bucket, float *out) {
  const Module &m = exec.module();
  for (int id : bucket.tensors) {
    const float *p = exec.data(id);
    size_t n = m.tensor(id).numel();
    std::copy(p, p + n, out);
    out += n;
  }
}

void GradientReducer::scatter(const Bucket &bucket, const float *in) {
  const Module &m = exec.module();
  const float scale = 1.0f / static_cast<float>(comm.size());
  for (int id : bucket.tensors) {
    float *p = exec.data(id);
    size_t n = m.tensor(id).numel();
    for (size_t i = 0; i < n; ++i)
      p[i] = in[i] * scale;
    in += n;
    runner.upload(id);
  }
}

bool GradientReducer::attachToBackward() {
  if (attached == Attached::NotYet) {
    std::vector<size_t> ops;
    for (const Bucket &bucket : grads)
      ops.push_back(bucket.lastWriter);
    std::sort(ops.begin(), ops.end());
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    bool ok = runner.enqueueAfterOps("backward", ops, [this](size_t op,
                                                             void *stream) {
      for (const Bucket &bucket : grads) // manifest order within an op
        if (bucket.lastWriter == op)
          enqueueAverage(bucket, stream);
    });
    attached = ok ? Attached::Yes : Attached::Unsupported;
  }
  return attached == Attached::Yes;
}

void GradientReducer::backward(const RunContext &ctx, bool overlap) {
  // Device buffers: the all-reduces are part of the backward program.
  if (overlap && comm.deviceBuffers() && attachToBackward()) {
    runner.run("backward", ctx);
    comm.watchStream(runner.stream()); // a replayed graph's collectives
    return;
  }
  // Host buffers: overlap on the CPU runner only (a GPU runner runs the
  // backward as a whole, and its copies need the device's context on the
  // calling thread).
  if (!overlap || comm.deviceBuffers() || comm.size() == 1 || runner.stream()) {
    runner.run("backward", ctx);
    averageGradients();
    return;
  }
  // The communication thread takes the buckets in the order they become
  // final (the same order on every rank) and all-reduces each into its own
  // flat buffer; the results go back into the tensors once the backward has
  // finished (a later backward op may still read a final gradient).
  bucketFlats.resize(grads.size());
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<size_t> queue;
  bool finished = false;
  std::exception_ptr failure;
  std::thread worker([&] {
    try {
      for (;;) {
        size_t k;
        {
          std::unique_lock<std::mutex> lock(mutex);
          ready.wait(lock, [&] { return !queue.empty() || finished; });
          if (queue.empty())
            return;
          k = queue.front();
          queue.pop_front();
        }
        std::vector<float> &buffer = bucketFlats[k];
        buffer.resize(grads[k].floats);
        for (int id : grads[k].tensors)
          runner.download(id); // no-op on the CPU
        gather(grads[k], buffer.data());
        comm.allReduceSum(buffer.data(), buffer.size());
      }
    } catch (...) {
      failure = std::current_exception();
    }
  });
  // Buckets by the op after which they are final.
  std::vector<size_t> order(grads.size());
  for (size_t k = 0; k < order.size(); ++k)
    order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return grads[a].lastWriter < grads[b].lastWriter;
  });
  size_t next = 0;
  auto launchUpTo = [&](size_t op) {
    std::lock_guard<std::mutex> lock(mutex);
    for (; next < order.size() && grads[order[next]].lastWriter <= op; ++next)
      queue.push_back(order[next]);
    ready.notify_one();
  };
  try {
    runner.run("backward", ctx, launchUpTo);
    launchUpTo(SIZE_MAX);
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      finished = true;
      queue.clear();
    }
    ready.notify_one();
    // The bucket in flight completes when the peers launch it too; if they
    // never do, the communicator's watchdog ends the job.
    worker.join();
    throw;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    finished = true;
  }
  ready.notify_one();
  worker.join();
  if (failure)
    std::rethrow_exception(failure);
  for (size_t k = 0; k < grads.size(); ++k)
    scatter(grads[k], bucketFlats[k].data());
}
void GradientReducer::averageBuffers() { average(buffers); }

void GradientReducer::enqueueAverage(const Bucket &bucket, void *stream) {
  const Module &m = exec.module();
  comm.groupStart();
  for (int id : bucket.tensors)
    comm.allReduceAverage(static_cast<float *>(runner.devicePointer(id)),
                          m.tensor(id).numel(), stream);
  comm.groupEnd();
}

void GradientReducer::average(const std::vector<Bucket> &buckets) {
  if (comm.deviceBuffers()) {
    // NCCL: in place on the device, on the programs' stream (ordered after
    // the backward, before the update); one fused group per bucket.
    for (const Bucket &bucket : buckets)
      enqueueAverage(bucket, runner.stream());
    return;
  }
  // Host buffers (MPI, TCP): through a flat host bucket; on a GPU the
  // tensors are staged through the host.
  for (const Bucket &bucket : buckets) {
    flat.resize(std::max(flat.size(), bucket.floats));
    for (int id : bucket.tensors)
      runner.download(id);
    gather(bucket, flat.data());
    comm.allReduceSum(flat.data(), bucket.floats);
    scatter(bucket, flat.data());
  }
}

} // namespace snnrt
