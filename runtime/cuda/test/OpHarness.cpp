//===- OpHarness.cpp - runs single manifest ops on a CUDA device ----------===//

#include "OpHarness.h"

#include <algorithm>
#include <cmath>
#include <exception>

using namespace snnrt::cuda;
using namespace snnrt::cuda::test;

CudaDevice *test::sharedDevice(std::string &whyNot) {
  // Never destroyed: at exit the driver may already be shutting down.
  static CudaDevice *device = nullptr;
  static std::string reason;
  static bool tried = false;
  if (!tried) {
    tried = true;
    try {
      device = new CudaDevice(0);
    } catch (const std::exception &e) {
      reason = e.what();
    }
  }
  whyNot = reason;
  return device;
}

OpHarness::~OpHarness() {
  for (auto &[id, t] : tensors)
    dev.allocator().free(t.ptr);
}

static int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t OpHarness::addOutput(const std::string &name,
                             std::vector<int64_t> shape, int bytesPerElement) {
  int64_t id = static_cast<int64_t>(tensors.size());
  std::size_t size = numel(shape) * bytesPerElement;
  DeviceTensor t;
  t.ptr = dev.allocator().allocate(size, name);
  t.shape = std::move(shape);
  t.name = name;
  // 0xFF bytes are NaN floats: unwritten outputs do not compare equal.
  SNNRT_CU(driver().cuMemsetD8Async(t.ptr, 0xFF, size, dev.stream()), name);
  tensors[id] = t;
  bytes[id] = size;
  return id;
}

int64_t OpHarness::add(const std::string &name, std::vector<int64_t> shape,
                       const std::vector<float> &values) {
  int64_t id = addOutput(name, std::move(shape));
  write(id, values);
  return id;
}

int64_t OpHarness::addInts(const std::string &name, std::vector<int64_t> shape,
                           const std::vector<int32_t> &values) {
  int64_t id = addOutput(name, std::move(shape));
  dev.copyToDevice(tensors[id].ptr, values.data(), bytes[id], name);
  return id;
}

void OpHarness::write(int64_t id, const std::vector<float> &values) {
  dev.copyToDevice(tensors[id].ptr, values.data(),
                   std::min(bytes[id], values.size() * sizeof(float)),
                   tensors[id].name);
  dev.synchronize(tensors[id].name);
}

std::vector<float> OpHarness::read(int64_t id) {
  std::vector<float> out(bytes[id] / sizeof(float));
  dev.copyToHost(out.data(), tensors[id].ptr, bytes[id], tensors[id].name);
  return out;
}

std::vector<uint8_t> OpHarness::readBytes(int64_t id) {
  std::vector<uint8_t> out(bytes[id]);
  dev.copyToHost(out.data(), tensors[id].ptr, bytes[id], tensors[id].name);
  return out;
}

void OpHarness::run(const nlohmann::json &op, std::string *kernelUsed) {
  OpCall call{op, {}, {}, {}, "test op '" + op.value("op", "") + "'"};
  for (const auto &id : op["in"])
    call.in.push_back(tensors.at(id.get<int64_t>()));
  for (const auto &id : op["out"])
    call.out.push_back(tensors.at(id.get<int64_t>()));
  call.tensor = [this, &call](int64_t id) {
    auto it = tensors.find(id);
    if (it == tensors.end())
      opError(call, "no tensor " + std::to_string(id));
    return it->second;
  };
  call.kernelUsed = kernelUsed;
  runOp(dev, call);
  dev.synchronize(call.where);
}

Random::Random() : seedValue(std::random_device{}()), rng(seedValue) {}

std::vector<float> Random::uniform(std::size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

std::vector<int32_t> Random::labels(std::size_t n, int32_t classes) {
  std::uniform_int_distribution<int32_t> dist(0, classes - 1);
  std::vector<int32_t> v(n);
  for (int32_t &x : v)
    x = dist(rng);
  return v;
}

double test::worstError(const std::vector<float> &a,
                        const std::vector<double> &b, double rtol,
                        double atol) {
  if (a.size() < b.size())
    return INFINITY;
  double worst = 0.0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    double e = std::fabs(a[i] - b[i]) / (atol + rtol * std::fabs(b[i]));
    if (!(e <= worst)) // NaN counts as the worst
      worst = std::isnan(e) ? INFINITY : e;
  }
  return worst;
}
