//===- CpuTimeLoop.cpp - a recurrent time loop on the CPU -----------------===//
//
// docs/artifact-format.md, `time_loop`: the state block arguments start as
// the inits; each step copies the inputs' slice t into the input block
// arguments, runs the body, copies the step outputs into slice t of the
// stacked results and the next state into the state arguments. The copies
// (rather than views) keep every body tensor, aliases included, in its own
// storage.
//
//===----------------------------------------------------------------------===//

#include "CpuOpContext.h"

#include <cstring>

namespace snnrt {
namespace cpu {

void runTimeLoop(const Ctx &c) {
  const Op &op = c.op;
  size_t numInputs = c.attr<size_t>("num_inputs", 0);
  int64_t T = c.attr<int64_t>("steps", 0);
  if (T <= 0)
    c.fail("'steps' must be positive");
  if (numInputs > op.in.size() || op.args.size() != op.in.size())
    c.fail("needs one block argument per input and init (" +
           std::to_string(op.in.size()) + "), got " +
           std::to_string(op.args.size()));
  size_t numStates = op.in.size() - numInputs;
  if (op.out.size() < numStates ||
      op.yields.size() != op.out.size())
    c.fail("needs one yield per result (" + std::to_string(op.out.size()) +
           "), got " + std::to_string(op.yields.size()));
  size_t numOutputs = op.out.size() - numStates;
  auto numel = [&](int id) { return c.m.tensor(id).numel(); };
  auto expect = [&](int id, size_t n, const std::string &what) {
    if (numel(id) != n)
      c.fail("tensor '" + c.m.tensor(id).name + "' has " +
             std::to_string(numel(id)) + " elements; expected " +
             std::to_string(n) + " (" + what + ")");
  };
  for (size_t i = 0; i < numInputs; ++i)
    expect(op.in[i], T * numel(op.args[i]), "T steps of its block argument");
  for (size_t k = 0; k < numOutputs; ++k)
    expect(op.out[k], T * numel(op.yields[k]), "T steps of its yield");
  for (size_t j = 0; j < numStates; ++j) {
    size_t n = numel(op.args[numInputs + j]);
    expect(op.in[numInputs + j], n, "the state's block argument");
    expect(op.yields[numOutputs + j], n, "the state's block argument");
    expect(op.out[numOutputs + j], n, "the state's block argument");
  }

  auto copy = [&](float *dst, const float *src, size_t n) {
    std::memcpy(dst, src, n * sizeof(float)); // 4-byte slots for every dtype
  };
  for (size_t j = 0; j < numStates; ++j)
    copy(c.get(op.args[numInputs + j]), c.get(op.in[numInputs + j]),
         numel(op.args[numInputs + j]));
  for (int64_t t = 0; t < T; ++t) {
    for (size_t i = 0; i < numInputs; ++i) {
      size_t n = numel(op.args[i]);
      copy(c.get(op.args[i]), c.get(op.in[i]) + t * n, n);
    }
    for (size_t b = 0; b < op.body.size(); ++b)
      runCpuOp(c.m, op.body[b], b, c.get, c.run);
    for (size_t k = 0; k < numOutputs; ++k) {
      size_t n = numel(op.yields[k]);
      copy(c.get(op.out[k]) + t * n, c.get(op.yields[k]), n);
    }
    for (size_t j = 0; j < numStates; ++j)
      copy(c.get(op.args[numInputs + j]), c.get(op.yields[numOutputs + j]),
           numel(op.args[numInputs + j]));
  }
  for (size_t j = 0; j < numStates; ++j)
    copy(c.get(op.out[numOutputs + j]), c.get(op.args[numInputs + j]),
         numel(op.args[numInputs + j]));
}

void runTimeSlice(const Ctx &c) {
  c.arity(1, 1, 1, 1);
  const TensorInfo &x = c.in(0), &y = c.out(0);
  int64_t index = c.attr<int64_t>("index", -1);
  if (x.shape.empty() || index < 0 || index >= x.shape[0] ||
      x.numel() != static_cast<size_t>(x.shape[0]) * y.numel())
    c.fail("needs x [T, ...], y [...] and 0 <= index < T");
  std::memcpy(c.outPtr(0), c.inPtr(0) + index * y.numel(),
              y.numel() * sizeof(float));
}

void runTimeStack(const Ctx &c) {
  c.arity(1, c.op.in.size(), 1, 1);
  size_t n = c.in(0).numel();
  c.expectElements(c.out(0), n * c.op.in.size(), "every step");
  for (size_t t = 0; t < c.op.in.size(); ++t) {
    c.expectElements(c.in(t), n, "like the first step");
    std::memcpy(c.outPtr(0) + t * n, c.inPtr(t), n * sizeof(float));
  }
}

} // namespace cpu
} // namespace snnrt
