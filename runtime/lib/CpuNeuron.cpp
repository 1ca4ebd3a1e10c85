//===- CpuNeuron.cpp - neuron layers on the CPU: their generated kernels --===//
//
// A neuron op (neuron, neuron_bwd, neuron_step, neuron_step_bwd) runs only
// the kernel the compiler generated for it (kernels.host.so; the ABI is in
// docs/artifact-format.md): this file checks the op's tensors against that
// ABI and launches it. The semantics live in the compiler alone.
//
//===----------------------------------------------------------------------===//

#include "CpuOpContext.h"
#include "HostKernels.h"
#include "snnrt/BatchNormSums.h"

#include <algorithm>
#include <vector>

namespace snnrt {
namespace cpu {
namespace {

/// What the tensor checks need of a layer: T steps (1 for a step op) of N
/// neurons, and the model's state tensors.
struct Layer {
  std::string model;
  int64_t T = 0, N = 0;
  bool li = false, cuba = false, plif = false;
};

Layer readLayer(const Ctx &c, bool step = false) {
  Layer l;
  l.model = c.attr<std::string>("model", "lif");
  if (l.model != "lif" && l.model != "if" && l.model != "plif" &&
      l.model != "li" && l.model != "cuba_lif")
    c.fail("unknown neuron model '" + l.model +
           "' (expected lif, if, plif, li or cuba_lif)");
  const TensorInfo &x = c.in(0);
  if (!step && (x.shape.empty() || x.shape[0] <= 0))
    c.fail("the input " + x.shapeString() + " has no time dimension");
  l.T = step ? 1 : x.shape[0];
  l.N = static_cast<int64_t>(x.numel()) / l.T;
  l.li = l.model == "li";
  l.cuba = l.model == "cuba_lif";
  l.plif = l.model == "plif";
  return l;
}

/// The op's generated kernel `which` ("fwd", "fwd_h", "fwd_record", "bwd").
HostKernel neuronKernel(const Ctx &c, const char *which) {
  auto it = c.op.attrs.find("kernel");
  if (it == c.op.attrs.end() || !it->is_object() || !it->contains(which) ||
      !(*it)[which].is_string())
    c.fail(std::string("the layer names no generated kernel ('kernel': {\"") +
           which +
           "\": ...}) and the runtime has no neuron code of its own; "
           "recompile the module with this version's snn-opt "
           "--snn-compile=\"target=cpu\" (or target=all)");
  std::string name = (*it)[which].get<std::string>();
  std::string missing = cpuKernelsUnavailable(c.m);
  if (!missing.empty())
    c.fail("the layer runs only as its generated kernel '" + name +
           "', and the module's CPU kernel library cannot run here: " +
           missing +
           "; recompile the module on this machine with snn-opt "
           "--snn-compile=\"target=cpu\" (or target=all)");
  return findOpKernel(c.m, name);
}

/// Runs `fn` on the kernel ABI's tensors: `args`, then in[firstParam..].
void callKernel(const Ctx &c, HostKernel fn, std::vector<void *> args,
                size_t firstParam) {
  for (size_t i = firstParam; i < c.op.in.size(); ++i)
    args.push_back(c.inPtr(i));
  args.insert(args.end(), c.tail.begin(), c.tail.end());
  fn(args.data());
}

/// Elements of plif's weight (its `plif_w` tensor), whose gradient the
/// kernels add into a zeroed output.
size_t plifWeightSize(const Ctx &c) {
  auto w = c.op.attrs.find("plif_w");
  if (w == c.op.attrs.end() || !w->is_object() || !w->contains("tensor") ||
      !w->at("tensor").is_number_integer())
    c.fail("plif needs 'plif_w': {\"tensor\": id}");
  int id = w->at("tensor").get<int>();
  if (id < 0 || id >= static_cast<int>(c.m.tensors.size()))
    c.fail("'plif_w' names tensor id " + std::to_string(id) +
           ", which does not exist");
  return c.m.tensor(id).numel();
}

/// The op's `recompute_chunk` C (0: H is saved): the forward saves the
/// membrane before steps C, 2C, ... and the backward recomputes H from X.
int64_t recomputeChunk(const Ctx &c, const Layer &l) {
  int64_t chunk = c.attr<int64_t>("recompute_chunk", 0);
  if (chunk < 0)
    c.fail("'recompute_chunk' must be >= 0, got " + std::to_string(chunk));
  if (chunk > 0 && (l.li || l.cuba || l.plif))
    c.fail("'recompute_chunk' applies to lif and if layers, not " + l.model);
  return chunk;
}

/// Elements of the checkpoint tensor of a layer that recomputes H.
size_t checkpointSize(const Layer &l, int64_t chunk) {
  int64_t chunks = (l.T + chunk - 1) / chunk;
  return static_cast<size_t>(std::max<int64_t>(chunks - 1, 1) * l.N);
}

/// An infer op whose state snn-run records (`"record": true`): out = S (li:
/// H), H, V, from the layer's generated record kernel.
void runNeuronRecord(const Ctx &c, const Layer &l) {
  c.arity(1, c.op.in.size(), 3, 3);
  size_t total = static_cast<size_t>(l.T * l.N);
  for (size_t i = 0; i < 3; ++i)
    c.expectElements(c.out(i), total, "like the input (S, H, V)");
  callKernel(c, neuronKernel(c, "fwd_record"),
             {c.inPtr(0), c.outPtr(0), c.outPtr(1), c.outPtr(2)}, 1);
}

/// The window area KH KW of a layer fused with its pooling (--snn-fuse,
/// `"pool"`), 1 without one.
int64_t poolArea(const Ctx &c) {
  auto it = c.op.attrs.find("pool");
  if (it == c.op.attrs.end())
    return 1;
  const nlohmann::json &pool = *it;
  const nlohmann::json *kernel =
      pool.is_object() && pool.contains("kernel") ? &pool.at("kernel") : nullptr;
  if (!kernel || !kernel->is_array() || kernel->size() != 2 ||
      !(*kernel)[0].is_number_integer() || !(*kernel)[1].is_number_integer() ||
      (*kernel)[0].get<int64_t>() <= 0 || (*kernel)[1].get<int64_t>() <= 0)
    c.fail("'pool' must be {\"kind\": \"avg\"|\"sum\", \"kernel\": [KH, KW]}, "
           "got " + pool.dump());
  int64_t area = (*kernel)[0].get<int64_t>() * (*kernel)[1].get<int64_t>();
  if (c.attr("record", false))
    c.fail("a layer fused with its pooling writes no spikes to record; "
           "compile the module without --snn-fuse to record it");
  return area;
}
/// The number of state tensors a layer split in time (--snn-split-time)
/// takes last in `in` and gives last in `out` (0: none).
size_t chainedStates(const Ctx &c, const Layer &l) {
  int64_t n = c.attr("chained_states", int64_t(0));
  if (n == 0)
    return 0;
  if (n != (l.cuba ? 2 : 1) || c.op.in.size() <= size_t(n) ||
      c.op.out.size() <= size_t(n))
    c.fail("'chained_states' must be the layer's number of state tensors (" +
           std::to_string(l.cuba ? 2 : 1) + "), the last inputs and outputs");
  if (l.plif)
    c.fail("a plif layer cannot be split in time (its weight gradient is "
           "not chained)");
  for (size_t i = 0; i < size_t(n); ++i) {
    c.expectElements(c.in(c.op.in.size() - n + i), size_t(l.N),
                     "a chained state, one value per neuron");
    c.expectElements(c.out(c.op.out.size() - n + i), size_t(l.N),
                     "a chained state, one value per neuron");
  }
  return size_t(n);
}

/// The generated kernel of a layer split in time: the ABI's tensors, then
/// the states in and out (docs/artifact-format.md, "Chained state"), then
/// the tensor parameters. `lead` inputs come first.
void callChained(const Ctx &c, HostKernel fn, std::vector<void *> args,
                 size_t lead, size_t states) {
  size_t firstIn = c.op.in.size() - states, firstOut = c.op.out.size() - states;
  for (size_t i = 0; i < states; ++i)
    args.push_back(c.inPtr(firstIn + i));
  for (size_t i = 0; i < states; ++i)
    args.push_back(c.outPtr(firstOut + i));
  for (size_t i = lead; i < firstIn; ++i)
    args.push_back(c.inPtr(i));
  args.insert(args.end(), c.tail.begin(), c.tail.end());
  fn(args.data());
}

void runChainedNeuron(const Ctx &c, const Layer &l, size_t states) {
  if (c.attr("record", false))
    c.fail("a neuron layer split in time cannot be recorded");
  c.expectElements(c.out(0), size_t(l.T * l.N), "the spikes, like the input");
  std::vector<void *> args{c.inPtr(0)};
  for (size_t i = 0; i + states < c.op.out.size(); ++i)
    args.push_back(c.outPtr(i));
  callChained(c, neuronKernel(c, "fwd"), std::move(args), 1, states);
}

/// gx and (plif) gw of a backward: the kernel overwrites gx and adds gw
/// into zeros; gradients are never accumulated into.
void rejectAccumulate(const Ctx &c) {
  if (c.accumulate())
    c.fail("a neuron backward writes its gradients ('accumulate' is not "
           "supported); recompile the module with this version's snn-opt");
}

} // namespace

void runNeuron(const Ctx &c) {
  // A fused time mean: an output of its own, the kernel argument after the
  // parameters (before a fused count's).
  if (int mean = readTimeMean(c.op.attrs, c.op.out,
                              c.m.dir + ": " + c.op.describe(c.index));
      mean >= 0) {
    Layer l = readLayer(c);
    c.expectElements(c.m.tensor(mean), static_cast<size_t>(l.N),
                     "the time mean, one value per neuron of a step");
    Op op = c.op;
    op.out.erase(std::find(op.out.begin(), op.out.end(), mean));
    op.attrs.erase("time_mean");
    std::vector<void *> tail{c.get(mean)};
    tail.insert(tail.end(), c.tail.begin(), c.tail.end());
    return runNeuron(Ctx{c.m, op, c.index, c.get, c.run, std::move(tail)});
  }
  Layer l = readLayer(c);
  if (size_t states = chainedStates(c, l))
    return runChainedNeuron(c, l, states);
  // A layer fused with its pooling writes the pooled spikes (one value per
  // window), and what its backward reads per neuron.
  int64_t area = poolArea(c);
  if (l.N % area)
    c.fail("the " + std::to_string(l.N) + " neurons of a step do not fill " +
           std::to_string(area) + "-neuron pooling windows");
  if (area == 1 && c.attr("record", false))
    return runNeuronRecord(c, l);
  bool saveH = c.attr("save_h", false);
  size_t outs = 1 + (saveH ? 1 : 0) + (saveH && l.cuba ? 1 : 0);
  c.arity(1, c.op.in.size(), outs, outs);
  size_t total = static_cast<size_t>(l.T * l.N);
  if (c.op.attrs.contains("pool"))
    c.expectElements(c.out(0), total / area,
                     "the pooled spikes, T x N / (KH KW)");
  else if (c.op.attrs.value("spike_bits", std::string()) == "rows")
    c.expectElements(c.out(0), total / 32,
                     "the spikes as row bits, T x N / 32 words");
  else
    c.expectElements(c.out(0), total, l.li ? "H, like the input"
                                           : "the spikes, like the input");
  int64_t chunk = saveH ? recomputeChunk(c, l) : 0;
  if (chunk > 0)
    c.expectElements(c.out(1), checkpointSize(l, chunk),
                     "membrane checkpoints, max(ceil(T/C) - 1, 1) x N");
  else if (saveH)
    c.expectElements(c.out(1), total, "saved H, like the input");
  if (saveH && l.cuba)
    c.expectElements(c.out(2), total, "saved I, like the input");
  std::vector<void *> args{c.inPtr(0)};
  for (size_t i = 0; i < c.op.out.size(); ++i)
    args.push_back(c.outPtr(i));
  callKernel(c, neuronKernel(c, "fwd"), std::move(args), 1);
}

void runNeuronBackward(const Ctx &c) {
  Layer l = readLayer(c);
  rejectAccumulate(c);
  // The gradient of the layer's time mean (in[0], one value per neuron)
  // stands for every step's: the steps are those of in[1] (H, or X).
  if (readGradBroadcast(c.op.attrs, c.m.dir + ": " + c.op.describe(c.index))) {
    c.arity(2, c.op.in.size(), 1, 2);
    const TensorInfo &h = c.in(1);
    if (h.shape.empty() || h.shape[0] <= 0)
      c.fail("the saved " + h.shapeString() + " has no time dimension");
    l.T = h.shape[0];
    l.N = static_cast<int64_t>(h.numel()) / l.T;
    c.expectElements(c.in(0), static_cast<size_t>(l.N),
                     "the gradient of the time mean, one value per neuron "
                     "('grad_broadcast')");
  }
  // A layer fused with its pooling reads the pooled gradient (in[0], one
  // value per window): its neurons are KH KW times as many.
  bool pooled = c.op.attrs.contains("pool");
  l.N *= poolArea(c);
  // A layer that forms gx of the thin linear after it reads that linear's
  // gy [.., C] and its weight (the last input, passed after the parameters).
  if (LinearGrad linear = readLinearGrad(
          c.op.attrs, c.in(0).numel(), c.in(c.op.in.size() - 1).numel(),
          c.m.dir + ": " + c.op.describe(c.index)))
    l.N = linear.neuronsOf(l.N);
  size_t total = static_cast<size_t>(l.T * l.N);
  if (size_t states = chainedStates(c, l)) {
    c.expectElements(c.in(1), total, "saved H, like the gradient");
    c.expectElements(c.out(0), total, "gx, like the gradient");
    std::vector<void *> args{c.inPtr(0), c.inPtr(1), c.outPtr(0)};
    if (l.cuba)
      args.push_back(c.inPtr(2));
    return callChained(c, neuronKernel(c, "bwd"), std::move(args),
                       l.cuba ? 3 : 2, states);
  }
  c.arity(2, c.op.in.size(), 1, 2);
  c.expectElements(c.out(0), total,
                   pooled ? "gx, KH KW values per pooled gradient"
                          : "gx, like the gradient");
  if (int64_t chunk = recomputeChunk(c, l)) {
    // in: gs, X, the membrane checkpoints: the kernel recomputes H (with a
    // fused batch norm from the batch norm's x, normalized again).
    size_t bn = recomputedBatchNormInputs(c.op.attrs);
    size_t outs = bn && c.op.attrs["bn"].contains("parts") ? 2 : 1;
    c.arity(3 + bn, c.op.in.size(), outs, outs);
    c.expectElements(c.in(1), total, "the layer's input X, like the gradient");
    c.expectElements(c.in(2), checkpointSize(l, chunk),
                     "membrane checkpoints, max(ceil(T/C) - 1, 1) x N");
    std::vector<void *> args{c.inPtr(0), c.inPtr(1), c.inPtr(2), c.outPtr(0)};
    if (bn) {
      RecomputedBatchNormTensors t{
          total,           c.in(1).numel(), c.in(3).numel(),
          c.in(4).numel(), c.in(5).numel(), c.in(6).numel(),
          c.in(7).numel(), outs == 2 ? c.out(1).numel() : 0};
      std::string why = checkRecomputedBatchNorm(c.op.attrs["bn"], t);
      if (!why.empty())
        c.fail(why);
      for (size_t i = 3; i < 3 + bn; ++i)
        args.push_back(c.inPtr(i));
      if (outs == 2)
        args.push_back(c.outPtr(1));
    }
    return callKernel(c, neuronKernel(c, "bwd"), std::move(args), 3 + bn);
  }
  c.expectElements(c.in(1), total, "saved H, like the gradient");
  std::vector<void *> args{c.inPtr(0), c.inPtr(1), c.outPtr(0)};
  size_t firstParam = l.cuba ? 3 : 2;
  if (l.cuba) {
    c.arity(3, c.op.in.size(), 1, 2);
    c.expectElements(c.in(2), total, "saved I, like the gradient");
    args.push_back(c.inPtr(2));
  }
  if (auto bn = c.op.attrs.find("bn"); bn != c.op.attrs.end()) {
    // x, saved_mean, saved_invstd, then the sums after gx (BatchNormSums.h).
    BatchNormSumsTensors t;
    t.gx = total;
    auto count = [&](bool input, size_t i) -> size_t {
      size_t n = input ? c.op.in.size() : c.op.out.size();
      return i >= n ? 0 : (input ? c.in(i) : c.out(i)).numel();
    };
    t.x = count(true, firstParam);
    t.mean = count(true, firstParam + 1);
    t.invstd = count(true, firstParam + 2);
    t.sums = count(false, 1);
    std::string why = checkBatchNormSums(*bn, t);
    if (!why.empty())
      c.fail(why);
    for (size_t i = 0; i < 3; ++i)
      args.push_back(c.inPtr(firstParam + i));
    args.push_back(c.outPtr(1));
    firstParam += 3;
  } else if (l.plif) {
    if (c.op.out.size() != 2)
      c.fail("plif needs an output for the gradient of 'plif_w'");
    size_t wn = plifWeightSize(c);
    c.expectElements(c.out(1), wn, "like plif_w");
    std::fill_n(c.outPtr(1), wn, 0.0f);
    args.push_back(c.outPtr(1));
  } else if (c.op.out.size() != 1) {
    c.fail("expected one output (gx)");
  }
  callKernel(c, neuronKernel(c, "bwd"), std::move(args), firstParam);
}

void runNeuronStep(const Ctx &c) {
  Layer l = readLayer(c, /*step=*/true);
  // in: x, the state (cuba: i, v), then plif's weight, the addend and the
  // parameters; out: the output, the next state (li: the membrane is
  // both), H with save_h.
  size_t states = l.cuba ? 2 : 1;
  bool saveH = c.attr("save_h", false);
  size_t outs = (l.li ? 1 : 1 + states) + saveH;
  c.arity(1 + states, 64, outs, outs);
  size_t n = static_cast<size_t>(l.N);
  for (size_t i = 0; i <= states; ++i)
    c.expectElements(c.in(i), n, "like the step's input");
  for (size_t i = 0; i < outs; ++i)
    c.expectElements(c.out(i), n, "like the step's input");
  std::vector<void *> args;
  for (size_t i = 0; i <= states; ++i)
    args.push_back(c.inPtr(i));
  for (size_t i = 0; i < outs; ++i)
    args.push_back(c.outPtr(i));
  callKernel(c, neuronKernel(c, saveH ? "fwd_h" : "fwd"), std::move(args),
             1 + states);
}

void runNeuronStepBackward(const Ctx &c) {
  Layer l = readLayer(c, /*step=*/true);
  rejectAccumulate(c);
  // in: gS (li: gV'), [cuba: gI'], gV', H, [plif: V before the step, w],
  // parameters; out: gX, [cuba: gI], gV, [plif: gw, added into zeros].
  size_t grads = l.cuba ? 3 : 2;
  size_t outs = grads + (l.plif ? 1 : 0);
  c.arity(grads + 1 + (l.plif ? 2 : 0), 64, outs, outs);
  size_t n = static_cast<size_t>(l.N);
  for (size_t i = 0; i <= grads + (l.plif ? 1 : 0); ++i)
    c.expectElements(c.in(i), n, "like the step's input");
  for (size_t i = 0; i < grads; ++i)
    c.expectElements(c.out(i), n, "like the step's input");
  if (l.plif) {
    size_t wn = plifWeightSize(c);
    c.expectElements(c.out(grads), wn, "like plif_w");
    std::fill_n(c.outPtr(grads), wn, 0.0f);
  }
  std::vector<void *> args;
  for (size_t i = 0; i <= grads; ++i)
    args.push_back(c.inPtr(i));
  for (size_t i = 0; i < outs; ++i)
    args.push_back(c.outPtr(i));
  callKernel(c, neuronKernel(c, "bwd"), std::move(args), grads + 1);
}

void runCountingNeuron(const Ctx &c) {
  FusedCount count =
      readFusedCount(c.op.attrs, c.op.in, c.op.out,
                     c.m.dir + ": " + c.op.describe(c.index));
  const TensorInfo &limit = c.m.tensor(count.limit);
  const TensorInfo &decision = c.m.tensor(count.decision);
  if (limit.dtype != DType::I32 || limit.numel() != 1 ||
      decision.dtype != DType::I32 || decision.numel() != 2)
    c.fail("'spike_count' needs a one-word i32 limit and a two-word i32 "
           "decision");
  // The kernel's ranges add their counts and tickets into the decision.
  std::fill_n(reinterpret_cast<int32_t *>(c.get(count.decision)), 2, 0);
  Op op = c.op;
  op.in.erase(std::find(op.in.begin(), op.in.end(), count.limit));
  op.out.erase(std::find(op.out.begin(), op.out.end(), count.decision));
  op.attrs.erase("spike_count");
  std::vector<void *> tail{c.get(count.limit), c.get(count.decision)};
  if (count.bits >= 0) {
    // gx's row bits: the kernel argument before the limit.
    op.out.erase(std::find(op.out.begin(), op.out.end(), count.bits));
    if (op.out.empty() ||
        c.m.tensor(count.bits).numel() * 32 != c.m.tensor(op.out[0]).numel())
      c.fail("tensor " + c.m.tensor(count.bits).name +
             " must hold one word per 32 entries of gx");
    tail.insert(tail.begin(), c.get(count.bits));
  }
  Ctx inner{c.m, op, c.index, c.get, c.run, std::move(tail)};
  if (op.kind == "neuron")
    runNeuron(inner);
  else
    runNeuronBackward(inner);
}

} // namespace cpu
} // namespace snnrt
