//===- NIRImport.cpp - NIR graphs to the snn step form --------------------===//
//
// The graph is ordered by a depth-first search from the Input nodes. A cycle
// carries the previous step's output of its last neuron before the edge that
// closes it (spikes, as NIR simulators, snnTorch and Norse feed back); the
// nodes after that neuron run every step. Every cycle must pass through
// neuron state. Delay nodes read their output from loop-carried registers,
// so they break cycles exactly.
//
//===----------------------------------------------------------------------===//

#include "snn/Target/NIR/NIRImport.h"

#include "HDF5File.h"
#include "NIRGraph.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::snn;
using namespace mlir::snn::nir;
using llvm::StringRef;

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}

static int64_t numElements(ArrayRef<int64_t> shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

/// Drops size-1 dims so [3] and [1, 3] (or [] and [1]) compare equal.
static SmallVector<int64_t> squeezed(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> out;
  for (int64_t d : shape)
    if (d != 1)
      out.push_back(d);
  return out;
}

namespace {
/// The loop-carried values of the step being built.
struct State {
  Value init;
  BlockArgument arg;
  Value next;         // set once the producer is built
  std::string source; // node whose value `next` must be (recurrence/delay)
};

class Importer {
public:
  Importer(MLIRContext *ctx, StringRef filename, const NIRImportOptions &opts,
           const FlatGraph &graph)
      : ctx(ctx), b(ctx), filename(filename.str()), opts(opts), graph(graph),
        fileLoc(FileLineColLoc::get(ctx, filename, 0, 0)) {}

  OwningOpRef<ModuleOp> run();

private:
  Location loc(StringRef node) {
    return NameLoc::get(StringAttr::get(ctx, node), fileLoc);
  }
  InFlightDiagnostic error(const FlatNode &node) {
    return emitError(loc(node.name))
           << "in NIR file '" << filename << "': node '" << node.name << "' ("
           << node.type << "): ";
  }

  LogicalResult orderGraph();
  bool isDelayBreaker(unsigned n);
  bool isStateful(unsigned n);
  /// The delay of every neuron in steps of dt (one value when scalar).
  FailureOr<SmallVector<int64_t>> delaySteps(const FlatNode &node);

  RankedTensorType stepType(ArrayRef<int64_t> features);
  FailureOr<SmallVector<int64_t>> intList(const FlatNode &node, StringRef key,
                                          size_t n, bool required,
                                          int64_t dflt);
  FailureOr<Attribute> neuronParam(const FlatNode &node, StringRef key,
                                   ArrayRef<int64_t> features,
                                   std::function<double(double)> fn,
                                   std::optional<double> dflt, bool leak) {
    return neuronAttr(node, key, node.param(key), features, fn, dflt, leak);
  }
  FailureOr<Attribute> neuronAttr(const FlatNode &node, StringRef key,
                                  const H5Data *d, ArrayRef<int64_t> features,
                                  std::function<double(double)> fn,
                                  std::optional<double> dflt, bool leak);
  Value param(const FlatNode &node, StringRef key, const H5Data &data,
              ArrayRef<int64_t> shape);
  Value zeros(RankedTensorType type);
  BlockArgument addState(Value init, StringRef source = "");

  FailureOr<Value> inputOf(unsigned n, std::optional<ArrayRef<int64_t>> hint);
  FailureOr<Value> buildNode(unsigned n, Value x);
  FailureOr<SmallVector<int64_t>> paramFeatures(const FlatNode &node);
  FailureOr<Value> delayOutput(unsigned n, RankedTensorType type);

  MLIRContext *ctx;
  OpBuilder b;
  std::string filename;
  const NIRImportOptions &opts;
  const FlatGraph &graph;
  Location fileLoc;

  SmallVector<SmallVector<unsigned>> inEdges;  // forward in-neighbours
  SmallVector<SmallVector<unsigned>> backEdges; // recurrent in-neighbours
  SmallVector<SmallVector<unsigned>> delayIns;  // in-neighbours that are delays
  SmallVector<unsigned> order;

  OpBuilder funcBuilder{ctx};
  Block *body = nullptr;
  SmallVector<Value> loopInputs;
  SmallVector<State> states;
  DenseMap<unsigned, Value> values;       // node -> its output this step
  DenseMap<unsigned, Value> delayOut; // delay node -> its delayed output
  DenseMap<unsigned, SmallVector<unsigned>> delayRegs; // delay -> state ids
  // Delays with some zero-step neurons: their input of this step, which the
  // registers take at the end of the step.
  DenseMap<unsigned, Value> delayInput;
  llvm::DenseMap<Type, Value> zeroCache;
};
} // namespace

bool Importer::isStateful(unsigned n) {
  StringRef t = graph.nodes[n].type;
  return t == "LIF" || t == "IF" || t == "LI" || t == "I" || t == "CubaLI" ||
         t == "CubaLIF" || isDelayBreaker(n);
}

FailureOr<SmallVector<int64_t>> Importer::delaySteps(const FlatNode &node) {
  const H5Data *d = node.param("delay");
  if (!d || d->isString || d->numbers.empty())
    return error(node) << "missing numeric parameter 'delay'";
  SmallVector<int64_t> result;
  for (double seconds : d->numbers) {
    double steps = seconds / opts.dt;
    if (!(steps >= 0) || steps > 1e6)
      return error(node) << "delay " << seconds
                         << " s is not a usable number of steps at dt = "
                         << opts.dt;
    int64_t rounded = std::llround(steps);
    if (std::abs(steps - double(rounded)) > 1e-6 * std::max(1.0, steps))
      return error(node) << "delay " << seconds
                         << " s is not a whole number of steps of dt = "
                         << opts.dt << " (set --nir-dt)";
    result.push_back(rounded);
  }
  return result;
}

bool Importer::isDelayBreaker(unsigned n) {
  if (graph.nodes[n].type != "Delay")
    return false;
  const H5Data *d = graph.nodes[n].param("delay");
  return d && !d->isString && !d->numbers.empty() &&
         llvm::all_of(d->numbers,
                      [&](double v) { return v / opts.dt > 0.5; });
}

LogicalResult Importer::orderGraph() {
  unsigned n = graph.nodes.size();
  inEdges.assign(n, {});
  backEdges.assign(n, {});
  delayIns.assign(n, {});
  for (auto [src, dst] : graph.edges)
    if (isDelayBreaker(src))
      delayIns[dst].push_back(src);
  // Roots: Input nodes, then delays, then anything left.
  SmallVector<unsigned> roots;
  for (StringRef kind : {"Input", "Delay", ""})
    for (unsigned i = 0; i < n; ++i)
      if (kind.empty() || graph.nodes[i].type == kind)
        roots.push_back(i);

  // A recurrence carries the previous step's output of the last neuron
  // (stateful node) on the cycle, as NIR, snnTorch and Norse feed back
  // spikes: the nodes after it on the cycle (Affine, Scale, subgraphs...)
  // then run every step, so a feedback bias is there from t = 0. Which
  // cycle edge is the feedback is fixed by a depth-first search from the
  // inputs; each back edge found cuts the cycle after its last neuron, and
  // the search repeats until the rest is acyclic.
  llvm::DenseSet<std::pair<unsigned, unsigned>> cut;
  SmallVector<unsigned> postorder;
  enum Mark { White, Grey, Black };
  while (true) {
    SmallVector<SmallVector<unsigned>> out(n);
    for (auto [src, dst] : graph.edges)
      if (!isDelayBreaker(src) && !cut.contains({src, dst}) &&
          !llvm::is_contained(out[src], dst))
        out[src].push_back(dst);
    SmallVector<Mark> mark(n, White);
    postorder.clear();
    bool cutOne = false;
    for (unsigned root : roots) {
      if (mark[root] != White || cutOne)
        continue;
      SmallVector<std::pair<unsigned, unsigned>> stack{{root, 0}};
      mark[root] = Grey;
      while (!stack.empty() && !cutOne) {
        auto &[node, next] = stack.back();
        if (next == out[node].size()) {
          mark[node] = Black;
          postorder.push_back(node);
          stack.pop_back();
          continue;
        }
        unsigned succ = out[node][next++];
        if (mark[succ] == White) {
          mark[succ] = Grey;
          stack.push_back({succ, 0});
          continue;
        }
        if (mark[succ] != Grey)
          continue;
        // The back edge node -> succ closes the cycle succ ... node.
        SmallVector<unsigned> cycle;
        for (auto it = llvm::find_if(stack, [&](auto &p) { return p.first == succ; });
             it != stack.end(); ++it)
          cycle.push_back(it->first);
        auto last = llvm::find_if(llvm::reverse(cycle),
                                  [&](unsigned c) { return isStateful(c); });
        if (last == cycle.rend()) {
          std::string path;
          for (unsigned c : cycle)
            path += "'" + graph.nodes[c].name + "' -> ";
          return emitError(loc(graph.nodes[succ].name))
                 << "in NIR file '" << filename << "': cycle " << path << "'"
                 << graph.nodes[succ].name
                 << "' has no neuron state (LIF, LI, CubaLIF, Delay, ...): "
                    "its value would depend on itself within one time step";
        }
        size_t at = cycle.size() - 1 - (last - cycle.rbegin());
        cut.insert({cycle[at], at + 1 < cycle.size() ? cycle[at + 1] : succ});
        cutOne = true;
      }
    }
    if (!cutOne)
      break;
  }
  for (auto [src, dst] : graph.edges) {
    if (isDelayBreaker(src))
      continue;
    auto &into = cut.contains({src, dst}) ? backEdges[dst] : inEdges[dst];
    if (!llvm::is_contained(into, src))
      into.push_back(src);
  }
  order.assign(postorder.rbegin(), postorder.rend());
  return success();
}

RankedTensorType Importer::stepType(ArrayRef<int64_t> features) {
  SmallVector<int64_t> shape{opts.batch};
  shape.append(features.begin(), features.end());
  return RankedTensorType::get(shape, b.getF32Type());
}

Value Importer::zeros(RankedTensorType type) {
  Value &v = zeroCache[type];
  if (!v)
    v = arith::ConstantOp::create(
        funcBuilder, fileLoc, type,
        DenseElementsAttr::get(type, funcBuilder.getF32FloatAttr(0.0f)));
  return v;
}

BlockArgument Importer::addState(Value init, StringRef source) {
  BlockArgument arg = body->addArgument(init.getType(), init.getLoc());
  states.push_back({init, arg, Value(), source.str()});
  return arg;
}

Value Importer::param(const FlatNode &node, StringRef key, const H5Data &data,
                      ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, b.getF32Type());
  SmallVector<float> values(data.numbers.begin(), data.numbers.end());
  auto value = DenseElementsAttr::get(type, ArrayRef<float>(values));
  return ParamOp::create(funcBuilder, loc(node.name), type,
                         (node.name + "." + key).str(), InitKind::Zeros,
                         /*init_scale=*/nullptr, value, /*trainable=*/true);
}

FailureOr<SmallVector<int64_t>> Importer::intList(const FlatNode &node,
                                                  StringRef key, size_t n,
                                                  bool required,
                                                  int64_t dflt) {
  const H5Data *d = node.param(key);
  if (!d) {
    if (required)
      return error(node) << "missing parameter '" << key << "'";
    return SmallVector<int64_t>(n, dflt);
  }
  if (d->isString || d->numbers.empty() ||
      (d->numbers.size() != 1 && d->numbers.size() != n))
    return error(node) << "parameter '" << key << "' must be an integer or "
                       << n << " integers";
  SmallVector<int64_t> out;
  for (size_t i = 0; i < n; ++i) {
    double v = d->numbers[d->numbers.size() == 1 ? 0 : i];
    if (v != std::floor(v) || std::abs(v) > 1e9)
      return error(node) << "parameter '" << key << "' must be integral, got "
                         << v;
    out.push_back(int64_t(v));
  }
  return out;
}

FailureOr<Attribute>
Importer::neuronAttr(const FlatNode &node, StringRef key, const H5Data *d,
                     ArrayRef<int64_t> features,
                     std::function<double(double)> fn,
                     std::optional<double> dflt, bool leak) {
  if (!d) {
    if (!dflt)
      return error(node) << "missing parameter '" << key << "'";
    return Attribute(b.getF64FloatAttr(fn(*dflt)));
  }
  if (d->isString || d->numbers.empty())
    return error(node) << "parameter '" << key << "' must be numeric";
  int64_t count = numElements(features);
  if (d->numbers.size() != 1 &&
      (int64_t(d->numbers.size()) != count ||
       squeezed(d->shape) != squeezed(features)))
    return error(node) << "parameter '" << key << "' has shape "
                       << shapeStr(d->shape) << " but the layer's neurons have "
                       << "shape " << shapeStr(features);
  SmallVector<double> values;
  for (double v : d->numbers) {
    double x = fn(v);
    if (!std::isfinite(x))
      return error(node) << "parameter '" << key << "' = " << v
                         << " gives a non-finite value"
                         << (StringRef(key).contains("tau") ? " (tau must be > 0)"
                                                            : "");
    if (leak && (x < 0.0 || x > 1.0))
      return error(node) << "dt / " << key << " = " << x
                         << " is outside [0, 1] (" << key << " = " << v
                         << ", dt = " << opts.dt
                         << "): choose --nir-dt no larger than the smallest "
                         << key;
    values.push_back(x);
  }
  if (llvm::all_equal(values))
    return Attribute(b.getF64FloatAttr(values[0]));
  SmallVector<float> f32(values.begin(), values.end());
  if (int64_t(f32.size()) != count)
    f32.assign(count, f32[0]);
  auto type = RankedTensorType::get(features, b.getF32Type());
  return Attribute(DenseElementsAttr::get(type, ArrayRef<float>(f32)));
}

/// The neuron shape of a node whose inputs are all recurrent: its parameters.
FailureOr<SmallVector<int64_t>>
Importer::paramFeatures(const FlatNode &node) {
  // Input/Output nodes (also those of nested graphs) declare their shape.
  if (const H5Data *shape = node.param("shape"))
    if (!shape->isString && !shape->numbers.empty() &&
        llvm::all_of(shape->numbers, [](double d) {
          return d >= 1 && d == std::floor(d) && d <= 1e9;
        }))
      return SmallVector<int64_t>(shape->numbers.begin(), shape->numbers.end());
  // A dense layer takes the second dim of its weight [out, in].
  if (node.type == "Linear" || node.type == "Affine")
    if (const H5Data *w = node.param("weight"))
      if (!w->isString && w->shape.size() == 2)
        return SmallVector<int64_t>{w->shape[1]};
  for (StringRef key : {"v_threshold", "tau", "tau_mem", "r", "threshold",
                        "scale", "delay", "bias"})
    if (const H5Data *d = node.param(key))
      if (!d->shape.empty())
        return SmallVector<int64_t>(d->shape);
  return error(node) << "cannot tell the layer's shape: its only inputs are "
                        "recurrent and its parameters are scalars";
}

FailureOr<Value> Importer::delayOutput(unsigned n, RankedTensorType type) {
  auto it = delayOut.find(n);
  if (it != delayOut.end())
    return Value(it->second);
  const FlatNode &node = graph.nodes[n];
  FailureOr<SmallVector<int64_t>> steps = delaySteps(node);
  if (failed(steps))
    return failure();
  ArrayRef<int64_t> features = type.getShape().drop_front();
  bool perNeuron = steps->size() > 1;
  if (perNeuron && int64_t(steps->size()) != numElements(features))
    return error(node) << "has " << steps->size()
                       << " per-neuron delays but its input has shape "
                       << shapeStr(features);
  int64_t longest = *llvm::max_element(*steps);
  // A shift register of the longest delay: register i holds the input of
  // `longest - i` steps ago, so register 0 is the output of a uniform delay.
  SmallVector<unsigned> regs;
  for (int64_t i = 0; i < longest; ++i) {
    regs.push_back(states.size());
    addState(zeros(type), node.name);
  }
  delayRegs[n] = regs;
  Value out = states[regs[0]].arg;
  SmallVector<int64_t> distinct(*steps);
  llvm::sort(distinct);
  distinct.erase(llvm::unique(distinct), distinct.end());
  // Zero-step neurons read no register: buildNode adds this step's input.
  if (distinct.front() == 0)
    distinct.erase(distinct.begin());
  if (distinct.size() > 1 || llvm::is_contained(*steps, 0)) {
    // Per-neuron delays: each neuron reads the register of its own delay.
    // Masking a register by a 0/1 vector is a leaky integrator that forgets
    // everything each step (k = 1, c = mask), exact in every precision.
    Location l = loc(node.name);
    auto maskType = RankedTensorType::get(features, b.getF32Type());
    out = Value();
    for (int64_t d : distinct) {
      SmallVector<float> mask;
      for (int64_t s : *steps)
        mask.push_back(s == d ? 1.0f : 0.0f);
      NamedAttrList attrs;
      attrs.set("k", b.getF64FloatAttr(1.0));
      attrs.set("c", DenseElementsAttr::get(maskType, ArrayRef<float>(mask)));
      BlockArgument v = addState(zeros(type));
      auto picked = LIStepOp::create(
          b, l, TypeRange{type},
          ValueRange{states[regs[longest - d]].arg, v}, attrs.getAttrs());
      states.back().next = picked.getVNext();
      out = out ? Value(AddOp::create(b, l, out, picked.getVNext()))
                : Value(picked.getVNext());
    }
  }
  delayOut[n] = out;
  return out;
}

FailureOr<Value> Importer::inputOf(unsigned n,
                                   std::optional<ArrayRef<int64_t>> hint) {
  const FlatNode &node = graph.nodes[n];
  SmallVector<std::pair<unsigned, Value>> terms;
  for (unsigned src : inEdges[n])
    terms.push_back({src, values.lookup(src)});
  // Recurrent and delayed inputs take the type of the forward inputs, else
  // the layer's own parameter shape; the producer is checked against it later.
  RankedTensorType type;
  if (!terms.empty())
    type = cast<RankedTensorType>(terms[0].second.getType());
  else if (!backEdges[n].empty() || !delayIns[n].empty()) {
    SmallVector<int64_t> features;
    if (hint) {
      features.assign(hint->begin(), hint->end());
    } else {
      FailureOr<SmallVector<int64_t>> f = paramFeatures(node);
      if (failed(f))
        return failure();
      features = *f;
    }
    type = stepType(features);
  }
  for (unsigned src : backEdges[n])
    terms.push_back({src, addState(zeros(type), graph.nodes[src].name)});
  for (unsigned src : delayIns[n]) {
    FailureOr<Value> v = delayOutput(src, type);
    if (failed(v))
      return failure();
    terms.push_back({src, *v});
  }
  if (terms.empty())
    return error(node) << "has no input edge; connect it to an Input node";
  Value sum = terms[0].second;
  for (auto &[src, v] : ArrayRef(terms).drop_front()) {
    if (v.getType() != sum.getType())
      return error(node) << "its inputs disagree in shape: '"
                         << graph.nodes[terms[0].first].name << "' gives "
                         << shapeStr(cast<RankedTensorType>(sum.getType())
                                         .getShape()
                                         .drop_front())
                         << " but '" << graph.nodes[src].name << "' gives "
                         << shapeStr(cast<RankedTensorType>(v.getType())
                                         .getShape()
                                         .drop_front());
    sum = AddOp::create(b, loc(node.name), sum, v);
  }
  return sum;
}

OwningOpRef<ModuleOp> Importer::run() {
  if (opts.timeSteps <= 0 || opts.batch <= 0 || !(opts.dt > 0)) {
    emitError(fileLoc) << "NIR import options: time steps, batch and dt must "
                          "be positive";
    return nullptr;
  }
  if (failed(orderGraph()))
    return nullptr;

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  funcBuilder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(funcBuilder, fileLoc, "forward",
                                   funcBuilder.getFunctionType({}, {}));
  Block *entry = func.addEntryBlock();
  funcBuilder.setInsertionPointToStart(entry);
  body = new Block();
  std::unique_ptr<Block> bodyOwner(body);
  b.setInsertionPointToStart(body);

  // Inputs: one function argument and one loop input each, in name order.
  SmallVector<Type> argTypes;
  for (auto [i, node] : llvm::enumerate(graph.nodes)) {
    if (node.type != "Input")
      continue;
    const H5Data *shape = node.param("shape");
    if (!shape)
      if (const H5Entry *it = node.group->find("input_type"))
        if (const H5Entry *in = it->find("input"))
          shape = &in->data;
    if (!shape || shape->isString || shape->numbers.empty()) {
      error(node) << "missing 'shape' (the input's feature shape)";
      return nullptr;
    }
    SmallVector<int64_t> features;
    for (double d : shape->numbers) {
      if (!(d >= 1) || d != std::floor(d) || d > 1e9) {
        error(node) << "'shape' must hold positive integers";
        return nullptr;
      }
      features.push_back(int64_t(d));
    }
    RankedTensorType step = stepType(features);
    SmallVector<int64_t> full{opts.timeSteps};
    full.append(step.getShape().begin(), step.getShape().end());
    auto argType = RankedTensorType::get(full, b.getF32Type());
    BlockArgument arg = entry->addArgument(argType, loc(node.name));
    argTypes.push_back(argType);
    loopInputs.push_back(arg);
    values[i] = body->addArgument(step, loc(node.name));
  }

  SmallVector<unsigned> outputs;
  for (unsigned n : order) {
    const FlatNode &node = graph.nodes[n];
    if (node.type == "Input")
      continue;
    if (isDelayBreaker(n))
      continue; // its input is consumed at the end of the step
    FailureOr<Value> x = inputOf(n, std::nullopt);
    if (failed(x))
      return nullptr;
    FailureOr<Value> y = buildNode(n, *x);
    if (failed(y))
      return nullptr;
    values[n] = *y;
    if (node.type == "Output")
      outputs.push_back(n);
  }
  if (outputs.empty()) {
    emitError(fileLoc) << "in NIR file '" << filename
                       << "': the graph has no Output node";
    return nullptr;
  }
  llvm::sort(outputs, [&](unsigned a, unsigned c) {
    return graph.nodes[a].name < graph.nodes[c].name;
  });

  // Delay registers shift by one step; register d-1 takes this step's input.
  for (auto &[n, regs] : delayRegs) {
    const FlatNode &node = graph.nodes[n];
    Type want = states[regs[0]].arg.getType();
    FailureOr<Value> x = delayInput.count(n)
                             ? FailureOr<Value>(delayInput.lookup(n))
                             : inputOf(n, cast<RankedTensorType>(want)
                                              .getShape()
                                              .drop_front());
    if (failed(x))
      return nullptr;
    if (x->getType() != want) {
      error(node) << "its input has type " << x->getType()
                  << " but its consumers expect " << want;
      return nullptr;
    }
    for (size_t i = 0; i + 1 < regs.size(); ++i)
      states[regs[i]].next = states[regs[i + 1]].arg;
    states[regs.back()].next = *x;
  }
  // Recurrent inputs take the producer's value of this step.
  for (State &s : states) {
    if (s.next || s.source.empty())
      continue;
    auto it = llvm::find_if(graph.nodes,
                            [&](const FlatNode &n) { return n.name == s.source; });
    Value v = values.lookup(unsigned(it - graph.nodes.begin()));
    if (!v || v.getType() != s.arg.getType()) {
      emitError(loc(s.source))
          << "in NIR file '" << filename << "': node '" << s.source << "': its recurrent output has type "
          << (v ? v.getType() : Type()) << " but the layer it feeds back into "
          << "expects " << s.arg.getType();
      return nullptr;
    }
    s.next = v;
  }

  // The loop: per-step outputs (one per Output node), then the next state.
  SmallVector<Value> yields, inits;
  SmallVector<Type> resultTypes, funcResults;
  for (unsigned n : outputs) {
    auto t = cast<RankedTensorType>(values[n].getType());
    SmallVector<int64_t> full{opts.timeSteps};
    full.append(t.getShape().begin(), t.getShape().end());
    resultTypes.push_back(RankedTensorType::get(full, t.getElementType()));
    funcResults.push_back(resultTypes.back());
    yields.push_back(values[n]);
  }
  for (State &s : states) {
    inits.push_back(s.init);
    resultTypes.push_back(s.init.getType());
    yields.push_back(s.next);
  }
  YieldOp::create(b, fileLoc, yields);
  IntegerAttr numSteps =
      loopInputs.empty() ? funcBuilder.getI64IntegerAttr(opts.timeSteps)
                         : IntegerAttr();
  auto loop = TimeLoopOp::create(funcBuilder, fileLoc, resultTypes, loopInputs,
                                 inits, numSteps);
  loop.getBody().push_back(bodyOwner.release());
  func::ReturnOp::create(
      funcBuilder, fileLoc,
      loop.getResults().take_front(outputs.size()));
  func.setType(funcBuilder.getFunctionType(argTypes, funcResults));

  if (failed(verify(*module))) {
    emitError(fileLoc) << "the imported NIR graph does not form valid snn IR "
                          "(see the errors above)";
    return nullptr;
  }
  return module;
}

OwningOpRef<ModuleOp> mlir::snn::importNIR(StringRef image, StringRef filename,
                                           MLIRContext *context,
                                           const NIRImportOptions &options) {
  context->loadDialect<SNNDialect, func::FuncDialect, arith::ArithDialect>();
  Location fileLoc = FileLineColLoc::get(context, filename, 0, 0);
  llvm::Expected<H5Entry> tree = readHDF5Image(image);
  if (!tree) {
    emitError(fileLoc) << "cannot read NIR file '" << filename
                       << "': " << llvm::toString(tree.takeError());
    return nullptr;
  }
  FlatGraph graph;
  auto nodeError = [&](StringRef node) {
    Location l = node.empty()
                     ? fileLoc
                     : Location(NameLoc::get(StringAttr::get(context, node),
                                             fileLoc));
    return emitError(l) << "in NIR file '" << filename << "': ";
  };
  if (failed(loadNIRGraph(*tree, graph, nodeError)))
    return nullptr;
  return Importer(context, filename, options, graph).run();
}

/// Lowers one node; `x` is the sum of its inputs for this step.
FailureOr<Value> Importer::buildNode(unsigned n, Value x) {
  const FlatNode &node = graph.nodes[n];
  StringRef type = node.type;
  Location l = loc(node.name);
  auto xType = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> features = xType.getShape().drop_front();
  double dt = opts.dt;
  auto identity = [](double v) { return v; };

  if (type == "Output" || type == kPassThrough) {
    if (const H5Data *shape = node.param("shape")) {
      SmallVector<int64_t> want(shape->numbers.begin(), shape->numbers.end());
      if (!shape->isString && !want.empty() &&
          squeezed(want) != squeezed(features))
        return error(node) << "declares shape " << shapeStr(want)
                           << " but its input has shape " << shapeStr(features);
    }
    return x;
  }

  if (type == "Affine" || type == "Linear") {
    const H5Data *w = node.param("weight");
    if (!w || w->isString || w->shape.size() != 2)
      return error(node) << "'weight' must be a matrix [out, in]"
                         << (w ? ", got shape " + shapeStr(w->shape) : "");
    if (features.size() != 1 || features[0] != w->shape[1])
      return error(node) << "weight " << shapeStr(w->shape) << " expects "
                         << w->shape[1] << " input features but its input has "
                         << "shape " << shapeStr(features)
                         << (features.size() > 1 ? "; add a Flatten node" : "");
    Value weight = param(node, "weight", *w, w->shape);
    Value bias;
    if (type == "Affine") {
      const H5Data *bd = node.param("bias");
      if (!bd || bd->isString ||
          int64_t(bd->numbers.size()) != w->shape[0])
        return error(node) << "'bias' must have " << w->shape[0]
                           << " values (one per output)";
      bias = param(node, "bias", *bd, {w->shape[0]});
    }
    auto outType = stepType({w->shape[0]});
    return Value(LinearOp::create(b, l, outType, x, weight, bias,
                                  /*event_driven=*/FloatAttr()));
  }

  if (type == "Scale") {
    FailureOr<Attribute> s =
        neuronParam(node, "scale", features, identity, std::nullopt, false);
    if (failed(s))
      return failure();
    if (auto scalar = getScalarParam(*s))
      return Value(ScaleOp::create(b, l, x, b.getF64FloatAttr(*scalar)));
    // Per-element scale: a leaky integrator that forgets everything each
    // step (k = 1) computes exactly c * x.
    BlockArgument v = addState(zeros(xType));
    NamedAttrList attrs;
    attrs.set("k", b.getF64FloatAttr(1.0));
    attrs.set("c", *s);
    auto li = LIStepOp::create(b, l, TypeRange{xType}, ValueRange{x, v},
                               attrs.getAttrs());
    states.back().next = li.getVNext();
    return Value(li.getVNext());
  }

  // Conv1d is a Conv2d over [C, 1, L] with a kernel of height 1, between
  // two reshapes (views, no copies).
  if (type == "Conv2d" || type == "Conv1d") {
    int dims = type == "Conv1d" ? 1 : 2;
    const H5Data *w = node.param("weight");
    if (!w || w->isString || w->shape.size() != size_t(2 + dims))
      return error(node) << "'weight' must be [out_channels, in_channels / "
                         << (dims == 2 ? "groups, KH, KW]" : "groups, K]")
                         << (w ? ", got shape " + shapeStr(w->shape) : "");
    if (features.size() != size_t(1 + dims))
      return error(node) << "expects an input "
                         << (dims == 2 ? "[C, H, W]" : "[C, L]")
                         << " but its input has shape " << shapeStr(features);
    auto stride = intList(node, "stride", dims, false, 1);
    auto dilation = intList(node, "dilation", dims, false, 1);
    auto groups = intList(node, "groups", 1, false, 1);
    if (failed(stride) || failed(dilation) || failed(groups))
      return failure();
    for (int64_t v : llvm::concat<int64_t>(*stride, *dilation, *groups))
      if (v <= 0)
        return error(node) << "stride, dilation and groups must be positive";
    // Padding before (pad) and after (padEnd) each spatial dim.
    SmallVector<int64_t> pad(dims, 0), padEnd;
    const H5Data *p = node.param("padding");
    if (p && p->isString) {
      StringRef mode = p->strings.empty() ? "" : StringRef(p->strings[0]);
      if (mode == "same") {
        for (int i = 0; i < dims; ++i) {
          if ((*stride)[i] != 1)
            return error(node) << "padding 'same' needs stride 1, got stride "
                               << shapeStr(*stride);
          // PyTorch's rule: an odd total puts the extra pad after.
          int64_t total = (*dilation)[i] * (w->shape[2 + i] - 1);
          pad[i] = total / 2;
          padEnd.push_back(total - pad[i]);
        }
      } else if (mode != "valid") {
        return error(node) << "padding '" << mode
                           << "' must be 'same', 'valid' or integers";
      }
    } else {
      auto ints = intList(node, "padding", dims, false, 0);
      if (failed(ints))
        return failure();
      pad = *ints;
    }
    if (padEnd.empty())
      padEnd = pad;
    int64_t g = (*groups)[0];
    if (features[0] != w->shape[1] * g)
      return error(node) << "weight " << shapeStr(w->shape) << " with groups = "
                         << g << " expects " << w->shape[1] * g
                         << " input channels but its input has shape "
                         << shapeStr(features);
    if (const H5Data *is = node.param("input_shape"))
      if (!is->isString && is->numbers.size() == size_t(dims) &&
          !llvm::equal(is->numbers, features.drop_front(),
                       [](double a, int64_t b) { return a == double(b); }))
        return error(node) << "declares input_shape "
                           << shapeStr(SmallVector<int64_t>(
                                  is->numbers.begin(), is->numbers.end()))
                           << " but its input has shape "
                           << shapeStr(features);
    SmallVector<int64_t> out{w->shape[0]};
    for (int i = 0; i < dims; ++i) {
      int64_t span = (*dilation)[i] * (w->shape[2 + i] - 1) + 1;
      int64_t size = features[1 + i] + pad[i] + padEnd[i] - span;
      if (size < 0)
        return error(node) << "kernel " << shapeStr(ArrayRef(w->shape).drop_front(2))
                           << " does not fit the padded input "
                           << shapeStr(features.drop_front());
      out.push_back(size / (*stride)[i] + 1);
    }
    SmallVector<int64_t> weightShape(w->shape.begin(), w->shape.end());
    SmallVector<int64_t> in2d(features), out2d(out);
    if (dims == 1) {
      // [O, C/g, K] -> [O, C/g, 1, K]; [C, L] -> [C, 1, L].
      weightShape.insert(weightShape.begin() + 2, 1);
      in2d.insert(in2d.begin() + 1, 1);
      out2d.insert(out2d.begin() + 1, 1);
      stride->insert(stride->begin(), 1);
      dilation->insert(dilation->begin(), 1);
      pad.insert(pad.begin(), 0);
      padEnd.insert(padEnd.begin(), 0);
      x = ReshapeOp::create(b, l, stepType(in2d), x);
    }
    Value weight = param(node, "weight", *w, weightShape);
    Value bias;
    if (const H5Data *bd = node.param("bias")) {
      if (bd->isString || int64_t(bd->numbers.size()) != w->shape[0])
        return error(node) << "'bias' must have " << w->shape[0] << " values";
      bias = param(node, "bias", *bd, {w->shape[0]});
    }
    NamedAttrList attrs;
    attrs.set("stride", b.getDenseI64ArrayAttr(*stride));
    if (pad != padEnd)
      pad.append(padEnd.begin(), padEnd.end()); // [top, left, bottom, right]
    attrs.set("padding", b.getDenseI64ArrayAttr(pad));
    attrs.set("dilation", b.getDenseI64ArrayAttr(*dilation));
    attrs.set("groups", b.getI64IntegerAttr(g));
    SmallVector<Value> operands{x, weight};
    if (bias)
      operands.push_back(bias);
    Value conv = Conv2DOp::create(b, l, TypeRange{stepType(out2d)}, operands,
                                  attrs.getAttrs());
    if (dims == 1)
      conv = ReshapeOp::create(b, l, stepType(out), conv);
    return conv;
  }

  if (type == "SumPool2d" || type == "AvgPool2d") {
    if (features.size() != 3)
      return error(node) << "expects an input [C, H, W] but its input has "
                         << "shape " << shapeStr(features);
    auto kernel = intList(node, "kernel_size", 2, true, 0);
    if (failed(kernel))
      return failure();
    auto stride = intList(node, "stride", 2, false, 0);
    auto pad = intList(node, "padding", 2, false, 0);
    if (failed(stride) || failed(pad))
      return failure();
    if (!node.param("stride"))
      *stride = *kernel;
    SmallVector<int64_t> out{features[0]};
    for (int i = 0; i < 2; ++i) {
      if ((*kernel)[i] <= 0 || (*stride)[i] <= 0 || (*pad)[i] < 0)
        return error(node) << "kernel_size and stride must be positive, "
                              "padding non-negative";
      int64_t size = features[1 + i] + 2 * (*pad)[i] - (*kernel)[i];
      if (size < 0)
        return error(node) << "kernel_size " << shapeStr(*kernel)
                           << " does not fit the padded input "
                           << shapeStr(features.drop_front());
      out.push_back(size / (*stride)[i] + 1);
    }
    NamedAttrList attrs;
    attrs.set("kernel_size", b.getDenseI64ArrayAttr(*kernel));
    if (*stride != *kernel)
      attrs.set("stride", b.getDenseI64ArrayAttr(*stride));
    if ((*pad)[0] || (*pad)[1])
      attrs.set("padding", b.getDenseI64ArrayAttr(*pad));
    if (type == "SumPool2d")
      return Value(SumPool2DOp::create(b, l, TypeRange{stepType(out)},
                                       ValueRange{x}, attrs.getAttrs()));
    return Value(AvgPool2DOp::create(b, l, TypeRange{stepType(out)},
                                     ValueRange{x}, attrs.getAttrs()));
  }

  if (type == "Flatten") {
    auto start = intList(node, "start_dim", 1, false, 1);
    auto end = intList(node, "end_dim", 1, false, -1);
    if (failed(start) || failed(end))
      return failure();
    int64_t rank = features.size(), s = (*start)[0], e = (*end)[0];
    // Some exporters count the batch dim in start/end_dim; their input_type
    // then has one dim more than the data.
    if (const H5Data *it = node.param("input_type"))
      if (!it->isString && int64_t(it->numbers.size()) == rank + 1 && s > 0) {
        --s;
        if (e > 0)
          --e;
      }
    if (s < 0)
      s += rank;
    if (e < 0)
      e += rank;
    if (s < 0 || s >= rank || e < s || e >= rank)
      return error(node) << "start_dim " << (*start)[0] << " / end_dim "
                         << (*end)[0] << " on input shape "
                         << shapeStr(features) << ": out of range";
    if (s == e)
      return x;
    SmallVector<int64_t> out(features.take_front(s));
    out.push_back(numElements(features.slice(s, e - s + 1)));
    if (e == rank - 1)
      return Value(FlattenOp::create(b, l, stepType(out), x));
    // Dims in the middle: the same elements in the same order, a view.
    out.append(features.begin() + e + 1, features.end());
    return Value(ReshapeOp::create(b, l, stepType(out), x));
  }

  if (type == "Threshold") {
    FailureOr<Attribute> th = neuronParam(node, "threshold", features,
                                          identity, std::nullopt, false);
    if (failed(th))
      return failure();
    // S = x > threshold: an IF neuron whose membrane stays at 0 (the carried
    // state is yielded unchanged).
    BlockArgument v = addState(zeros(xType));
    NamedAttrList attrs;
    attrs.set("c", b.getF64FloatAttr(1.0));
    attrs.set("v_th", *th);
    attrs.set("strict", b.getUnitAttr());
    auto op = IFStepOp::create(b, l, TypeRange{xType, xType}, ValueRange{x, v},
                               attrs.getAttrs());
    states.back().next = v;
    return Value(op.getSpikes());
  }

  if (type == "Delay") { // a delay of 0 steps for some neuron (else state)
    FailureOr<SmallVector<int64_t>> steps = delaySteps(node);
    if (failed(steps))
      return failure();
    if (llvm::all_of(*steps, [](int64_t s) { return s == 0; }))
      return x;
    // Zero-step neurons pass this step's input (masked like the registers in
    // delayOutput); the others read the shift register, which takes x at the
    // end of the step. Such a layer breaks no cycle.
    delayInput[n] = x;
    auto type = cast<RankedTensorType>(x.getType());
    FailureOr<Value> delayed = delayOutput(n, type);
    if (failed(delayed))
      return failure();
    SmallVector<float> mask;
    for (int64_t s : *steps)
      mask.push_back(s == 0 ? 1.0f : 0.0f);
    auto maskType =
        RankedTensorType::get(type.getShape().drop_front(), b.getF32Type());
    NamedAttrList attrs;
    attrs.set("k", b.getF64FloatAttr(1.0));
    attrs.set("c", DenseElementsAttr::get(maskType, ArrayRef<float>(mask)));
    BlockArgument v = addState(zeros(type));
    auto passed = LIStepOp::create(b, loc(node.name), TypeRange{type},
                                   ValueRange{x, v}, attrs.getAttrs());
    states.back().next = passed.getVNext();
    return Value(AddOp::create(b, loc(node.name), passed.getVNext(), *delayed));
  }

  // Neurons. Every parameter may be a scalar or one value per neuron.
  auto scaleBy = [&](StringRef key) -> FailureOr<std::vector<double>> {
    const H5Data *d = node.param(key);
    if (!d || d->isString || d->numbers.empty())
      return error(node) << "missing numeric parameter '" << key << "'";
    return d->numbers;
  };
  NamedAttrList attrs;
  auto set = [&](StringRef name, FailureOr<Attribute> a) {
    if (succeeded(a))
      attrs.set(name, *a);
    return succeeded(a);
  };
  // c = r * dt / tau for each neuron (r and tau may differ per neuron).
  auto inputGain = [&](StringRef rKey, StringRef tauKey,
                       StringRef attr) -> bool {
    FailureOr<std::vector<double>> r = scaleBy(rKey);
    if (failed(r))
      return false;
    // Without a time constant (IF, I): v' = r x, so c = r dt.
    std::vector<double> tau(1, 1.0);
    if (!tauKey.empty()) {
      FailureOr<std::vector<double>> t = scaleBy(tauKey);
      if (failed(t))
        return false;
      tau = *t;
    }
    size_t count = std::max(r->size(), tau.size());
    if ((r->size() != 1 && r->size() != count) ||
        (tau.size() != 1 && tau.size() != count)) {
      error(node) << "'" << rKey << "' and '" << tauKey
                  << "' have different numbers of values";
      return false;
    }
    H5Data gain;
    gain.shape = r->size() == count ? node.param(rKey)->shape
                                    : node.param(tauKey)->shape;
    for (size_t i = 0; i < count; ++i)
      gain.numbers.push_back((*r)[r->size() == 1 ? 0 : i] * dt /
                             tau[tau.size() == 1 ? 0 : i]);
    std::string what =
        (rKey + " * dt" + (tauKey.empty() ? "" : " / " + tauKey)).str();
    return set(attr, neuronAttr(node, what, &gain, features, identity,
                                std::nullopt, false));
  };
  auto leak = [&](StringRef tauKey, StringRef attr) {
    return set(attr, neuronParam(node, tauKey, features,
                                 [&](double tau) { return dt / tau; },
                                 std::nullopt, true));
  };
  auto fire = [&]() {
    if (!set("v_th", neuronParam(node, "v_threshold", features, identity,
                                 std::nullopt, false)))
      return false;
    // NIR 0.x files have no v_reset: it is 0.
    if (!set("v_reset", neuronParam(node, "v_reset", features, identity, 0.0,
                                    false)))
      return false;
    attrs.set("strict", b.getUnitAttr());
    if (opts.reset == ResetMode::Soft)
      attrs.set("reset", ResetModeAttr::get(ctx, ResetMode::Soft));
    // The membrane starts at 0 (the loop's initial state), also for the
    // multi-step form whose default start is v_reset.
    auto vr = getScalarParam(attrs.get("v_reset"));
    if (opts.reset == ResetMode::Hard && (!vr || *vr != 0.0))
      attrs.set("v_init", b.getF64FloatAttr(0.0));
    return true;
  };
  auto vLeak = [&]() {
    return set("v_leak", neuronParam(node, "v_leak", features, identity, 0.0,
                                     false));
  };

  if (type == "LIF" || type == "IF") {
    bool ok = type == "LIF"
                  ? leak("tau", "k") && inputGain("r", "tau", "c") && vLeak()
                  : inputGain("r", "", "c");
    if (!ok || !fire())
      return failure();
    BlockArgument v = addState(zeros(xType));
    Operation *op =
        type == "LIF"
            ? LIFStepOp::create(b, l, TypeRange{xType, xType}, ValueRange{x, v},
                                attrs.getAttrs())
                  .getOperation()
            : IFStepOp::create(b, l, TypeRange{xType, xType}, ValueRange{x, v},
                               attrs.getAttrs())
                  .getOperation();
    states.back().next = op->getResult(1);
    return op->getResult(0);
  }

  if (type == "LI" || type == "I") {
    bool ok = type == "LI"
                  ? leak("tau", "k") && inputGain("r", "tau", "c") && vLeak()
                  : inputGain("r", "", "c");
    if (!ok)
      return failure();
    if (type == "I")
      attrs.set("k", b.getF64FloatAttr(0.0));
    BlockArgument v = addState(zeros(xType));
    auto op = LIStepOp::create(b, l, TypeRange{xType}, ValueRange{x, v},
                               attrs.getAttrs());
    states.back().next = op.getVNext();
    return Value(op.getVNext());
  }

  if (type == "CubaLIF" || type == "CubaLI") {
    // I' = (-I + w_in x) / tau_syn;  v' = (v_leak - v + r I) / tau_mem.
    if (!leak("tau_syn", "k_syn") || !leak("tau_mem", "k") ||
        !inputGain("r", "tau_mem", "c") || !vLeak())
      return failure();
    if (!node.param("w_in")) {
      // w_in defaults to 1 (NIR 0.x files have none).
      if (!set("c_syn", neuronParam(node, "tau_syn", features,
                                    [&](double tau) { return dt / tau; },
                                    std::nullopt, false)))
        return failure();
    } else if (!inputGain("w_in", "tau_syn", "c_syn")) {
      return failure();
    }
    if (type == "CubaLIF") {
      if (!fire())
        return failure();
      BlockArgument i = addState(zeros(xType));
      BlockArgument v = addState(zeros(xType));
      auto op = CubaLIFStepOp::create(b, l, TypeRange{xType, xType, xType},
                                      ValueRange{x, i, v}, attrs.getAttrs());
      states[states.size() - 2].next = op.getINext();
      states.back().next = op.getVNext();
      return Value(op.getSpikes());
    }
    // CubaLI: two leaky integrators, the synapse feeding the membrane.
    NamedAttrList syn;
    syn.set("k", attrs.get("k_syn"));
    syn.set("c", attrs.get("c_syn"));
    BlockArgument i = addState(zeros(xType));
    auto synOp = LIStepOp::create(b, l, TypeRange{xType}, ValueRange{x, i},
                                  syn.getAttrs());
    states.back().next = synOp.getVNext();
    attrs.erase("k_syn");
    attrs.erase("c_syn");
    BlockArgument v = addState(zeros(xType));
    auto mem = LIStepOp::create(b, l, TypeRange{xType},
                                ValueRange{synOp.getVNext(), v},
                                attrs.getAttrs());
    states.back().next = mem.getVNext();
    return Value(mem.getVNext());
  }

  return error(node) << "unknown node type '" << type
                     << "'; supported: " << supportedNIRNodeTypes();
}
