//===- Recording.cpp - recording neuron state during inference ------------===//
//
// The infer program computes each layer's state but keeps only its output.
// Recording rewrites the program before it is loaded, so that the traces
// are ordinary tensors that the program writes and the host reads after it:
//
// - a multi-step `neuron` op switches to its compiler-generated record
//   kernel (`"record": true`, kernel `fwd_record`), which writes S, H and V
//   (docs/artifact-format.md); its S is the op's own output;
// - a `neuron_step` op inside a `time_loop` already returns its next
//   membrane, and saves H with `save_h`; the loop yields the step's tensors
//   as extra step outputs, which it stacks into [T, B, ...].
//
// No arithmetic happens here: the compiled kernels and the loop's copies
// produce every value.
//
//===----------------------------------------------------------------------===//

#include "snnrt/Recording.h"
#include "snnrt/Error.h"

#include <map>
#include <set>

using nlohmann::json;

namespace snnrt {
namespace {

/// A neuron layer of the infer program: its op, and the time loop that
/// holds it (step layers).
struct Layer {
  std::string name, model;
  json *op = nullptr;
  json *loop = nullptr;

  bool spikes() const { return model != "li"; }
  std::string quantities() const { return spikes() ? "svh" : "vh"; }
};

void collectLayers(json &ops, json *loop, std::vector<Layer> &out) {
  for (json &op : ops) {
    std::string kind = op.value("op", "");
    if (kind == "time_loop" && op.contains("body") && op["body"].is_array()) {
      collectLayers(op["body"], &op, out);
      continue;
    }
    if ((kind == "neuron" || kind == "neuron_step") && op.contains("layer") &&
        op["layer"].is_string())
      out.push_back({op["layer"].get<std::string>(), op.value("model", "lif"),
                     &op, kind == "neuron_step" ? loop : nullptr});
  }
}

std::string listQuantities(const std::string &q) {
  std::string out;
  for (char c : q)
    out += std::string(out.empty() ? "" : ", ") + c;
  return out;
}

class Planner {
public:
  explicit Planner(json &j) : j(j) {}

  /// `shape` by value: it may be an element of the table that grows here.
  int addTensor(const std::string &name, json shape) {
    json &tensors = j.at("tensors");
    int id = static_cast<int>(tensors.size());
    tensors.push_back(json{{"id", id}, {"name", name}, {"shape", shape},
                           {"role", "activation"}});
    return id;
  }
  const json &shapeOf(int id) { return j.at("tensors").at(id).at("shape"); }

  /// The trace of quantity `q` of a multi-step layer.
  int scanTrace(const Layer &l, char q) {
    json &op = *l.op;
    int s = op.at("out").at(0).get<int>();
    if (q == 's')
      return s;
    if (!op.value("record", false)) {
      // S (li: H), then H and V from the record kernel.
      op["record"] = true;
      json shape = shapeOf(s);
      int h = addTensor("record:" + l.name + ".h", shape);
      int v = addTensor("record:" + l.name + ".v", shape);
      op["out"] = json::array({s, h, v});
      // A layer that counts its spikes for an event layer keeps writing
      // the decision (its record kernel counts too).
      if (op.contains("spike_count") && op["spike_count"].is_object())
        op["out"].push_back(op["spike_count"].value("decision", -1));
    }
    return op["out"].at(q == 'h' ? 1 : 2).get<int>();
  }

  /// The trace of quantity `q` of a step layer: the step's tensor, stacked
  /// by its loop as an extra step output.
  int stepTrace(const Layer &l, char q) {
    json &op = *l.op;
    json &out = op.at("out");
    bool cuba = l.model == "cuba_lif";
    int step;
    if (q == 's' || !l.spikes())
      step = out.at(0).get<int>(); // li: the output is the membrane
    else if (q == 'v')
      step = out.at(cuba ? 2 : 1).get<int>();
    else {
      if (!op.value("save_h", false)) {
        op["save_h"] = true;
        out.push_back(
            addTensor("record:" + l.name + ".h_step", shapeOf(out.at(0))));
      }
      step = out.back().get<int>();
    }
    json &loop = *l.loop;
    json shape = json::array({loop.at("steps")});
    for (const json &d : shapeOf(step))
      shape.push_back(d);
    int trace = addTensor("record:" + l.name + "." + std::string(1, q), shape);
    size_t numInputs = loop.value("num_inputs", size_t(0));
    size_t numStates = loop.at("in").size() - numInputs;
    json &loopOut = loop.at("out"), &yields = loop.at("yields");
    size_t numOutputs = loopOut.size() - numStates;
    // Step outputs come before the final state.
    loopOut.insert(loopOut.begin() + numOutputs, trace);
    yields.insert(yields.begin() + numOutputs, step);
    return trace;
  }

  json &j;
};

} // namespace

std::vector<RecordTrace> planRecording(json &j, const std::string &spec,
                                       const std::string &where) {
  std::vector<Layer> layers;
  try {
    collectLayers(j.at("programs").at("infer"), nullptr, layers);
  } catch (const json::exception &e) {
    throw Error(where + ": malformed manifest: " + e.what());
  }
  std::map<std::string, const Layer *> byName;
  std::string valid;
  for (const Layer &l : layers)
    if (byName.emplace(l.name, &l).second)
      valid += (valid.empty() ? "" : ", ") + l.name + " (" +
               listQuantities(l.quantities()) + ")";
  if (layers.empty())
    throw Error(where + ": --record: the module's infer program names no "
                        "neuron layers (recompile it with this release's "
                        "snn-opt)");

  // Every request is checked before the manifest changes.
  std::vector<std::pair<const Layer *, std::string>> requests;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string::npos)
      end = spec.size();
    std::string item = spec.substr(start, end - start);
    start = end + 1;
    if (item.empty())
      throw Error("--record '" + spec +
                  "': empty layer name; expected LAYER[:s|v|h],... with "
                  "LAYER one of: " + valid);
    size_t colon = item.find(':');
    std::string name = item.substr(0, colon);
    std::string q = colon == std::string::npos ? "" : item.substr(colon + 1);
    std::vector<const Layer *> named;
    if (name == "all") {
      for (const Layer &l : layers)
        if (byName.at(l.name) == &l)
          named.push_back(&l);
    } else if (byName.count(name)) {
      named.push_back(byName.at(name));
    } else {
      throw Error("--record: the module has no neuron layer '" + name +
                  "'; its layers (and what each can record) are: " + valid);
    }
    for (const Layer *l : named) {
      std::string want = q.empty() ? l->quantities() : q;
      std::set<char> seen;
      for (char c : want) {
        if (c != 's' && c != 'v' && c != 'h')
          throw Error("--record " + item + ": unknown quantity '" +
                      std::string(1, c) +
                      "'; use s (spikes), v (membrane after the reset) or h "
                      "(membrane before the reset)");
        if (l->quantities().find(c) == std::string::npos)
          throw Error("--record " + item + ": layer '" + l->name + "' (" +
                      l->model + ") has no " + std::string(1, c) +
                      (c == 's' ? " (a leaky integrator does not spike)" : "") +
                      "; it can record " + listQuantities(l->quantities()));
        if (seen.insert(c).second)
          requests.push_back({l, std::string(1, c)});
      }
    }
  }

  Planner planner(j);
  std::vector<RecordTrace> traces;
  std::set<std::string> names;
  try {
    for (auto &[layer, q] : requests) {
      std::string name = layer->name + "." + q;
      if (!names.insert(name).second)
        continue;
      int id = layer->loop ? planner.stepTrace(*layer, q[0])
                           : planner.scanTrace(*layer, q[0]);
      traces.push_back({name, id, {}});
    }
  } catch (const json::exception &e) {
    throw Error(where + ": malformed manifest: " + e.what());
  }
  return traces;
}

} // namespace snnrt
