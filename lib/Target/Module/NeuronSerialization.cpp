//===- NeuronSerialization.cpp - neuron ops as manifest ops ---------------===//
//
// The runtime must not know the IR's defaults, so every parameter is written
// explicitly. A per-neuron parameter whose values are all equal is written as
// a number: the generated kernels compile it in and take no argument for it.
//
//===----------------------------------------------------------------------===//

#include "NeuronSerialization.h"

#include "snn/Dialect/SNN/IR/SNNOps.h"

#include "llvm/ADT/TypeSwitch.h"
#include <cmath>

using namespace mlir;
using namespace mlir::snn;
using llvm::json::Object;

StringRef mlir::snn::getNeuronModelName(Operation *op) {
  return llvm::TypeSwitch<Operation *, StringRef>(op)
      .Case<LIFOp, LIFStepOp>([](auto) { return "lif"; })
      .Case<IFOp, IFStepOp>([](auto) { return "if"; })
      .Case<PLIFOp, PLIFStepOp>([](auto) { return "plif"; })
      .Case<LIOp, LIStepOp>([](auto) { return "li"; })
      .Case<CubaLIFOp, CubaLIFStepOp>([](auto) { return "cuba_lif"; })
      .Default([](Operation *) { return ""; });
}

namespace {
/// Writes parameters in the ABI order and remembers tensor ids.
class ParamWriter {
public:
  ParamWriter(Object &json, SmallVectorImpl<int64_t> &inputs,
              NeuronConstantFn addConstant)
      : json(json), inputs(inputs), addConstant(addConstant) {}

  /// Writes `name` = `attr` (scalar f64 or dense per-neuron values).
  void write(StringRef name, Attribute attr) {
    if (auto dense = dyn_cast<DenseFPElementsAttr>(attr)) {
      if (!dense.isSplat()) {
        int64_t id = addConstant(name, dense);
        tensors[name] = id;
        inputs.push_back(id);
        json[name] = Object{{"tensor", id}};
        return;
      }
      json[name] = (*dense.getValues<APFloat>().begin()).convertToDouble();
      return;
    }
    json[name] = cast<FloatAttr>(attr).getValueAsDouble();
  }
  void write(StringRef name, double value) { json[name] = value; }
  void write(StringRef name, std::optional<Attribute> attr, double absent) {
    if (attr)
      write(name, *attr);
    else
      write(name, absent);
  }

  /// Writes `name` as the same value as `other`, without a kernel argument of
  /// its own (a defaulted v_init shares v_reset's tensor).
  void writeSameAs(StringRef name, StringRef other) {
    auto it = tensors.find(other);
    if (it != tensors.end())
      json[name] = Object{{"tensor", it->second}};
    else
      json[name] = *json.get(other);
  }

private:
  Object &json;
  SmallVectorImpl<int64_t> &inputs;
  NeuronConstantFn addConstant;
  llvm::StringMap<int64_t> tensors;
};
} // namespace

llvm::json::Object mlir::snn::serializeSurrogate(SurrogateAttr attr) {
  Object json{{"kind", stringifySurrogateKind(attr.getKind())},
              {"alpha", attr.getAlpha().getValueAsDouble()}};
  if (FloatAttr theta = attr.getThetaGrad())
    json["theta_grad"] = theta.getValueAsDouble();
  // JSON has no inf: an infinite band (= no band) is left out.
  if (FloatAttr band = attr.getGradBand();
      band && std::isfinite(band.getValueAsDouble()))
    json["grad_band"] = band.getValueAsDouble();
  return json;
}

/// v_th, v_reset, v_init, reset, strict, surrogate, detach_reset.
template <typename OpT>
static void writeFireParams(OpT op, ParamWriter &params) {
  params.write("v_th", op.getVTh());
  params.write("v_reset", op.getVReset());
  bool soft = op.getReset() == ResetMode::Soft;
  if (std::optional<Attribute> vInit = op.getVInit())
    params.write("v_init", *vInit);
  else if (soft)
    params.write("v_init", 0.0);
  else
    params.writeSameAs("v_init", "v_reset");
}

template <typename OpT>
static void writeFireOptions(OpT op, Object &json) {
  json["reset"] = op.getReset() == ResetMode::Soft ? "soft" : "hard";
  json["strict"] = op.getStrict();
  json["detach_reset"] = op.getDetachReset();
  json["surrogate"] = serializeSurrogate(
      getSurrogateOrDefault(op->getContext(), op.getSurrogateAttr()));
}

void mlir::snn::serializeNeuronAttributes(Operation *op, Object &json,
                                          SmallVectorImpl<int64_t> &paramInputs,
                                          NeuronConstantFn addConstant) {
  auto neuron = cast<NeuronOpInterface>(op);
  auto type = cast<RankedTensorType>(neuron.getInput().getType());
  int64_t features = 1;
  for (int64_t d : type.getShape().drop_front(neuron.getNumLeadingDims()))
    features *= d;
  json["model"] = getNeuronModelName(op);
  json["features"] = features;

  ParamWriter params(json, paramInputs, addConstant);
  llvm::TypeSwitch<Operation *>(op)
      // A step op has the attributes of its multi-step op.
      .Case<LIFOp, LIFStepOp>([&](auto lif) {
        params.write("k", lif.getK());
        params.write("c", lif.getC());
        params.write("v_leak", lif.getVLeak());
        writeFireParams(lif, params);
        writeFireOptions(lif, json);
      })
      .Case<IFOp, IFStepOp>([&](auto ifOp) {
        params.write("k", 0.0);
        params.write("c", ifOp.getC());
        params.write("v_leak", 0.0);
        writeFireParams(ifOp, params);
        writeFireOptions(ifOp, json);
      })
      .Case<PLIFOp, PLIFStepOp>([&](auto plif) {
        // k = sigmoid(w) and c = k (or 1) are computed by the runtime.
        json["decay_input"] = plif.getDecayInput();
        params.write("v_leak", plif.getVLeak());
        writeFireParams(plif, params);
        writeFireOptions(plif, json);
      })
      .Case<LIOp, LIStepOp>([&](auto li) {
        params.write("k", li.getK());
        params.write("c", li.getC());
        params.write("v_leak", li.getVLeak());
        params.write("v_init", li.getVInit(), 0.0);
      })
      .Case<CubaLIFOp, CubaLIFStepOp>([&](auto cuba) {
        params.write("k", cuba.getK());
        params.write("c", cuba.getC());
        params.write("v_leak", cuba.getVLeak());
        writeFireParams(cuba, params);
        // The synapse's parameters follow v_init in the kernel ABI.
        params.write("k_syn", cuba.getKSyn());
        params.write("c_syn", cuba.getCSyn());
        params.write("i_init", cuba.getIInit(), 0.0);
        writeFireOptions(cuba, json);
      });
}

AddOp mlir::snn::getFoldedStepAddend(Operation *op) {
  auto neuron = dyn_cast<NeuronOpInterface>(op);
  if (!neuron || !neuron.isStepForm() || !isa<TimeLoopOp>(op->getParentOp()))
    return {};
  auto add = neuron.getInput().getDefiningOp<AddOp>();
  if (!add || !add->hasOneUse() || add->getBlock() != op->getBlock())
    return {};
  return add;
}
