//===- NeuronOps.cpp - neuron layers on the GPU: their generated kernels --===//
//
// A neuron op (neuron, neuron_bwd, neuron_step, neuron_step_bwd) runs only
// the kernel the compiler generated for it (the module's cubin/PTX; the ABI
// is in docs/artifact-format.md): this file checks the op's tensors against
// that ABI and launches it. The semantics live in the compiler alone.
//
//===----------------------------------------------------------------------===//

#include "CudaOps.h"
#include "snnrt/BatchNormSums.h"
#include "snnrt/Manifest.h"

#include <algorithm>
#include <optional>

using namespace snnrt::cuda;
using nlohmann::json;

namespace {

/// What the tensor checks need of a layer: T steps (1 for a step op) of N
/// neurons, and the model's state tensors.
struct Layer {
  std::string model;
  long long steps = 0, neurons = 0;
  bool li = false, cuba = false, plif = false;
};

Layer readLayer(const OpCall &call, const DeviceTensor &x, bool step = false) {
  Layer l;
  l.model = call.op.value("model", "lif");
  if (l.model != "lif" && l.model != "if" && l.model != "plif" &&
      l.model != "li" && l.model != "cuba_lif")
    opError(call, "unknown neuron model '" + l.model +
                      "' (expected lif, if, plif, li or cuba_lif)");
  if (!step && (x.shape.empty() || x.shape[0] <= 0))
    opError(call, "input " + x.name + " must be [T, ...] with T > 0");
  l.steps = step ? 1 : x.shape[0];
  l.neurons = x.numel() / l.steps;
  l.li = l.model == "li";
  l.cuba = l.model == "cuba_lif";
  l.plif = l.model == "plif";
  return l;
}

void checkShape(const OpCall &call, const DeviceTensor &t,
                const DeviceTensor &x) {
  if (t.numel() != x.numel())
    opError(call, "tensor " + t.name + " has " + std::to_string(t.numel()) +
                      " elements; expected " + std::to_string(x.numel()) +
                      " like " + x.name);
}

/// The name of the op's generated kernel `which` ("fwd", "fwd_h",
/// "fwd_record", "bwd"); an error when the module lacks it for this device.
std::string neuronKernel(CudaDevice &device, const OpCall &call,
                         const char *which) {
  const json &op = call.op;
  if (!op.contains("kernel") || !op["kernel"].is_object() ||
      !op["kernel"].contains(which) || !op["kernel"][which].is_string())
    opError(call, std::string("the layer names no generated kernel "
                              "('kernel': {\"") +
                      which +
                      "\": ...}) and the runtime has no neuron code of its "
                      "own; recompile the module with this version's snn-opt "
                      "--snn-compile=\"target=cuda\" (or target=all)");
  if (!device.kernels().hasCompiled())
    opError(call, "the layer runs only as its generated kernel, and the "
                  "module has no cubin or PTX for this GPU; recompile it with "
                  "snn-opt --snn-compile=\"target=cuda\" (or target=all)");
  return op["kernel"][which].get<std::string>();
}

/// Launches the generated kernel `which` with the documented ABI: the
/// tensors of `args`, then `in[firstParam..]`.
void launch(CudaDevice &device, OpCall &call, const char *which,
            std::vector<CUdeviceptr> args, size_t firstParam) {
  std::string name = neuronKernel(device, call, which);
  const json &k = call.op["kernel"];
  long long block = k.value("block", 0LL), grid = k.value("grid", 0LL);
  if (block <= 0 || block > 1024 || grid <= 0)
    opError(call, "'kernel' needs block in 1..1024 and grid > 0");
  for (size_t i = firstParam; i < call.in.size(); ++i)
    args.push_back(call.in[i].ptr);
  args.insert(args.end(), call.tail.begin(), call.tail.end());
  std::vector<void *> params;
  for (CUdeviceptr &p : args)
    params.push_back(&p);
  params.push_back(nullptr);
  CUfunction fn = device.kernels().compiledKernel(name, call.where);
  device.launchRaw(fn, static_cast<unsigned>(grid),
                   static_cast<unsigned>(block), 0, params.data(), call.where);
  if (call.kernelUsed)
    *call.kernelUsed = "compiled kernel " + name;
}

/// The op's `recompute_chunk` (0: H is saved); lif and if only.
long long recomputeChunk(const OpCall &call, const Layer &l) {
  long long chunk = call.op.value("recompute_chunk", 0LL);
  if (chunk < 0 || (chunk > 0 && l.model != "lif" && l.model != "if"))
    opError(call, "'recompute_chunk' = " + std::to_string(chunk) +
                      " must be 0, or positive on a lif or if layer");
  return chunk;
}

/// The membrane checkpoints of a layer that recomputes H.
void checkCheckpoints(const OpCall &call, const DeviceTensor &ckpt,
                      const Layer &l, long long chunk) {
  long long chunks = (l.steps + chunk - 1) / chunk;
  long long want = std::max(chunks - 1, 1LL) * l.neurons;
  if (static_cast<long long>(ckpt.numel()) != want)
    opError(call, "checkpoint tensor " + ckpt.name + " has " +
                      std::to_string(ckpt.numel()) + " elements; expected " +
                      std::to_string(want) + " (max(ceil(T/C) - 1, 1) x N)");
}

/// The kernel was generated for one element type of the saved H; a
/// manifest that gives the tensor another one would be misread.
void checkKernelHType(const OpCall &call, const DeviceTensor &h) {
  const json &k = call.op["kernel"];
  std::string kernelType = k.contains("h_dtype") && k["h_dtype"].is_string()
                               ? k["h_dtype"].get<std::string>()
                               : "f32";
  std::string tensorType = h.bf16 ? "bf16" : "f32";
  if (kernelType != tensorType)
    opError(call, "the compiled kernel reads and writes H as " + kernelType +
                      " but tensor " + h.name + " is " + tensorType +
                      "; recompile the module (snn-opt --snn-compile)");
}

/// plif's weight gradient: the kernel's blocks add their partial sums into
/// it, so it starts at zero.
void zeroPlifGradient(CudaDevice &device, const OpCall &call,
                      const DeviceTensor &gw) {
  const json &w = call.op.contains("plif_w") ? call.op["plif_w"] : json();
  if (!w.is_object() || !w.contains("tensor") ||
      !w["tensor"].is_number_integer())
    opError(call, "plif needs 'plif_w': {\"tensor\": id}");
  DeviceTensor weight = call.tensor(w["tensor"].get<int64_t>());
  checkShape(call, gw, weight);
  device.zero(gw.ptr, gw.numel() * sizeof(float), call.where);
}

/// Gradients are written, never accumulated into.
void rejectAccumulate(const OpCall &call) {
  if (attrBool(call, "accumulate", false))
    opError(call, "a neuron backward writes its gradients ('accumulate' is "
                  "not supported); recompile the module with this version's "
                  "snn-opt");
}

/// An infer op whose state snn-run records (`"record": true`): out = S (li:
/// H), H, V, written by the layer's generated record kernel.
void runForwardRecord(CudaDevice &device, OpCall &call) {
  expectArity(call, 1, 64, 3, 3);
  const DeviceTensor &x = call.in[0];
  for (const DeviceTensor &t : call.out)
    checkShape(call, t, x);
  launch(device, call, "fwd_record",
         {x.ptr, call.out[0].ptr, call.out[1].ptr, call.out[2].ptr}, 1);
}

/// The window area KH KW of a layer fused with its pooling (--snn-fuse,
/// `"pool"`), 1 without one: its kernels write the pooled spikes and read
/// their gradient, one value per window.
long long poolArea(const OpCall &call) {
  if (!call.op.contains("pool"))
    return 1;
  const json &pool = call.op["pool"];
  const json *kernel =
      pool.is_object() && pool.contains("kernel") ? &pool["kernel"] : nullptr;
  if (!kernel || !kernel->is_array() || kernel->size() != 2 ||
      !(*kernel)[0].is_number_integer() || !(*kernel)[1].is_number_integer() ||
      (*kernel)[0].get<long long>() <= 0 || (*kernel)[1].get<long long>() <= 0)
    opError(call, "'pool' must be {\"kind\": \"avg\"|\"sum\", \"kernel\": "
                  "[KH, KW]}, got " + pool.dump());
  if (attrBool(call, "record", false))
    opError(call, "a layer fused with its pooling writes no spikes to record; "
                  "compile the module without --snn-fuse to record it");
  return (*kernel)[0].get<long long>() * (*kernel)[1].get<long long>();
}

/// `pooled` holds one value per window of the neurons of `full`.
void checkPooled(const OpCall &call, const DeviceTensor &pooled,
                 const DeviceTensor &full, long long area) {
  if (full.numel() % area || pooled.numel() != full.numel() / area)
    opError(call, "tensor " + pooled.name + " has " +
                      std::to_string(pooled.numel()) + " elements; expected " +
                      full.name + "'s " + std::to_string(full.numel()) +
                      " / " + std::to_string(area) +
                      " (one per pooling window)");
}

void runForward(CudaDevice &device, OpCall &call) {
  long long area = poolArea(call);
  if (area == 1 && attrBool(call, "record", false))
    return runForwardRecord(device, call);
  expectArity(call, 1, 64, 1, 3);
  const DeviceTensor &x = call.in[0];
  Layer l = readLayer(call, x);
  bool saveH = attrBool(call, "save_h", false);
  size_t outs = 1 + (saveH ? 1 : 0) + (saveH && l.cuba ? 1 : 0);
  if (call.out.size() != outs)
    opError(call, "expected " + std::to_string(outs) + " outputs (s" +
                      (saveH ? ", h" : "") + (saveH && l.cuba ? ", i" : "") +
                      "), got " + std::to_string(call.out.size()));
  long long chunk = saveH ? recomputeChunk(call, l) : 0;
  // A fused layer's output is the pooled spikes.
  if (call.op.contains("pool"))
    checkPooled(call, call.out[0], x, area);
  // Row bits: T x N / 32 u32 words (the generated kernel's bytes).
  bool rowBits = call.op.value("spike_bits", std::string()) == "rows";
  if (rowBits && call.out[0].numel() * 32 != x.numel())
    opError(call, "tensor " + call.out[0].name + " has " +
                      std::to_string(call.out[0].numel()) +
                      " words; expected " + std::to_string(x.numel() / 32) +
                      " (row bits of " + x.name + ")");
  for (size_t i = call.op.contains("pool") || rowBits ? 1 : 0;
       i < call.out.size(); ++i)
    if (i != 1 || chunk == 0)
      checkShape(call, call.out[i], x);
  if (chunk > 0)
    checkCheckpoints(call, call.out[1], l, chunk);
  else if (saveH)
    checkKernelHType(call, call.out[1]);
  std::vector<CUdeviceptr> args{x.ptr};
  for (const DeviceTensor &t : call.out)
    args.push_back(t.ptr);
  launch(device, call, "fwd", args, 1);
}

void runBackward(CudaDevice &device, OpCall &call) {
  expectArity(call, 2, 64, 1, 2);
  rejectAccumulate(call);
  const DeviceTensor &gs = call.in[0], &h = call.in[1];
  // A fused layer reads the pooled gradient: the neurons are gx's.
  long long area = poolArea(call);
  const DeviceTensor &gx = call.out[0];
  Layer l = readLayer(call, gx);
  // A layer that forms gx of the thin linear after it reads that linear's
  // gy [.., C] and its weight (the last input, passed after the parameters).
  snnrt::LinearGrad linear = snnrt::readLinearGrad(
      call.op, gs.numel(), call.in.back().numel(), call.where);
  bool broadcast = snnrt::readGradBroadcast(call.op, call.where);
  if (call.op.contains("pool"))
    checkPooled(call, gs, gx, area);
  else if (broadcast && gs.numel() * l.steps != gx.numel())
    opError(call, "tensor " + gs.name + " has " +
                      std::to_string(gs.numel()) + " elements; expected " +
                      gx.name + "'s neurons of one step (the gradient of "
                      "the time mean, 'grad_broadcast')");
  else if (linear && linear.neuronsOf(gs.numel()) != gx.numel())
    opError(call, "tensor " + gs.name + " has " +
                      std::to_string(gs.numel()) + " elements; expected " +
                      gx.name + "'s rows times 'linear_grad' outputs");
  else if (!linear && !broadcast)
    checkShape(call, gx, gs);
  if (long long chunk = recomputeChunk(call, l)) {
    // in: gs, X, the membrane checkpoints: the kernel recomputes H (with a
    // fused batch norm from the batch norm's x, normalized again).
    size_t bn = snnrt::recomputedBatchNormInputs(call.op);
    size_t outs = bn && call.op["bn"].contains("parts") ? 2 : 1;
    expectArity(call, 3 + bn, 64, outs, outs);
    checkShape(call, call.in[1], gx);
    checkCheckpoints(call, call.in[2], l, chunk);
    std::vector<CUdeviceptr> args{gs.ptr, call.in[1].ptr, call.in[2].ptr,
                                  call.out[0].ptr};
    if (bn) {
      snnrt::RecomputedBatchNormTensors t{
          size_t(gx.numel()),         size_t(call.in[1].numel()),
          size_t(call.in[3].numel()), size_t(call.in[4].numel()),
          size_t(call.in[5].numel()), size_t(call.in[6].numel()),
          size_t(call.in[7].numel()),
          outs == 2 ? size_t(call.out[1].numel()) : 0};
      std::string why = snnrt::checkRecomputedBatchNorm(call.op["bn"], t);
      if (!why.empty())
        opError(call, why);
      for (size_t i = 3; i < 3 + bn; ++i)
        args.push_back(call.in[i].ptr);
      if (outs == 2)
        args.push_back(call.out[1].ptr);
    }
    launch(device, call, "bwd", std::move(args), 3 + bn);
    return;
  }
  checkShape(call, h, gx);
  bool sums = call.op.contains("bn");
  if (!sums && l.plif != (call.out.size() == 2))
    opError(call, l.plif ? "plif backward needs outputs (gx, gw)"
                         : "expected one output (gx)");
  checkKernelHType(call, h);
  size_t firstParam = l.cuba ? 3 : 2;
  if (call.in.size() < firstParam)
    opError(call, "cuba_lif backward needs the saved synaptic current");
  std::vector<CUdeviceptr> args{gs.ptr, h.ptr, call.out[0].ptr};
  if (l.cuba) {
    checkShape(call, call.in[2], gx);
    args.push_back(call.in[2].ptr);
  }
  if (sums) {
    // x, saved_mean, saved_invstd, then the sums after gx (BatchNormSums.h).
    snnrt::BatchNormSumsTensors t;
    t.gx = gx.numel();
    auto count = [](const std::vector<DeviceTensor> &ts, size_t i) {
      return i < ts.size() ? static_cast<size_t>(ts[i].numel()) : 0;
    };
    t.x = count(call.in, firstParam);
    t.mean = count(call.in, firstParam + 1);
    t.invstd = count(call.in, firstParam + 2);
    t.sums = count(call.out, 1);
    std::string why = snnrt::checkBatchNormSums(call.op["bn"], t);
    if (!why.empty())
      opError(call, why);
    for (size_t i = 0; i < 3; ++i)
      args.push_back(call.in[firstParam + i].ptr);
    args.push_back(call.out[1].ptr);
    firstParam += 3;
  }
  if (l.plif) {
    zeroPlifGradient(device, call, call.out[1]);
    args.push_back(call.out[1].ptr);
  }
  launch(device, call, "bwd", args, firstParam);
}

/// One step of a recurrent layer inside a time loop: the state is read from
/// and written to tensors.
void runStep(CudaDevice &device, OpCall &call) {
  const DeviceTensor &x = call.in.at(0);
  Layer l = readLayer(call, x, /*step=*/true);
  bool saveH = attrBool(call, "save_h", false);
  size_t states = l.cuba ? 2 : 1, outs = (l.li ? 1 : 1 + states) + saveH;
  expectArity(call, 1 + states, 64, outs, outs);
  for (size_t i = 1; i <= states; ++i)
    checkShape(call, call.in[i], x);
  for (const DeviceTensor &t : call.out)
    checkShape(call, t, x);
  // x, the state, the outputs, then the other inputs (plif's weight, the
  // addend, the parameters).
  std::vector<CUdeviceptr> args;
  for (size_t i = 0; i <= states; ++i)
    args.push_back(call.in[i].ptr);
  for (const DeviceTensor &t : call.out)
    args.push_back(t.ptr);
  launch(device, call, saveH ? "fwd_h" : "fwd", args, 1 + states);
}

/// The backward of one recurrent step: the membrane gradient is read from
/// and written to tensors.
void runStepBackward(CudaDevice &device, OpCall &call) {
  rejectAccumulate(call);
  const DeviceTensor &gs = call.in.at(0);
  Layer l = readLayer(call, gs, /*step=*/true);
  // in: gS, [cuba: gI'], gV', H, [plif: V before the step, w], parameters;
  // out: gX, [cuba: gI], gV, [plif: gw].
  size_t grads = l.cuba ? 3 : 2, outs = grads + (l.plif ? 1 : 0);
  expectArity(call, grads + 1 + (l.plif ? 2 : 0), 64, outs, outs);
  for (size_t i = 1; i <= grads + (l.plif ? 1 : 0); ++i)
    checkShape(call, call.in[i], gs);
  for (size_t i = 0; i < grads; ++i)
    checkShape(call, call.out[i], gs);
  if (l.plif)
    zeroPlifGradient(device, call, call.out[grads]);
  // The gradients and H, the outputs, then V before the step, w and the
  // parameters.
  std::vector<CUdeviceptr> args;
  for (size_t i = 0; i <= grads; ++i)
    args.push_back(call.in[i].ptr);
  for (const DeviceTensor &t : call.out)
    args.push_back(t.ptr);
  launch(device, call, "bwd", args, grads + 1);
}
} // namespace

/// A neuron op that counts its output for an event-driven layer
/// ("spike_count"): its limit and decision leave `in` and `out` for the
/// kernel's last arguments, and the decision, which the kernel's blocks add
/// into, is zeroed first (in stream order).
static void takeFusedCount(CudaDevice &device, OpCall &call) {
  std::vector<int> in = call.op.value("in", std::vector<int>{});
  std::vector<int> out = call.op.value("out", std::vector<int>{});
  snnrt::FusedCount count = snnrt::readFusedCount(call.op, in, out, call.where);
  if (!count)
    return;
  // takeTimeMean took the time mean out already.
  if (int mean = snnrt::readTimeMean(call.op, out, call.where); mean >= 0)
    out.erase(std::find(out.begin(), out.end(), mean));
  if (in.size() != call.in.size() || out.size() != call.out.size())
    opError(call, "the op's tensors do not match its 'in' and 'out'");
  size_t l = std::find(in.begin(), in.end(), count.limit) - in.begin();
  size_t d = std::find(out.begin(), out.end(), count.decision) - out.begin();
  if (call.in[l].numel() != 1 || call.out[d].numel() != 2)
    opError(call, "'spike_count' needs a one-word limit and a two-word "
                  "decision");
  device.zero(call.out[d].ptr, 2 * sizeof(int32_t), call.where);
  call.tail.insert(call.tail.end(), {call.in[l].ptr, call.out[d].ptr});
  std::optional<DeviceTensor> bits;
  if (count.bits >= 0) {
    // gx's row bits: the kernel argument before the limit.
    size_t i = std::find(out.begin(), out.end(), count.bits) - out.begin();
    bits = call.out[i];
    call.tail.insert(call.tail.end() - 2, bits->ptr);
  }
  call.in.erase(call.in.begin() + l);
  call.out.erase(call.out.begin() + d);
  if (bits) {
    call.out.erase(std::find_if(
        call.out.begin(), call.out.end(),
        [&](const DeviceTensor &t) { return t.ptr == bits->ptr; }));
    if (call.out.empty() || bits->numel() * 32 != call.out[0].numel())
      opError(call, "tensor " + bits->name + " has " +
                        std::to_string(bits->numel()) +
                        " words; expected one per 32 entries of gx");
  }
}

/// A training neuron op that writes its time mean ("time_mean"): the mean
/// leaves `out` for the kernel argument after the parameters (before a
/// fused count's). Runs before takeFusedCount, while `out` matches the
/// op's "out".
static void takeTimeMean(OpCall &call) {
  std::vector<int> out = call.op.value("out", std::vector<int>{});
  int mean = snnrt::readTimeMean(call.op, out, call.where);
  if (mean < 0)
    return;
  if (out.size() != call.out.size())
    opError(call, "the op's tensors do not match its 'out'");
  size_t i = std::find(out.begin(), out.end(), mean) - out.begin();
  const DeviceTensor &x = call.in.at(0);
  if (x.shape.empty() || x.shape[0] <= 0 ||
      call.out[i].numel() * x.shape[0] != x.numel())
    opError(call, "the time mean " + call.out[i].name +
                      " must hold one value per neuron of a step of " +
                      x.name);
  call.tail.insert(call.tail.begin(), call.out[i].ptr);
  call.out.erase(call.out.begin() + i);
}

bool snnrt::cuda::runNeuronOp(CudaDevice &device, OpCall &call) {
  std::string kind = call.op.value("op", "");
  if (kind == "neuron")
    takeTimeMean(call);
  if (kind == "neuron" || kind == "neuron_bwd")
    takeFusedCount(device, call);
  if (kind == "neuron")
    runForward(device, call);
  else if (kind == "neuron_bwd")
    runBackward(device, call);
  else if (kind == "neuron_step")
    runStep(device, call);
  else if (kind == "neuron_step_bwd")
    runStepBackward(device, call);
  else
    return false;
  return true;
}
