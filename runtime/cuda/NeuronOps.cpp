//===- NeuronOps.cpp - neuron and neuron_bwd ------------------------------===//
//
// A neuron op runs the module's compiled kernel when it names one (and the
// module brought cubin/PTX), else the built-in scan kernel of Neuron.cu.
//
//===----------------------------------------------------------------------===//

#include "CudaOps.h"
#include "kernels/KernelArgs.h"

#include <cstring>

using namespace snnrt::cuda;
using nlohmann::json;

namespace {
const char *const kParamNames[SNN_NUM_PARAMS] = {
    "k", "c", "v_leak", "v_th", "v_reset", "v_init", "k_syn", "c_syn",
    "i_init"};

bool aligned16(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

/// Sets parameter `index` from the attribute `value` (a number or
/// {"tensor": id} with 1 or F elements).
void setParam(const OpCall &call, SnnNeuronArgs &a, int index,
              const char *name, const json &value) {
  if (value.is_number()) {
    a.scalar[index] = value.get<float>();
    return;
  }
  if (!value.is_object() || !value.contains("tensor") ||
      !value["tensor"].is_number_integer())
    opError(call, std::string("attribute '") + name +
                      "' must be a number or {\"tensor\": id}");
  DeviceTensor t = call.tensor(value["tensor"].get<int64_t>());
  if (t.numel() != 1 && t.numel() != a.features)
    opError(call, std::string("parameter '") + name + "' (tensor " + t.name +
                      ") has " + std::to_string(t.numel()) +
                      " elements; expected 1 or features = " +
                      std::to_string(a.features));
  a.param[index] = t.f32();
  a.paramSize[index] = t.numel();
}

/// `step`: one step of [B, features...] (neuron_step).
SnnNeuronArgs parseNeuron(const OpCall &call, const DeviceTensor &x,
                          bool step = false) {
  SnnNeuronArgs a;
  std::memset(&a, 0, sizeof(a));
  const json &op = call.op;
  std::string model = op.value("model", "");
  if (model == "lif" || model == "if")
    a.model = SNN_MODEL_LIF;
  else if (model == "plif")
    a.model = SNN_MODEL_PLIF;
  else if (model == "li")
    a.model = SNN_MODEL_LI;
  else if (model == "cuba_lif")
    a.model = SNN_MODEL_CUBA;
  else
    opError(call, "unknown neuron model '" + model +
                      "' (expected lif, if, plif, li or cuba_lif)");
  if (!step && (x.shape.empty() || x.shape[0] <= 0))
    opError(call, "input " + x.name + " must be [T, ...] with T > 0");
  a.steps = step ? 1 : x.shape[0];
  a.neurons = x.numel() / a.steps;
  // Without 'features' every neuron has its own parameters.
  a.features = static_cast<long long>(attrNumber(call, "features", a.neurons));
  if (a.features <= 0 || a.neurons % a.features != 0)
    opError(call, "'features' = " + std::to_string(a.features) +
                      " does not divide the " + std::to_string(a.neurons) +
                      " neurons per step of " + x.name);

  // Defaults for what a manifest may leave out (the compiler writes every
  // parameter): SpikingJelly's LIFNode(tau=2), as the CPU backend.
  bool soft = op.value("reset", "hard") == "soft";
  a.softReset = soft;
  a.scalar[SNN_PARAM_K] = 0.5f;
  a.scalar[SNN_PARAM_C] = 0.5f;
  a.scalar[SNN_PARAM_V_TH] = 1.0f;
  a.scalar[SNN_PARAM_K_SYN] = 0.5f;
  a.scalar[SNN_PARAM_C_SYN] = 1.0f;
  for (int i = 0; i < SNN_NUM_PARAMS; ++i) {
    a.paramSize[i] = 1;
    if (op.contains(kParamNames[i]))
      setParam(call, a, i, kParamNames[i], op[kParamNames[i]]);
  }
  if (!op.contains("v_init") && !soft) {
    a.scalar[SNN_PARAM_V_INIT] = a.scalar[SNN_PARAM_V_RESET];
    a.param[SNN_PARAM_V_INIT] = a.param[SNN_PARAM_V_RESET];
    a.paramSize[SNN_PARAM_V_INIT] = a.paramSize[SNN_PARAM_V_RESET];
  }
  if (model == "if") {
    a.scalar[SNN_PARAM_K] = 0.0f;
    a.param[SNN_PARAM_K] = nullptr;
  }
  if (a.model == SNN_MODEL_PLIF) {
    if (!op.contains("plif_w"))
      opError(call, "plif needs 'plif_w': {\"tensor\": id}");
    setParam(call, a, SNN_PARAM_K, "plif_w", op["plif_w"]);
    if (!a.param[SNN_PARAM_K])
      opError(call, "'plif_w' must be {\"tensor\": id} (a learnable weight)");
    a.decayInput = attrBool(call, "decay_input", true);
  }
  std::string reset = op.value("reset", "hard");
  if (reset != "hard" && reset != "soft")
    opError(call, "'reset' must be \"hard\" or \"soft\", not '" + reset + "'");
  a.strict = attrBool(call, "strict", false);
  a.detachReset = attrBool(call, "detach_reset", false);

  a.surrogate = SNN_SG_SIGMOID;
  a.alpha = 4.0f;
  if (op.contains("surrogate")) {
    const json &sg = op["surrogate"];
    std::string kind = sg.value("kind", "sigmoid");
    float alpha;
    if (kind == "sigmoid")
      a.surrogate = SNN_SG_SIGMOID, alpha = 4.0f;
    else if (kind == "atan")
      a.surrogate = SNN_SG_ATAN, alpha = 2.0f;
    else if (kind == "triangle")
      a.surrogate = SNN_SG_TRIANGLE, alpha = 1.0f;
    else if (kind == "fast_sigmoid")
      a.surrogate = SNN_SG_FAST_SIGMOID, alpha = 10.0f;
    else
      opError(call, "unknown surrogate '" + kind +
                        "' (expected sigmoid, atan, triangle or "
                        "fast_sigmoid)");
    a.alpha = sg.contains("alpha") && sg["alpha"].is_number()
                  ? sg["alpha"].get<float>()
                  : alpha;
    if (sg.contains("theta_grad") && sg["theta_grad"].is_number()) {
      a.hasThetaGrad = 1;
      a.thetaGrad = sg["theta_grad"].get<float>();
    }
    if (sg.contains("grad_band")) {
      const json &band = sg["grad_band"];
      if (!band.is_number() || !(band.get<double>() > 0.0))
        opError(call, "surrogate grad_band must be a number > 0 (the "
                      "half-width of the band |H - v_th| <= B that keeps the "
                      "gradient), got " +
                          band.dump());
      a.hasGradBand = 1;
      a.gradBand = band.get<float>();
    }
  }
  return a;
}

void checkShape(const OpCall &call, const DeviceTensor &t,
                const DeviceTensor &x) {
  if (t.numel() != x.numel())
    opError(call, "tensor " + t.name + " has " + std::to_string(t.numel()) +
                      " elements; expected " + std::to_string(x.numel()) +
                      " like " + x.name);
}

/// Launches the compiled kernel `name` with the documented ABI: the tensors
/// of `fixed`, then `in[firstParam..]`.
void launchCompiled(CudaDevice &device, OpCall &call, const std::string &name,
                    std::vector<CUdeviceptr> args, size_t firstParam) {
  const json &k = call.op["kernel"];
  long long block = k.value("block", 0LL), grid = k.value("grid", 0LL);
  if (block <= 0 || block > 1024 || grid <= 0)
    opError(call, "'kernel' needs block in 1..1024 and grid > 0");
  for (size_t i = firstParam; i < call.in.size(); ++i)
    args.push_back(call.in[i].ptr);
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

void launchBuiltin(CudaDevice &device, OpCall &call, SnnNeuronArgs &a,
                   bool backward) {
  bool vec = a.neurons % 4 == 0;
  for (const void *p : {(const void *)a.in, (const void *)a.out,
                        (const void *)a.h, (const void *)a.syn,
                        (const void *)a.vIn, (const void *)a.iIn,
                        (const void *)a.vOut, (const void *)a.iOut,
                        (const void *)a.addend})
    vec = vec && (!p || aligned16(p));
  int width = vec ? 4 : 1;
  std::string name = std::string("snnrt_neuron_") + (backward ? "bwd" : "fwd") +
                     (vec ? "_w4" : "_w1");
  long long threads = a.neurons / width;
  unsigned grid = static_cast<unsigned>((threads + 255) / 256);
  device.launch(device.kernels().builtin(name, call.where), grid, 256, 0,
                call.where, a);
  if (call.kernelUsed)
    *call.kernelUsed = "built-in kernel " + name;
}

/// The compiled kernel `which` ("fwd"/"bwd") that the op names, if the
/// module brought one.
bool compiledKernelFor(CudaDevice &dev, const OpCall &call, const char *which,
                       std::string &name) {
  if (!call.useCompiledKernels || !dev.kernels().hasCompiled() ||
      !call.op.contains("kernel") || !call.op["kernel"].is_object())
    return false;
  const json &k = call.op["kernel"];
  if (!k.contains(which) || !k[which].is_string())
    return false;
  name = k[which].get<std::string>();
  return true;
}

/// The op's `recompute_chunk` (0: H is saved); lif and if only.
long long recomputeChunk(const OpCall &call, const SnnNeuronArgs &a) {
  long long chunk = call.op.value("recompute_chunk", 0LL);
  if (chunk < 0 || (chunk > 0 && a.model != SNN_MODEL_LIF))
    opError(call, "'recompute_chunk' = " + std::to_string(chunk) +
                      " must be 0, or positive on a lif or if layer");
  return chunk;
}

constexpr const char *recomputeNeedsKernels =
    "a layer that recomputes H (recompute_chunk) runs only its generated "
    "kernels, which this module or device lacks: recompile the module with "
    "target=cuda|all, or without recompute";

/// The membrane checkpoints of a layer that recomputes H.
void checkCheckpoints(const OpCall &call, const DeviceTensor &ckpt,
                      const SnnNeuronArgs &a, long long chunk) {
  long long chunks = (a.steps + chunk - 1) / chunk;
  long long want = std::max(chunks - 1, 1LL) * a.neurons;
  if (static_cast<long long>(ckpt.numel()) != want)
    opError(call, "checkpoint tensor " + ckpt.name + " has " +
                      std::to_string(ckpt.numel()) + " elements; expected " +
                      std::to_string(want) + " (max(ceil(T/C) - 1, 1) x N)");
}

/// The compiled kernel was generated for one element type of the saved H;
/// a manifest that gives the tensor another one would be misread.
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

/// An infer op whose state snn-run records (`"record": true`): out = S (li:
/// H), H, V, written by the layer's generated record kernel.
void runForwardRecord(CudaDevice &device, OpCall &call) {
  expectArity(call, 1, 64, 3, 3);
  const DeviceTensor &x = call.in[0];
  for (const DeviceTensor &t : call.out)
    checkShape(call, t, x);
  std::string name;
  if (!compiledKernelFor(device, call, "fwd_record", name))
    opError(call, "recording the state of this layer on the GPU needs its "
                  "compiler-generated kernels, which this module or device "
                  "lacks: recompile the module with target=cuda|all");
  launchCompiled(device, call, name,
                 {x.ptr, call.out[0].ptr, call.out[1].ptr, call.out[2].ptr}, 1);
}

/// A layer fused with its pooling (--snn-fuse, `"pool"`): only its generated
/// kernel computes the pooled spikes.
void runPooledForward(CudaDevice &device, OpCall &call) {
  const json &pool = call.op["pool"];
  const json *kernel =
      pool.is_object() && pool.contains("kernel") ? &pool["kernel"] : nullptr;
  if (!kernel || !kernel->is_array() || kernel->size() != 2 ||
      !(*kernel)[0].is_number_integer() || !(*kernel)[1].is_number_integer() ||
      (*kernel)[0].get<long long>() <= 0 || (*kernel)[1].get<long long>() <= 0)
    opError(call, "'pool' must be {\"kind\": \"avg\"|\"sum\", \"kernel\": "
                  "[KH, KW]}, got " + pool.dump());
  long long area = (*kernel)[0].get<long long>() * (*kernel)[1].get<long long>();
  if (attrBool(call, "record", false) || attrBool(call, "save_h", false))
    opError(call, "a layer fused with its pooling has neither recorded nor "
                  "saved state; compile the module without --snn-fuse to "
                  "record or train it");
  expectArity(call, 1, 64, 1, 1);
  const DeviceTensor &x = call.in[0], &pooled = call.out[0];
  if (x.numel() % area || pooled.numel() != x.numel() / area)
    opError(call, "tensor " + pooled.name + " has " +
                      std::to_string(pooled.numel()) + " elements; expected " +
                      x.name + "'s " + std::to_string(x.numel()) + " / " +
                      std::to_string(area) + " (one per pooling window)");
  std::string name;
  if (!compiledKernelFor(device, call, "fwd", name))
    opError(call, "a layer fused with its pooling runs only as its generated "
                  "kernel, which this module or device lacks; recompile the "
                  "module with target=cuda|all, or without --snn-fuse");
  launchCompiled(device, call, name, {x.ptr, pooled.ptr}, 1);
}

void runForward(CudaDevice &device, OpCall &call) {
  // A layer that applies the batch norm in front of it (--snn-fuse, "bn")
  // reads x: only its generated kernels normalize it.
  std::string fused;
  if (call.op.contains("bn") &&
      !compiledKernelFor(device, call,
                         attrBool(call, "record", false) ? "fwd_record" : "fwd",
                         fused))
    opError(call, "a layer fused with its batch norm runs only as its "
                  "generated kernel, which this module or device lacks; "
                  "recompile the module with target=cuda|all, or without "
                  "--snn-fuse");
  if (call.op.contains("pool"))
    return runPooledForward(device, call);
  if (attrBool(call, "record", false))
    return runForwardRecord(device, call);
  expectArity(call, 1, 64, 1, 3);
  const DeviceTensor &x = call.in[0];
  SnnNeuronArgs a = parseNeuron(call, x);
  bool saveH = attrBool(call, "save_h", false);
  bool cuba = a.model == SNN_MODEL_CUBA;
  size_t outs = 1 + (saveH ? 1 : 0) + (saveH && cuba ? 1 : 0);
  if (call.out.size() != outs)
    opError(call, "expected " + std::to_string(outs) + " outputs (s" +
                      (saveH ? ", h" : "") + (saveH && cuba ? ", i" : "") +
                      "), got " + std::to_string(call.out.size()));
  long long chunk = saveH ? recomputeChunk(call, a) : 0;
  for (size_t i = 0; i < call.out.size(); ++i)
    if (i != 1 || chunk == 0)
      checkShape(call, call.out[i], x);
  if (chunk > 0) {
    // The membrane checkpoints instead of H: only the generated kernel
    // writes them.
    checkCheckpoints(call, call.out[1], a, chunk);
    std::string name;
    if (!compiledKernelFor(device, call, "fwd", name))
      opError(call, recomputeNeedsKernels);
    launchCompiled(device, call, name, {x.ptr, call.out[0].ptr,
                                        call.out[1].ptr}, 1);
    return;
  }
  a.in = x.f32();
  a.out = call.out[0].f32();
  a.h = saveH ? call.out[1].f32() : nullptr;
  a.hBf16 = saveH && call.out[1].bf16;
  a.syn = saveH && cuba ? call.out[2].f32() : nullptr;

  std::string name;
  if (compiledKernelFor(device, call, "fwd", name)) {
    if (saveH)
      checkKernelHType(call, call.out[1]);
    std::vector<CUdeviceptr> args{x.ptr};
    for (const DeviceTensor &t : call.out)
      args.push_back(t.ptr);
    launchCompiled(device, call, name, args, 1);
    return;
  }
  launchBuiltin(device, call, a, /*backward=*/false);
}

void runBackward(CudaDevice &device, OpCall &call) {
  expectArity(call, 2, 64, 1, 2);
  const DeviceTensor &gs = call.in[0], &h = call.in[1];
  SnnNeuronArgs a = parseNeuron(call, gs);
  if (long long chunk = recomputeChunk(call, a)) {
    // in: gs, X, the membrane checkpoints: the generated kernel recomputes H.
    expectArity(call, 3, 64, 1, 1);
    checkShape(call, call.in[1], gs);
    checkShape(call, call.out[0], gs);
    checkCheckpoints(call, call.in[2], a, chunk);
    std::string name;
    if (attrBool(call, "accumulate", false) ||
        !compiledKernelFor(device, call, "bwd", name))
      opError(call, recomputeNeedsKernels);
    launchCompiled(device, call, name,
                   {gs.ptr, call.in[1].ptr, call.in[2].ptr, call.out[0].ptr},
                   3);
    return;
  }
  bool cuba = a.model == SNN_MODEL_CUBA, plif = a.model == SNN_MODEL_PLIF;
  checkShape(call, h, gs);
  checkShape(call, call.out[0], gs);
  if (plif != (call.out.size() == 2))
    opError(call, plif ? "plif backward needs outputs (gx, gw)"
                       : "expected one output (gx)");
  a.in = gs.f32();
  a.h = h.f32();
  a.hBf16 = h.bf16;
  a.out = call.out[0].f32();
  a.accumulate = attrBool(call, "accumulate", false);
  if (plif) {
    const DeviceTensor &gw = call.out[1];
    if (gw.numel() != a.paramSize[SNN_PARAM_K])
      opError(call, "gradient " + gw.name + " has " +
                        std::to_string(gw.numel()) +
                        " elements; the plif weight has " +
                        std::to_string(a.paramSize[SNN_PARAM_K]));
    a.gw = gw.f32();
    if (!a.accumulate)
      device.zero(gw.ptr, gw.numel() * sizeof(float), call.where);
  }

  std::string name;
  if (!a.accumulate && compiledKernelFor(device, call, "bwd", name)) {
    checkKernelHType(call, h);
    size_t firstParam = cuba ? 3 : 2;
    if (call.in.size() < firstParam)
      opError(call, "cuba_lif backward needs the saved synaptic current");
    std::vector<CUdeviceptr> args{gs.ptr, h.ptr, call.out[0].ptr};
    if (cuba)
      args.push_back(call.in[2].ptr);
    if (plif) // gw, zeroed above: every thread adds its part
      args.push_back(call.out[1].ptr);
    launchCompiled(device, call, name, args, firstParam);
    return;
  }
  launchBuiltin(device, call, a, /*backward=*/true);
}
/// One step of a recurrent layer inside a time loop: the built-in kernel
/// with the state read from and written to tensors.
void runStep(CudaDevice &device, OpCall &call) {
  const DeviceTensor &x = call.in.at(0);
  SnnNeuronArgs a = parseNeuron(call, x, /*step=*/true);
  bool cuba = a.model == SNN_MODEL_CUBA, li = a.model == SNN_MODEL_LI;
  bool saveH = attrBool(call, "save_h", false);
  size_t states = cuba ? 2 : 1, outs = (li ? 1 : 1 + states) + saveH;
  expectArity(call, 1 + states, 64, outs, outs);
  if (saveH)
    a.h = call.out.back().f32(); // the step backward needs H, not I
  for (size_t i = 1; i <= states; ++i)
    checkShape(call, call.in[i], x);
  for (const DeviceTensor &t : call.out)
    checkShape(call, t, x);
  a.in = x.f32();
  a.out = call.out[0].f32();
  a.iIn = cuba ? call.in[1].f32() : nullptr;
  a.vIn = call.in[cuba ? 2 : 1].f32();
  a.iOut = cuba ? call.out[1].f32() : nullptr;
  a.vOut = li ? nullptr : call.out[cuba ? 2 : 1].f32();
  if (call.op.contains("addend")) {
    const json &addend = call.op["addend"];
    if (!addend.is_object() || !addend.contains("tensor") ||
        !addend["tensor"].is_number_integer())
      opError(call, "'addend' must be {\"tensor\": id}");
    DeviceTensor t = call.tensor(addend["tensor"].get<int64_t>());
    checkShape(call, t, x);
    a.addend = t.f32();
  }
  // The generated step kernel: x, the state, the outputs, then the other
  // inputs (plif's weight, the addend, the parameters).
  std::string name;
  if (compiledKernelFor(device, call, saveH ? "fwd_h" : "fwd", name)) {
    std::vector<CUdeviceptr> args;
    for (size_t i = 0; i <= states; ++i)
      args.push_back(call.in[i].ptr);
    for (const DeviceTensor &t : call.out)
      args.push_back(t.ptr);
    launchCompiled(device, call, name, args, 1 + states);
    return;
  }
  launchBuiltin(device, call, a, /*backward=*/false);
}
/// The backward of one recurrent step: the built-in backward kernel over
/// one step, with the membrane gradient read from and written to tensors.
void runStepBackward(CudaDevice &device, OpCall &call) {
  const DeviceTensor &gs = call.in.at(0);
  SnnNeuronArgs a = parseNeuron(call, gs, /*step=*/true);
  // in: gS, [cuba: gI'], gV', H, [plif: V before the step, w], parameters;
  // out: gX, [cuba: gI], gV, [plif: gw].
  bool cuba = a.model == SNN_MODEL_CUBA, plif = a.model == SNN_MODEL_PLIF;
  size_t grads = cuba ? 3 : 2, outs = grads + (plif ? 1 : 0);
  expectArity(call, grads + 1 + (plif ? 2 : 0), 64, outs, outs);
  for (size_t i = 1; i <= grads + (plif ? 1 : 0); ++i)
    checkShape(call, call.in[i], gs);
  for (size_t i = 0; i < grads; ++i)
    checkShape(call, call.out[i], gs);
  if (plif) {
    const DeviceTensor &gw = call.out[grads];
    if (gw.numel() != a.paramSize[SNN_PARAM_K])
      opError(call, "gradient " + gw.name + " has " +
                        std::to_string(gw.numel()) +
                        " elements; the plif weight has " +
                        std::to_string(a.paramSize[SNN_PARAM_K]));
    a.vBefore = call.in[grads + 1].f32();
    a.gw = gw.f32();
    // The kernel adds every block's partial sums into gw (gx is written).
    if (!attrBool(call, "accumulate", false))
      device.zero(gw.ptr, gw.numel() * sizeof(float), call.where);
  }
  // The generated kernel: the gradients and H, the outputs (plif's gw,
  // zeroed above), then V before the step, w and the parameters.
  std::string name;
  if (!attrBool(call, "accumulate", false) &&
      compiledKernelFor(device, call, "bwd", name)) {
    std::vector<CUdeviceptr> args;
    for (size_t i = 0; i <= grads; ++i)
      args.push_back(call.in[i].ptr);
    for (const DeviceTensor &t : call.out)
      args.push_back(t.ptr);
    launchCompiled(device, call, name, args, grads + 1);
    return;
  }
  a.in = gs.f32();
  a.iIn = cuba ? call.in[1].f32() : nullptr;
  a.vIn = call.in[grads - 1].f32();
  a.h = call.in[grads].f32();
  a.out = call.out[0].f32();
  a.iOut = cuba ? call.out[1].f32() : nullptr;
  a.vOut = call.out[grads - 1].f32();
  launchBuiltin(device, call, a, /*backward=*/true);
}
} // namespace

bool snnrt::cuda::runNeuronOp(CudaDevice &device, OpCall &call) {
  std::string kind = call.op.value("op", "");
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
