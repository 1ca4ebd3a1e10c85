//===- CpuOpContext.h - shared pieces of the CPU op implementations -*- C++ -*-===//
//
// Internal to libsnnrt: the view of one op (its tensors, attributes and the
// step's run values) that the CPU op files share, and the GEMM they use.
//
//===----------------------------------------------------------------------===//

#ifndef SNNRT_LIB_CPUOPCONTEXT_H
#define SNNRT_LIB_CPUOPCONTEXT_H

#include "snnrt/CpuOps.h"
#include "snnrt/Error.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace snnrt {
namespace cpu {

/// C[m,n] = op(A) op(B) + beta C, row-major; op(A) is [m,k], op(B) is [k,n].
/// CBLAS when the build found it, else plain loops.
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const float *a, const float *b, float beta, float *c);

/// `v` rounded to the nearest bfloat16 (ties to even), as a float: what a
/// bf16 tensor stores (NaN stays NaN).
inline float roundToBf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu))
    return v;
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

struct Ctx {
  const Module &m;
  const Op &op;
  size_t index;
  const TensorLookup &get;
  const RunContext &run;
  /// Arguments a neuron kernel takes after the documented ones: the limit
  /// and decision of a fused count (runCountingNeuron).
  std::vector<void *> tail;

  [[noreturn]] void fail(const std::string &what) const {
    throw Error(m.dir + ": " + op.describe(index) + ": " + what);
  }
  const TensorInfo &in(size_t i) const;
  const TensorInfo &out(size_t i) const;
  float *inPtr(size_t i) const { return get(in(i).id); }
  float *outPtr(size_t i) const { return get(out(i).id); }
  /// Fails unless the op has between min and max inputs resp. outputs.
  void arity(size_t minIn, size_t maxIn, size_t minOut, size_t maxOut) const;
  /// Fails unless tensor `t` has `n` elements.
  void expectElements(const TensorInfo &t, size_t n, const char *what) const;
  template <typename T> T attr(const char *name, T fallback) const {
    auto it = op.attrs.find(name);
    if (it == op.attrs.end() || it->is_null())
      return fallback;
    try {
      return it->get<T>();
    } catch (const nlohmann::json::exception &) {
      fail(std::string("attribute '") + name + "' has the wrong type: " +
           it->dump());
    }
  }
  std::vector<int64_t> pair(const char *name,
                            std::vector<int64_t> fallback) const;
  bool accumulate() const { return attr("accumulate", false); }
};

/// A gradient output honouring the op's `accumulate` flag: kernels write
/// into data(), commit() adds it to the tensor when accumulating.
class GradOut {
public:
  GradOut(const Ctx &c, float *dst, size_t n);
  float *data() { return acc ? tmp.data() : dst; }
  void commit();

private:
  float *dst;
  size_t n;
  bool acc;
  std::vector<float> tmp;
};

/// conv2d's geometry, read from the op's tensors and attributes (shared by
/// conv2d and conv2d_bwd; x is in(xIndex), w is in(wIndex)).
struct ConvGeometry {
  int64_t samples, C, H, W, O, Cg, KH, KW, OH, OW, groups, Og;
  /// NHWC x and y, [O, KH, KW, C] w (the op's "channels_last").
  bool channelsLast = false;
  /// pad: before each spatial dim (the index offset); padEnd: after it.
  std::vector<int64_t> stride, pad, padEnd, dil;
  int64_t cols() const { return OH * OW; }
  int64_t kdim() const { return Cg * KH * KW; }
  ConvGeometry(const Ctx &c, const TensorInfo &x, const TensorInfo &w,
               const TensorInfo &y);
};

/// Runs the op's `launches`, the generated kernels after its library call
/// (docs/artifact-format.md, "Layer ops: library calls and their kernels").
void runOpLaunches(const Ctx &c);
/// Runs the generated kernel of `launch` (its "kernel") on `pointers`.
void launchKernelAt(const Ctx &c, const nlohmann::json &launch,
                    std::vector<void *> pointers);

/// The op's scratch tensors (after its results in `out`).
size_t scratchCount(const Ctx &c);

/// A convolution's `columns`: chunks of `images` images, each through the
/// column buffer `col` [C*KH*KW, images*OH*OW] and `rows` [O, images*OH*OW]
/// (NHWC: `col` [images*OH*OW, KH*KW*C] only; `rows` is null).
struct ConvColumns {
  int64_t images;
  float *col, *rows;
  const nlohmann::json &op;
  ConvColumns(const Ctx &c, const ConvGeometry &g);
  /// The launch `name` of the plan ("im2col", "col2im", "channels_first",
  /// "channels_last") on (source, destination).
  void run(const Ctx &c, const char *name, const float *from, float *to) const;
};

// The op families, one file each.
void runNeuron(const Ctx &c);
void runNeuronStep(const Ctx &c);
void runNeuronStepBackward(const Ctx &c);
/// time_slice / time_stack: the edges of an unrolled recurrent loop.
void runTimeSlice(const Ctx &c);
void runTimeStack(const Ctx &c);
/// A recurrent time loop: runs the body's ops once per step.
void runTimeLoop(const Ctx &c);
void runNeuronBackward(const Ctx &c);
/// A neuron or neuron_bwd op that counts its output for an event-driven
/// layer ("spike_count"): zeroes the decision and runs the op with the
/// limit and decision as its kernel's last arguments.
void runCountingNeuron(const Ctx &c);
void runLayerBackward(const Ctx &c); // linear/conv

/// A counter-based uniform [0, 1) (the rate encoder's; the generated
/// dropout kernels draw the same way).
float counterUniform(uint64_t seed, uint64_t index);

} // namespace cpu
} // namespace snnrt

#endif // SNNRT_LIB_CPUOPCONTEXT_H
