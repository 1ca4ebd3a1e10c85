//===- BatchNormSums.h - a neuron_bwd's batch norm backward sums -*- C++ -*-===//
//
// A neuron_bwd with `"bn": {"eps", "spatial_rank", "parts": P}` (--snn-fuse)
// also computes the partial sums of the batch norm backward after it: its
// kernel reads x, saved_mean and saved_invstd (inputs after H, and I for
// cuba_lif) and writes the sums into a scratch of (4 P + 3) C floats (the
// second output), which the batch norm's finish kernel reads. The CPU and
// CUDA ops check the tensors with this one function.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_BATCHNORMSUMS_H
#define SNNRT_BATCHNORMSUMS_H

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace snnrt {

/// Element counts of what a neuron_bwd with `bn` reads and writes for the
/// sums, 0 for a tensor the op lacks.
struct BatchNormSumsTensors {
  size_t gx = 0, x = 0, mean = 0, invstd = 0, sums = 0;
};

/// Why the tensors do not fit the op's `bn`, or an empty string.
inline std::string checkBatchNormSums(const nlohmann::json &bn,
                                      const BatchNormSumsTensors &t) {
  long long parts = bn.is_object() && bn.contains("parts") &&
                            bn["parts"].is_number_integer()
                        ? bn["parts"].get<long long>()
                        : 0;
  if (parts <= 0)
    return "'bn' of a neuron_bwd must be {\"eps\", \"spatial_rank\", "
           "\"parts\": P > 0}";
  size_t c = t.mean;
  if (t.x != t.gx || c == 0 || t.invstd != c ||
      t.sums != (4 * static_cast<size_t>(parts) + 3) * c)
    return "a neuron_bwd with 'bn' reads x (like gx), saved_mean and "
           "saved_invstd (C each) after H and writes the batch norm "
           "backward's sums, (4 parts + 3) C floats, after gx";
  return "";
}

/// Element counts of what a neuron_bwd that recomputes H
/// (`recompute_chunk`) with `"bn": {"eps", "spatial_rank"[, "parts"]}`
/// reads after its checkpoints: the training forward's batch norm inputs
/// (gamma, beta, saved_mean, saved_invstd, the scratch of its scale and
/// shift), with which its kernel normalizes x (its second input) again;
/// with "parts" it also writes the backward's sums after gx. 0 for a
/// tensor the op lacks.
struct RecomputedBatchNormTensors {
  size_t gx = 0, x = 0, gamma = 0, beta = 0, mean = 0, invstd = 0,
         scratch = 0, sums = 0;
};

/// The batch norm inputs of a recomputing neuron_bwd: 5 with `bn`, else 0.
inline size_t recomputedBatchNormInputs(const nlohmann::json &op) {
  return op.contains("bn") ? 5 : 0;
}

/// Why the tensors do not fit the op's `bn`, or an empty string.
inline std::string
checkRecomputedBatchNorm(const nlohmann::json &bn,
                         const RecomputedBatchNormTensors &t) {
  if (!bn.is_object() ||
      (bn.contains("parts") && (!bn["parts"].is_number_integer() ||
                                bn["parts"].get<long long>() <= 0)))
    return "'bn' of a neuron_bwd must be {\"eps\", \"spatial_rank\"[, "
           "\"parts\": P > 0]}";
  size_t c = t.gamma;
  size_t parts = bn.contains("parts") ? bn["parts"].get<size_t>() : 0;
  if (t.x != t.gx || c == 0 || t.beta != c || t.mean != c || t.invstd != c ||
      t.scratch < 3 * c || t.scratch % c != 0 ||
      (parts > 0 && t.sums != (4 * parts + 3) * c))
    return "a neuron_bwd with 'bn' and 'recompute_chunk' reads x (like gx) "
           "and its checkpoints, then gamma, beta, saved_mean, saved_invstd "
           "(C each) and the batch norm's scratch ((4 parts + 3) C floats), "
           "and with 'parts' writes the backward's sums, (4 parts + 3) C "
           "floats, after gx";
  return "";
}

} // namespace snnrt

#endif // SNNRT_BATCHNORMSUMS_H
