//===- GradientReducer.h - data parallel averaging of gradients -*- C++ -*-===//
//
// Data parallel training: every rank runs the same module on its shard of
// the global batch, then the parameter gradients are averaged over the ranks
// before the update program, so every rank applies the same update to the
// same weights. The gradients go through flat buckets of about
// `bucketBytes` (few large messages instead of one per tensor), in reverse
// manifest order: roughly the order in which the backward finishes them.
// With NCCL the tensors are averaged in place on the device, one NCCL group
// per bucket, on the stream of the programs.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_GRADIENTREDUCER_H
#define SNNRT_GRADIENTREDUCER_H

#include "snnrt/Communicator.h"
#include "snnrt/Trainer.h"

#include <vector>

namespace snnrt {

class GradientReducer {
public:
  GradientReducer(Executor &exec, ProgramRunner &runner, Communicator &comm,
                  size_t bucketBytes = size_t(25) << 20);

  /// grad:<param> := mean over ranks, for every trainable parameter.
  void averageGradients();
  /// Runs the backward program and averages the gradients. With `overlap`,
  /// a bucket's all-reduce starts as soon as the last op that writes its
  /// gradients has run, while the backward goes on (the same sums in the
  /// same order: the same bits): on host buffers on a communication thread;
  /// on device buffers (NCCL) on a second stream after that op, without a
  /// host wait and inside the backward's CUDA graph.
  void backward(const RunContext &ctx, bool overlap);
  /// Non-trainable params (batch norm running statistics) := mean over
  /// ranks, so that every rank keeps the same module state.
  void averageBuffers();

  size_t gradientBuckets() const { return grads.size(); }

private:
  struct Bucket {
    std::vector<int> tensors;
    size_t floats = 0;
    size_t lastWriter = 0; ///< the backward op after which it is final
  };
  static std::vector<Bucket> makeBuckets(const Module &m,
                                         const std::vector<int> &ids,
                                         size_t bucketBytes);
  void average(const std::vector<Bucket> &buckets);
  /// Device buffers: attaches the buckets' all-reduces to the backward
  /// program (once); false if the runner cannot.
  bool attachToBackward();
  void enqueueAverage(const Bucket &bucket, void *stream);
  void gather(const Bucket &bucket, float *flat);
  void scatter(const Bucket &bucket, const float *flat);

  Executor &exec;
  ProgramRunner &runner;
  Communicator &comm;
  std::vector<Bucket> grads, buffers;
  std::vector<float> flat;
  std::vector<std::vector<float>> bucketFlats; ///< overlap: one per bucket
  enum class Attached { NotYet, Yes, Unsupported } attached = Attached::NotYet;
};

} // namespace snnrt

#endif // SNNRT_GRADIENTREDUCER_H
