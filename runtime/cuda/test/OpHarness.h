//===- OpHarness.h - runs single manifest ops on a CUDA device --*- C++ -*-===//

#ifndef SNNRT_CUDA_TEST_OPHARNESS_H
#define SNNRT_CUDA_TEST_OPHARNESS_H

#include "CudaOps.h"

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace snnrt::cuda::test {

/// The device shared by all tests, or null (with the reason) when this
/// machine has no usable GPU.
CudaDevice *sharedDevice(std::string &whyNot);

/// Tensors by manifest id on the device, and ops that use them.
class OpHarness {
public:
  explicit OpHarness(CudaDevice &dev) : dev(dev) {}
  ~OpHarness();

  int64_t add(const std::string &name, std::vector<int64_t> shape,
              const std::vector<float> &values);
  int64_t addInts(const std::string &name, std::vector<int64_t> shape,
                  const std::vector<int32_t> &values);
  /// A tensor of `bytesPerElement`-byte elements filled with NaN bytes, so
  /// that an op that does not write its output is caught.
  int64_t addOutput(const std::string &name, std::vector<int64_t> shape,
                    int bytesPerElement = 4);
  std::vector<float> read(int64_t id);
  std::vector<uint8_t> readBytes(int64_t id);
  void write(int64_t id, const std::vector<float> &values);
  const DeviceTensor &tensor(int64_t id) const { return tensors.at(id); }
  CudaDevice &device() { return dev; }

  /// Runs `op` (its "in"/"out" are ids of this harness).
  void run(const nlohmann::json &op, std::string *kernelUsed = nullptr);

private:
  CudaDevice &dev;
  std::map<int64_t, DeviceTensor> tensors;
  std::map<int64_t, std::size_t> bytes;
};

/// Fresh random values (seeded from std::random_device; the seed is in the
/// trace of a failure).
class Random {
public:
  Random();
  uint32_t seed() const { return seedValue; }
  std::vector<float> uniform(std::size_t n, float lo, float hi);
  std::vector<int32_t> labels(std::size_t n, int32_t classes);

private:
  uint32_t seedValue;
  std::mt19937 rng;
};

/// Largest |a - b| / (atol + rtol |b|); <= 1 means within tolerance.
double worstError(const std::vector<float> &a, const std::vector<double> &b,
                  double rtol, double atol);

} // namespace snnrt::cuda::test

#endif // SNNRT_CUDA_TEST_OPHARNESS_H
