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

} // namespace snnrt

#endif // SNNRT_BATCHNORMSUMS_H
