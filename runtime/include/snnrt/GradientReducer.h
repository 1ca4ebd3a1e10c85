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
  /// Non-trainable params (batch norm running statistics) := mean over
  /// ranks, so that every rank keeps the same module state.
  void averageBuffers();

  size_t gradientBuckets() const { return grads.size(); }

private:
  struct Bucket {
    std::vector<int> tensors;
    size_t floats = 0;
  };
  static std::vector<Bucket> makeBuckets(const Module &m,
                                         const std::vector<int> &ids,
                                         size_t bucketBytes);
  void average(const std::vector<Bucket> &buckets);

  Executor &exec;
  ProgramRunner &runner;
  Communicator &comm;
  std::vector<Bucket> grads, buffers;
  std::vector<float> flat;
};

} // namespace snnrt

#endif // SNNRT_GRADIENTREDUCER_H
