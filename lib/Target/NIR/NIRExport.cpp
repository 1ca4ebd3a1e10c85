//===- NIRExport.cpp - the snn dialect to NIR graphs ----------------------===//
//
// Every layer op becomes a NIR node and every data dependence an edge; an
// snn.add disappears into several edges (NIR sums a node's inputs). In the
// step form, a value carried by the time loop from a later layer back to an
// earlier one is a recurrent edge; a chain of n carried registers between two
// layers is a Delay of n steps. The import makes the same choices, so
// import -> export -> import reproduces the IR.
//
//===----------------------------------------------------------------------===//

#include "snn/Target/NIR/NIRExport.h"
#include "snn/Target/NIR/NIRImport.h"

#include "HDF5File.h"
#include "Safetensors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ManagedStatic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <numeric>

using namespace mlir;
using namespace mlir::snn;
using namespace mlir::snn::nir;
using llvm::StringRef;

namespace {
/// Where a value comes from: NIR nodes, or (inside a time loop, before the
/// loop is finished) a loop-carried register whose producer is resolved later.
struct Source {
  std::string node;
  int iterArg = -1;
};
using Signal = SmallVector<Source, 1>;

class Exporter {
public:
  Exporter(ModuleOp module, const NIRExportOptions &opts)
      : module(module), opts(opts) {}
  LogicalResult run(llvm::raw_ostream &os);

private:
  LogicalResult loadCheckpoint();
  LogicalResult visit(Operation *op);
  LogicalResult visitLoop(TimeLoopOp loop);
  LogicalResult visitNeuron(Operation *op);

  H5WriteEntry &addNode(Operation *op, StringRef type, StringRef base);
  void connect(Value from, StringRef to);
  FailureOr<Signal> signalOf(Value v, Operation *user);
  ArrayRef<int64_t> features(Value v, Operation *op);

  void addArray(H5WriteEntry &node, StringRef key, ArrayRef<int64_t> shape,
                std::vector<double> values, bool f32 = false);
  void addInts(H5WriteEntry &node, StringRef key, ArrayRef<int64_t> values,
               bool scalar = false);
  FailureOr<std::vector<double>> paramValues(Value v, Operation *user);
  std::vector<double> perNeuron(Operation *op, StringRef name, double dflt,
                                int64_t count);

  ModuleOp module;
  const NIRExportOptions &opts;
  llvm::StringMap<SafetensorsTensor> checkpoint;
  std::vector<H5WriteEntry> nodes;
  llvm::StringSet<> names;
  // Edges whose source may still be a loop register.
  std::vector<std::pair<Source, std::string>> edges;
  llvm::DenseMap<Value, Signal> signals;
  llvm::DenseMap<Operation *, unsigned> opOrder; // position of a node's op
  llvm::StringMap<unsigned> nodeOrder;
  /// Delay nodes: their output edges break cycles.
  llvm::StringSet<> delayNodes;
  unsigned delays = 0;
};
} // namespace

/// A conv2d that imports a NIR Conv1d: its input is a reshape that inserted
/// a height of 1, its kernel has height 1 and the height is not padded,
/// strided or dilated.
static bool isConv1d(Conv2DOp conv) {
  if (!conv)
    return false;
  auto reshape = conv.getInput().getDefiningOp<ReshapeOp>();
  if (!reshape)
    return false;
  auto in = cast<RankedTensorType>(reshape.getInput().getType()).getShape();
  auto out = cast<RankedTensorType>(reshape.getOutput().getType()).getShape();
  auto w = cast<RankedTensorType>(conv.getWeight().getType()).getShape();
  return out.size() == in.size() + 1 && out[out.size() - 2] == 1 &&
         out.take_back(1) == in.take_back(1) && w[2] == 1 &&
         conv.getStride()[0] == 1 && conv.getPadding()[0] == 0 &&
         (conv.getPadding().size() == 2 || conv.getPadding()[2] == 0) &&
         conv.getDilation()[0] == 1;
}

static int64_t product(ArrayRef<int64_t> shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t(1),
                         std::multiplies<int64_t>());
}

LogicalResult Exporter::loadCheckpoint() {
  if (opts.weightsPath.empty())
    return success();
  auto buffer = llvm::MemoryBuffer::getFile(opts.weightsPath);
  if (!buffer)
    return emitError(module.getLoc())
           << "cannot read checkpoint '" << opts.weightsPath
           << "': " << buffer.getError().message();
  auto tensors = readSafetensors((*buffer)->getBuffer());
  if (!tensors)
    return emitError(module.getLoc())
           << "checkpoint '" << opts.weightsPath
           << "': " << llvm::toString(tensors.takeError());
  checkpoint = std::move(*tensors);
  return success();
}

ArrayRef<int64_t> Exporter::features(Value v, Operation *op) {
  unsigned lead = op->getParentOfType<TimeLoopOp>() ? 1 : 2;
  return cast<RankedTensorType>(v.getType()).getShape().drop_front(lead);
}

/// A scalar string dataset `name` holding `value`.
static H5WriteEntry stringEntry(StringRef name, StringRef value) {
  H5WriteEntry entry;
  entry.name = name.str();
  entry.data.isString = true;
  entry.data.strings = {value.str()};
  return entry;
}

H5WriteEntry &Exporter::addNode(Operation *op, StringRef type,
                                StringRef base) {
  std::string name = base.str();
  if (auto nameLoc = op ? dyn_cast<NameLoc>(op->getLoc()) : NameLoc())
    name = nameLoc.getName().str();
  // NIR names may not contain '.': it addresses nodes of subgraphs.
  std::replace(name.begin(), name.end(), '.', '_');
  std::string unique = name;
  for (unsigned i = 1; !names.insert(unique).second; ++i)
    unique = name + "_" + std::to_string(i);
  H5WriteEntry node;
  node.name = unique;
  node.isGroup = true;
  node.children.push_back(stringEntry("type", type));
  nodes.push_back(std::move(node));
  nodeOrder[unique] = nodeOrder.size();
  if (op)
    opOrder[op] = nodeOrder[unique];
  return nodes.back();
}

void Exporter::addArray(H5WriteEntry &node, StringRef key,
                        ArrayRef<int64_t> shape, std::vector<double> values,
                        bool f32) {
  H5WriteEntry e;
  e.name = key.str();
  e.data.shape.assign(shape.begin(), shape.end());
  e.data.numbers = std::move(values);
  e.f32 = f32;
  node.children.push_back(std::move(e));
}

void Exporter::addInts(H5WriteEntry &node, StringRef key,
                       ArrayRef<int64_t> values, bool scalar) {
  H5WriteEntry e;
  e.name = key.str();
  if (!scalar)
    e.data.shape = {int64_t(values.size())};
  e.data.isInteger = true;
  e.data.numbers.assign(values.begin(), values.end());
  node.children.push_back(std::move(e));
}

FailureOr<Signal> Exporter::signalOf(Value v, Operation *user) {
  auto it = signals.find(v);
  if (it == signals.end())
    return user->emitOpError()
           << "uses a value that has no NIR equivalent (not produced by an "
              "exported layer)";
  return it->second;
}

void Exporter::connect(Value from, StringRef to) {
  for (const Source &s : signals.lookup(from))
    edges.push_back({s, to.str()});
}

FailureOr<std::vector<double>> Exporter::paramValues(Value v,
                                                     Operation *user) {
  auto param = v.getDefiningOp<ParamOp>();
  if (!param)
    return user->emitOpError()
           << "takes a weight that is not an snn.param; NIR export needs "
              "named parameters";
  auto type = cast<RankedTensorType>(param.getType());
  auto it = checkpoint.find(param.getName());
  if (it != checkpoint.end()) {
    if (ArrayRef<int64_t>(it->second.shape) != type.getShape())
      return param.emitOpError()
             << "'" << param.getName() << "' has shape " << type
             << " but the checkpoint tensor of that name does not match";
    return std::vector<double>(it->second.values.begin(),
                               it->second.values.end());
  }
  auto value = param.getValue();
  auto dense = value ? dyn_cast<DenseElementsAttr>(*value) : nullptr;
  if (!dense)
    return param.emitOpError()
           << "'" << param.getName() << "' has no value"
           << (opts.weightsPath.empty()
                   ? "; pass a trained checkpoint with --export-nir-weights"
                   : " and is not in the checkpoint '" + opts.weightsPath + "'");
  std::vector<double> out;
  for (APFloat f : dense.getValues<APFloat>())
    out.push_back(f.convertToDouble());
  return out;
}

std::vector<double> Exporter::perNeuron(Operation *op, StringRef name,
                                        double dflt, int64_t count) {
  Attribute a = op->getAttr(name);
  if (auto dense = dyn_cast_or_null<DenseFPElementsAttr>(a)) {
    std::vector<double> out;
    for (APFloat f : dense.getValues<APFloat>())
      out.push_back(f.convertToDouble());
    return out;
  }
  double v = dflt;
  if (auto s = getScalarParam(a))
    v = *s;
  return std::vector<double>(count, v);
}

static bool isScalar(Attribute a, double value) {
  auto s = getScalarParam(a);
  return s && *s == value;
}

LogicalResult Exporter::visitNeuron(Operation *op) {
  Value x = op->getOperand(0);
  ArrayRef<int64_t> shape = features(x, op);
  int64_t n = product(shape);
  double dt = opts.dt;
  auto loop = op->getParentOfType<TimeLoopOp>();
  auto get = [&](StringRef key, double dflt) {
    return perNeuron(op, key, dflt, n);
  };
  auto map = [](std::vector<double> v, auto fn) {
    for (double &x : v)
      x = fn(x);
    return v;
  };
  auto divide = [](std::vector<double> a, const std::vector<double> &b) {
    for (size_t i = 0; i < a.size(); ++i)
      a[i] /= b[i];
    return a;
  };
  auto tauOf = [&](const std::vector<double> &k) {
    return map(k, [&](double v) { return dt / v; });
  };
  auto hasZero = [](const std::vector<double> &v) {
    return llvm::is_contained(v, 0.0);
  };
  auto fire = [&](H5WriteEntry &node) {
    addArray(node, "v_threshold", shape, get("v_th", 1.0));
    addArray(node, "v_reset", shape, get("v_reset", 0.0));
  };
  Value output = op->getResult(0);
  std::string name;

  if (isa<PLIFOp, PLIFStepOp>(op))
    return op->emitOpError() << "has a learned leak (PLIF), which NIR cannot "
                                "express; convert it to snn.lif first";

  if (isa<LIFOp, LIFStepOp>(op)) {
    std::vector<double> k = get("k", 0.5), c = get("c", 0.5);
    if (hasZero(k)) {
      if (!llvm::all_equal(k))
        return op->emitOpError() << "mixes k = 0 and k > 0 in one layer; NIR "
                                    "has no such neuron";
      H5WriteEntry &node = addNode(op, "IF", "if");
      addArray(node, "r", shape, map(c, [&](double v) { return v / dt; }));
      fire(node);
      name = node.name;
    } else {
      H5WriteEntry &node = addNode(op, "LIF", "lif");
      addArray(node, "tau", shape, tauOf(k));
      addArray(node, "r", shape, divide(c, k));
      addArray(node, "v_leak", shape, get("v_leak", 0.0));
      fire(node);
      name = node.name;
    }
  } else if (isa<IFOp, IFStepOp>(op)) {
    // The import writes Threshold as an IF step whose membrane is never
    // updated (the loop carries its initial value unchanged).
    auto v = op->getNumOperands() > 1
                 ? dyn_cast<BlockArgument>(op->getOperand(1))
                 : BlockArgument();
    bool frozen = loop && v && v.getOwner() == &loop.getBodyBlock() &&
                  v.getArgNumber() >= loop.getInputs().size() &&
                  loop.getYield().getValues()[loop.getNumStepOutputs() +
                                              v.getArgNumber() -
                                              loop.getInputs().size()] == v;
    if (frozen && isScalar(op->getAttr("c"), 1.0)) {
      H5WriteEntry &node = addNode(op, "Threshold", "threshold");
      addArray(node, "threshold", shape, get("v_th", 1.0));
      name = node.name;
    } else {
      H5WriteEntry &node = addNode(op, "IF", "if");
      addArray(node, "r", shape,
               map(get("c", 1.0), [&](double v) { return v / dt; }));
      fire(node);
      name = node.name;
    }
  } else if (isa<LIOp, LIStepOp>(op)) {
    std::vector<double> k = get("k", 0.5), c = get("c", 0.5),
                        leak = get("v_leak", 0.0);
    if (isScalar(op->getAttr("k"), 1.0) && llvm::all_of(leak, [](double v) {
          return v == 0.0;
        })) {
      // k = 1 forgets the state: the output is c * x (import of Scale).
      H5WriteEntry &node = addNode(op, "Scale", "scale");
      addArray(node, "scale", shape, c);
      name = node.name;
    } else if (hasZero(k)) {
      if (!llvm::all_equal(k))
        return op->emitOpError() << "mixes k = 0 and k > 0 in one layer";
      H5WriteEntry &node = addNode(op, "I", "integrator");
      addArray(node, "r", shape, map(c, [&](double v) { return v / dt; }));
      name = node.name;
    } else {
      H5WriteEntry &node = addNode(op, "LI", "li");
      addArray(node, "tau", shape, tauOf(k));
      addArray(node, "r", shape, divide(c, k));
      addArray(node, "v_leak", shape, leak);
      name = node.name;
    }
  } else if (isa<CubaLIFOp, CubaLIFStepOp>(op)) {
    std::vector<double> k = get("k", 0.5), c = get("c", 0.5),
                        ks = get("k_syn", 0.5), cs = get("c_syn", 1.0);
    if (hasZero(k) || hasZero(ks))
      return op->emitOpError() << "has k = 0 or k_syn = 0 (no leak), which "
                                  "NIR's CubaLIF cannot express";
    H5WriteEntry &node = addNode(op, "CubaLIF", "cuba_lif");
    addArray(node, "tau_syn", shape, tauOf(ks));
    addArray(node, "tau_mem", shape, tauOf(k));
    addArray(node, "r", shape, divide(c, k));
    addArray(node, "v_leak", shape, get("v_leak", 0.0));
    addArray(node, "w_in", shape, divide(cs, ks));
    fire(node);
    name = node.name;
  } else {
    return op->emitOpError() << "is a neuron op the NIR export does not know";
  }
  connect(x, name);
  signals[output] = {Source{name}};
  return success();
}

LogicalResult Exporter::visitLoop(TimeLoopOp loop) {
  Block &body = loop.getBodyBlock();
  unsigned nIn = loop.getInputs().size();
  for (unsigned i = 0; i < nIn; ++i)
    signals[body.getArgument(i)] = signals.lookup(loop.getInputs()[i]);
  for (unsigned j = nIn; j < body.getNumArguments(); ++j)
    signals[body.getArgument(j)] = {Source{"", int(j - nIn)}};
  size_t firstEdge = edges.size();
  for (Operation &op : body.without_terminator())
    if (failed(visit(&op)))
      return failure();

  // Resolve loop registers: follow the yields until a layer's output.
  ValueRange yields = loop.getYield().getValues();
  unsigned nOut = loop.getNumStepOutputs();
  std::vector<std::pair<Source, std::string>> resolved;
  struct Register {
    Source from;
    std::string to;
    unsigned hops;
    SmallVector<int64_t> shape;
    bool recurrent;
  };
  std::vector<Register> registers;
  for (size_t e = firstEdge; e < edges.size(); ++e) {
    auto [src, dst] = edges[e];
    if (src.iterArg < 0) {
      resolved.push_back({src, dst});
      continue;
    }
    unsigned hops = 0;
    Value v = body.getArgument(nIn + src.iterArg);
    while (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &body || arg.getArgNumber() < nIn)
        break;
      Value next = yields[nOut + arg.getArgNumber() - nIn];
      if (next == v || ++hops > body.getNumArguments())
        return loop.emitOpError()
               << "carries a value that never changes into a layer; it has "
                  "no NIR equivalent";
      v = next;
    }
    Signal from = signals.lookup(v);
    for (const Source &s : from) {
      if (s.iterArg >= 0)
        return loop.emitOpError() << "has a loop-carried value that the NIR "
                                     "export cannot follow";
      // One register from a later layer back to an earlier one is a
      // recurrent edge; anything else delays the signal by `hops` steps.
      registers.push_back(
          {s, dst, hops,
           SmallVector<int64_t>(
               cast<RankedTensorType>(v.getType()).getShape().drop_front()),
           hops == 1 && nodeOrder[s.node] >= nodeOrder[dst]});
    }
  }
  // A NIR cycle carries one step on one edge (the one that closes it). A
  // cycle through two one-step registers carries two: such registers become
  // explicit Delay nodes.
  llvm::StringMap<SmallVector<StringRef>> forward;
  auto addForward = [&](const std::pair<Source, std::string> &edge) {
    if (!delayNodes.contains(edge.first.node))
      forward[edge.first.node].push_back(edge.second);
  };
  for (size_t e = 0; e < firstEdge; ++e)
    addForward(edges[e]);
  for (const auto &edge : resolved)
    addForward(edge);
  auto reaches = [&](StringRef from, StringRef to) {
    SmallVector<StringRef> work{from};
    llvm::StringSet<> seen{from};
    while (!work.empty()) {
      StringRef n = work.pop_back_val();
      if (n == to)
        return true;
      for (StringRef m : forward.lookup(n))
        if (seen.insert(m).second)
          work.push_back(m);
    }
    return false;
  };
  SmallVector<bool> shared(registers.size(), false);
  for (size_t i = 0; i < registers.size(); ++i)
    for (size_t j = i + 1; j < registers.size(); ++j)
      if (registers[i].recurrent && registers[j].recurrent &&
          reaches(registers[i].to, registers[j].from.node) &&
          reaches(registers[j].to, registers[i].from.node))
        shared[i] = shared[j] = true;
  for (size_t i = 0; i < registers.size(); ++i) {
    const Register &r = registers[i];
    if (r.recurrent && !shared[i]) {
      resolved.push_back({r.from, r.to});
      continue;
    }
    H5WriteEntry &d =
        addNode(nullptr, "Delay", "delay" + std::to_string(delays++));
    delayNodes.insert(d.name);
    addArray(d, "delay", r.shape,
             std::vector<double>(product(r.shape), r.hops * opts.dt));
    resolved.push_back({r.from, d.name});
    resolved.push_back({Source{d.name}, r.to});
  }
  edges.resize(firstEdge);
  edges.insert(edges.end(), resolved.begin(), resolved.end());
  for (unsigned i = 0; i < nOut; ++i) {
    FailureOr<Signal> s = signalOf(yields[i], loop);
    if (failed(s))
      return failure();
    signals[loop.getResult(i)] = *s;
  }
  return success();
}

LogicalResult Exporter::visit(Operation *op) {
  auto single = [&](Value in, StringRef name) {
    connect(in, name);
    signals[op->getResult(0)] = {Source{name.str()}};
  };
  auto pair = [](ArrayRef<int64_t> v) { return SmallVector<int64_t>(v); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<ParamOp, arith::ConstantOp>([](Operation *) { return success(); })
      .Case<TimeLoopOp>([&](TimeLoopOp loop) { return visitLoop(loop); })
      .Case<LinearOp>([&](LinearOp lin) -> LogicalResult {
        auto w = paramValues(lin.getWeight(), op);
        if (failed(w) || failed(signalOf(lin.getInput(), op)))
          return failure();
        StringRef pname = lin.getWeight().getDefiningOp<ParamOp>().getName();
        pname.consume_back(".weight");
        H5WriteEntry &node =
            addNode(op, lin.getBias() ? "Affine" : "Linear", pname);
        auto wShape = cast<RankedTensorType>(lin.getWeight().getType()).getShape();
        addArray(node, "weight", wShape, *w, /*f32=*/true);
        if (lin.getBias()) {
          auto bv = paramValues(lin.getBias(), op);
          if (failed(bv))
            return failure();
          addArray(node, "bias", {wShape[0]}, *bv, true);
        }
        single(lin.getInput(), node.name);
        return success();
      })
      .Case<ReshapeOp>([&](ReshapeOp reshape) -> LogicalResult {
        // Only the reshapes around a Conv1d (imported as a conv2d over
        // [C, 1, L]) have a NIR meaning: they are part of that node.
        bool around = isConv1d(reshape.getInput().getDefiningOp<Conv2DOp>()) ||
                      llvm::all_of(reshape->getUsers(), [](Operation *user) {
                        return isConv1d(dyn_cast<Conv2DOp>(user));
                      });
        if (!around && !reshape->use_empty()) {
          // Merging a run of dims [s, e] is a Flatten of those dims.
          ArrayRef<int64_t> in = features(reshape.getInput(), op);
          ArrayRef<int64_t> out = features(reshape.getResult(), op);
          size_t start = 0;
          while (start < in.size() && start < out.size() &&
                 in[start] == out[start])
            ++start;
          size_t tail = out.size() - std::min(out.size(), start + 1);
          bool merges = start < out.size() && in.size() > out.size() &&
                        in.take_back(tail) == out.take_back(tail) &&
                        product(in.slice(start, in.size() - tail - start)) ==
                            out[start];
          if (merges) {
            if (failed(signalOf(reshape.getInput(), op)))
              return failure();
            H5WriteEntry &node = addNode(op, "Flatten", "flatten");
            addInts(node, "start_dim", {int64_t(start)}, true);
            addInts(node, "end_dim", {int64_t(in.size() - tail - 1)}, true);
            addInts(node, "input_type", SmallVector<int64_t>(in));
            single(reshape.getInput(), node.name);
            return success();
          }
        }
        if (!around || reshape->use_empty())
          return reshape.emitOpError()
                 << "has no NIR equivalent (only the reshapes around a "
                    "convolution with a kernel of height 1, a Conv1d, and "
                    "those that merge a run of dims, a Flatten, do)";
        auto s = signalOf(reshape.getInput(), op);
        if (failed(s))
          return failure();
        signals[reshape.getResult()] = *s;
        return success();
      })
      .Case<Conv2DOp>([&](Conv2DOp conv) -> LogicalResult {
        // NIR is NCHW; --snn-channels-last runs after the export's input.
        if (conv.getChannelsLast())
          return conv.emitOpError()
                 << "is channels_last (NHWC); NIR export needs the NCHW "
                    "form (export before --snn-channels-last)";
        auto w = paramValues(conv.getWeight(), op);
        if (failed(w) || failed(signalOf(conv.getInput(), op)))
          return failure();
        StringRef pname = conv.getWeight().getDefiningOp<ParamOp>().getName();
        pname.consume_back(".weight");
        auto wShape = cast<RankedTensorType>(conv.getWeight().getType()).getShape();
        // NIR convolutions always have a bias (zeros when the layer has none).
        std::vector<double> bias(wShape[0], 0.0);
        if (conv.getBias()) {
          auto bv = paramValues(conv.getBias(), op);
          if (failed(bv))
            return failure();
          bias = *bv;
        }
        // Asymmetric padding is NIR's "same" (stride 1, the odd pad after,
        // as PyTorch pads) or has no NIR equivalent.
        ArrayRef<int64_t> pad = conv.getPadding();
        bool same = false;
        if (pad.size() == 4 && (pad[0] != pad[2] || pad[1] != pad[3])) {
          same = conv.getStride()[0] == 1 && conv.getStride()[1] == 1;
          for (int i = 0; i < 2; ++i) {
            int64_t total = conv.getDilation()[i] * (wShape[2 + i] - 1);
            same &= pad[i] == total / 2 && pad[2 + i] == total - total / 2;
          }
          if (!same)
            return conv.emitOpError()
                   << "has asymmetric padding [" << pad << "]"
                   << " that is not PyTorch's 'same' (stride 1, the odd pad "
                      "after): NIR convolutions pad symmetrically";
        }
        auto addPadding = [&](H5WriteEntry &node, ArrayRef<int64_t> ints) {
          if (!same)
            return addInts(node, "padding", ints);
          node.children.push_back(stringEntry("padding", "same"));
        };
        if (isConv1d(conv)) {
          // [O, C/g, 1, K] -> [O, C/g, K]: the same values in the same order.
          H5WriteEntry &node = addNode(op, "Conv1d", pname);
          addArray(node, "weight", {wShape[0], wShape[1], wShape[3]}, *w, true);
          addArray(node, "bias", {wShape[0]}, bias, true);
          addInts(node, "stride", {conv.getStride()[1]});
          addPadding(node, {conv.getPadding()[1]});
          addInts(node, "dilation", {conv.getDilation()[1]});
          addInts(node, "groups", {int64_t(conv.getGroups())}, /*scalar=*/true);
          // NIR's Conv1d takes the input length as a scalar.
          addInts(node, "input_shape", features(conv.getInput(), op).take_back(1),
                  /*scalar=*/true);
          single(conv.getInput(), node.name);
          return success();
        }
        H5WriteEntry &node = addNode(op, "Conv2d", pname);
        addArray(node, "weight", wShape, *w, true);
        addArray(node, "bias", {wShape[0]}, bias, true);
        addInts(node, "stride", pair(conv.getStride()));
        addPadding(node, pair(conv.getPadding().take_front(2)));
        addInts(node, "dilation", pair(conv.getDilation()));
        addInts(node, "groups", {int64_t(conv.getGroups())}, /*scalar=*/true);
        addInts(node, "input_shape",
                pair(features(conv.getInput(), op).take_back(2)));
        single(conv.getInput(), node.name);
        return success();
      })
      .Case<AvgPool2DOp, SumPool2DOp>([&](auto pool) -> LogicalResult {
        if (failed(signalOf(pool.getInput(), op)))
          return failure();
        bool sum = isa<SumPool2DOp>(op);
        H5WriteEntry &node = addNode(op, sum ? "SumPool2d" : "AvgPool2d",
                                     sum ? "sumpool" : "avgpool");
        addInts(node, "kernel_size", pair(pool.getKernelSize()));
        addInts(node, "stride", pool.getEffectiveStride());
        addInts(node, "padding", pair(pool.getPadding()));
        single(pool.getInput(), node.name);
        return success();
      })
      .Case<FlattenOp>([&](FlattenOp flat) -> LogicalResult {
        if (failed(signalOf(flat.getInput(), op)))
          return failure();
        ArrayRef<int64_t> in = features(flat.getInput(), op);
        int64_t keep = features(flat.getOutput(), op).size() - 1;
        H5WriteEntry &node = addNode(op, "Flatten", "flatten");
        addInts(node, "start_dim", {keep}, true);
        addInts(node, "end_dim", {-1}, true);
        addInts(node, "input_type", pair(in));
        single(flat.getInput(), node.name);
        return success();
      })
      .Case<ScaleOp>([&](ScaleOp scale) -> LogicalResult {
        if (failed(signalOf(scale.getInput(), op)))
          return failure();
        ArrayRef<int64_t> shape = features(scale.getInput(), op);
        H5WriteEntry &node = addNode(op, "Scale", "scale");
        addArray(node, "scale", shape,
                 std::vector<double>(product(shape),
                                     scale.getScale().convertToDouble()));
        single(scale.getInput(), node.name);
        return success();
      })
      .Case<AddOp>([&](AddOp add) -> LogicalResult {
        auto a = signalOf(add.getLhs(), op), b = signalOf(add.getRhs(), op);
        if (failed(a) || failed(b))
          return failure();
        Signal s = *a;
        s.append(b->begin(), b->end());
        signals[add.getOutput()] = s;
        return success();
      })
      .Case<DropoutOp>([&](DropoutOp d) -> LogicalResult {
        auto s = signalOf(d.getInput(), op); // identity in inference
        if (failed(s))
          return failure();
        signals[d.getOutput()] = *s;
        return success();
      })
      .Case<func::ReturnOp>([&](func::ReturnOp ret) -> LogicalResult {
        for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
          if (failed(signalOf(v, op)))
            return failure();
          H5WriteEntry &node = addNode(
              nullptr, "Output",
              ret.getNumOperands() == 1 ? "output" : "output" + std::to_string(i));
          auto shape = cast<RankedTensorType>(v.getType()).getShape().drop_front(2);
          addInts(node, "shape", pair(shape));
          connect(v, node.name);
        }
        return success();
      })
      .Default([&](Operation *op) -> LogicalResult {
        if (isa<NeuronOpInterface>(op))
          return visitNeuron(op);
        return op->emitOpError()
               << "has no NIR equivalent (NIR export supports linear, conv2d, "
                  "sum/avg pooling, flatten, scale, add, dropout and the "
                  "lif/if/li/cuba_lif neurons)";
      });
}

LogicalResult Exporter::run(llvm::raw_ostream &os) {
  if (!(opts.dt > 0))
    return emitError(module.getLoc()) << "NIR export needs dt > 0";
  func::FuncOp func = module.lookupSymbol<func::FuncOp>("forward");
  if (!func) {
    auto funcs = module.getOps<func::FuncOp>();
    if (std::distance(funcs.begin(), funcs.end()) != 1)
      return emitError(module.getLoc())
             << "NIR export needs a function @forward (the model)";
    func = *funcs.begin();
  }
  if (func.isExternal())
    return func.emitOpError() << "has no body to export";
  if (failed(loadCheckpoint()))
    return failure();
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() < 3)
      return func.emitOpError()
             << "argument #" << i << " must be a time-leading tensor "
             << "[T, B, features...] to become a NIR Input";
    H5WriteEntry &node = addNode(
        nullptr, "Input",
        func.getNumArguments() == 1 ? "input" : "input" + std::to_string(i));
    addInts(node, "shape", SmallVector<int64_t>(type.getShape().drop_front(2)));
    signals[arg] = {Source{node.name}};
  }
  for (Operation &op : func.getBody().front())
    if (failed(visit(&op)))
      return failure();

  H5WriteEntry root, graph, nodesGroup, edgeSet;
  root.isGroup = true;
  H5WriteEntry version = stringEntry("version", "1.0.0");
  graph.name = "node";
  graph.isGroup = true;
  H5WriteEntry type = stringEntry("type", "NIRGraph");
  nodesGroup.name = "nodes";
  nodesGroup.isGroup = true;
  nodesGroup.children = std::move(nodes);
  edgeSet.name = "edges";
  edgeSet.data.isString = true;
  edgeSet.data.shape = {int64_t(edges.size()), 2};
  for (auto &[src, dst] : edges) {
    edgeSet.data.strings.push_back(src.node);
    edgeSet.data.strings.push_back(dst);
  }
  graph.children = {std::move(edgeSet), std::move(nodesGroup), std::move(type)};
  root.children = {std::move(graph), std::move(version)};
  llvm::Expected<std::string> image = writeHDF5Image(root);
  if (!image)
    return emitError(module.getLoc())
           << "cannot write the NIR file: " << llvm::toString(image.takeError());
  os << *image;
  return success();
}

LogicalResult mlir::snn::exportNIR(ModuleOp module, llvm::raw_ostream &os,
                                   const NIRExportOptions &options) {
  return Exporter(module, options).run(os);
}

namespace {
struct NIRExportCLOptions {
  llvm::cl::opt<std::string> weights{
      "export-nir-weights",
      llvm::cl::desc("safetensors checkpoint whose tensors (named as the "
                     "snn.param names) replace the parameter values"),
      llvm::cl::value_desc("ckpt.safetensors"), llvm::cl::init("")};
};
llvm::ManagedStatic<NIRExportCLOptions> exportOptions;
} // namespace

void mlir::snn::registerNIRExportTranslation() {
  registerNIRImportCLOptions(); // --nir-dt
  *exportOptions;
  TranslateFromMLIRRegistration exportNIR(
      "export-nir", "write the model as a NIR graph (HDF5)",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError() << "NIR export expects a builtin.module";
        NIRExportOptions options;
        options.dt = getNIRImportCLOptions().dt;
        options.weightsPath = exportOptions->weights;
        return mlir::snn::exportNIR(module, os, options);
      },
      registerNIRImportDialects);
}
