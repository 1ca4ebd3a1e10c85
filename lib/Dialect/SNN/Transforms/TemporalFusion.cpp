//===- TemporalFusion.cpp - step form to multi-step form ------------------===//
//
// A time loop body is one step of the network. Most of it does not need the
// loop: stateless layers apply the same function at every step, and a neuron
// whose membrane only it carries is one scan over time. This pass rebuilds
// those ops over the whole [T, B, ...] tensors so that one GEMM/conv covers
// every step and each neuron layer is one kernel.
//
// The body is a dataflow graph with two kinds of edges: uses within a step,
// and loop-carried values (yield at t-1 -> block argument at t). A neuron's
// own membrane is internal to the neuron once it is fused, so its edge is
// dropped. Ops that cannot be expressed over the whole sequence (recurrences,
// delays, states read after the loop, ops with no multi-step form) seed a
// "kept" set; everything on a path between kept ops is kept too. The kept ops
// form a smaller time loop; the rest is rebuilt in front of it (what it does
// not depend on) or after it, reading its stacked per-step outputs.
//
//===----------------------------------------------------------------------===//

#include "snn/Dialect/SNN/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::snn {
#define GEN_PASS_DEF_SNNTEMPORALFUSIONPASS
#include "snn/Dialect/SNN/Transforms/Passes.h.inc"
} // namespace mlir::snn

using namespace mlir;
using namespace mlir::snn;

namespace {

struct FusionStats {
  llvm::Statistic &hoisted, &neurons, &loopsRemoved, &kept;
};

/// Stateless ops that act on trailing dims, so they take any leading dims.
static bool isStateless(Operation *op) {
  return isa<LinearOp, Conv2DOp, AvgPool2DOp, SumPool2DOp, MaxPool2DOp,
             BatchNormOp, FlattenOp, ReshapeOp, AddOp, ScaleOp, DropoutOp>(op);
}

/// Operands that carry samples (and gain the time dim); the others are
/// parameters (weights, biases, statistics, PLIF's leak) shared by all steps.
static bool isDataOperand(Operation *op, unsigned index) {
  if (isa<AddOp>(op))
    return true;
  return index == 0;
}

static RankedTensorType prependTime(Type type, int64_t steps) {
  auto ranked = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape{steps};
  llvm::append_range(shape, ranked.getShape());
  return RankedTensorType::get(shape, ranked.getElementType(),
                               ranked.getEncoding());
}

/// Names of the initial-state attributes of a neuron, in state order.
static SmallVector<StringRef, 2> initAttrNames(Operation *op) {
  if (isa<CubaLIFStepOp>(op))
    return {"i_init", "v_init"};
  return {"v_init"};
}

/// The initial state a multi-step neuron assumes when `name` is absent.
static double defaultInit(Operation *op, StringRef name) {
  if (name == "i_init" || isa<LIStepOp>(op))
    return 0.0;
  auto reset = op->getAttrOfType<ResetModeAttr>("reset");
  if (reset && reset.getValue() == ResetMode::Soft)
    return 0.0;
  return getScalarParam(op->getAttr("v_reset")).value_or(0.0);
}

/// A constant initial state [B, features...] as a neuron parameter: a scalar
/// when every element is equal, one value per neuron when every batch row is.
static FailureOr<Attribute> initAsParam(DenseFPElementsAttr init,
                                        std::string &why) {
  Builder b(init.getContext());
  if (init.isSplat())
    return Attribute(
        b.getF64FloatAttr(init.getSplatValue<APFloat>().convertToDouble()));
  ArrayRef<int64_t> shape = init.getType().getShape();
  int64_t rows = shape.front();
  int64_t perRow = init.getNumElements() / std::max<int64_t>(rows, 1);
  SmallVector<APFloat> values(init.getValues<APFloat>());
  for (int64_t r = 1; r < rows; ++r)
    for (int64_t i = 0; i < perRow; ++i)
      if (!values[r * perRow + i].bitwiseIsEqual(values[i])) {
        why = "differs between samples of the batch";
        return failure();
      }
  auto type = RankedTensorType::get(shape.drop_front(), init.getElementType());
  return Attribute(DenseElementsAttr::get(
      type, ArrayRef<APFloat>(values).take_front(perRow)));
}

/// Initial-state attributes of a fused neuron; a null value means the
/// default, so the attribute is left out.
using InitAttrs = SmallVector<std::pair<StringRef, Attribute>, 2>;

/// Fuses one snn.time_loop.
class LoopFuser {
public:
  LoopFuser(TimeLoopOp loop, FusionStats stats)
      : loop(loop), body(loop.getBodyBlock()), yield(loop.getYield()),
        numInputs(loop.getInputs().size()), numStates(loop.getInits().size()),
        numOutputs(loop.getNumStepOutputs()), stats(stats) {}

  void run();

private:
  // Analysis.
  void forwardInvariantStates();
  void classifyInvariantOps();
  std::optional<std::string> checkFusableNeuron(Operation *op,
                                                InitAttrs &inits);
  std::optional<std::string> checkConvertible(Operation *op);
  void computeReachability();
  void closeKeptSet();
  std::optional<unsigned> cycleThrough(unsigned node);
  void keep(unsigned node, const Twine &why);

  // Rewriting.
  void rebuild();
  void buildMultiStep(OpBuilder &b, Operation *op);

  bool isVarying(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == &body;
    Operation *def = v.getDefiningOp();
    return def && nodeOf.count(def);
  }
  std::optional<unsigned> stateOf(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &body || arg.getArgNumber() < numInputs)
      return std::nullopt;
    return arg.getArgNumber() - numInputs;
  }
  BlockArgument stateArg(unsigned j) {
    return body.getArgument(numInputs + j);
  }
  Value nextState(unsigned j) { return yield.getOperand(numOutputs + j); }
  Value finalState(unsigned j) { return loop.getResult(numOutputs + j); }
  /// The op whose result becomes state `j`, following states that only pass
  /// another state on (delay lines).
  std::optional<unsigned> stateProducer(unsigned j) {
    for (unsigned hops = 0; hops <= numStates; ++hops) {
      std::optional<unsigned> k = stateOf(nextState(j));
      if (!k)
        return producerNode(nextState(j));
      j = *k;
    }
    return std::nullopt;
  }
  std::optional<unsigned> producerNode(Value v) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt;
    auto it = nodeOf.find(def);
    if (it == nodeOf.end())
      return std::nullopt;
    return it->second;
  }

  TimeLoopOp loop;
  Block &body;
  YieldOp yield;
  unsigned numInputs, numStates, numOutputs;
  int64_t steps = 0;
  FusionStats stats;

  SmallVector<Operation *> invariantOps;
  /// Body ops whose results change from step to step, in body order.
  SmallVector<Operation *> nodes;
  DenseMap<Operation *, unsigned> nodeOf;
  /// The fused neuron that owns each state, or null.
  SmallVector<Operation *> owner;
  /// Initial-state attributes of each fusable neuron.
  DenseMap<Operation *, InitAttrs> neuronInits;
  /// reach[a][b]: b depends on a through uses and loop-carried values.
  SmallVector<llvm::BitVector> reach;
  llvm::BitVector kept;
  /// Ops that read a loop-carried value outside any recurrence: they go
  /// after the smaller loop, which passes the value on.
  llvm::BitVector stateReaders;
  /// Ops that depend on the smaller loop (after the closure).
  llvm::BitVector afterKept;

  /// Step value -> its value stacked over time.
  DenseMap<Value, Value> stacked;
};

} // namespace

/// A state that the body yields unchanged is its initial value at every step.
void LoopFuser::forwardInvariantStates() {
  for (unsigned j = 0; j < numStates; ++j) {
    if (nextState(j) != stateArg(j))
      continue;
    Value init = loop.getInits()[j];
    stateArg(j).replaceAllUsesWith(init);
    finalState(j).replaceAllUsesWith(init);
  }
}

/// Ops that compute the same value at every step (parameters, constants) can
/// move in front of the loop unchanged.
void LoopFuser::classifyInvariantOps() {
  DenseSet<Operation *> invariant;
  for (Operation &op : body.without_terminator()) {
    bool isInvariant =
        op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
        llvm::all_of(op.getOperands(), [&](Value v) {
          if (Operation *def = v.getDefiningOp())
            return def->getBlock() != &body || invariant.count(def);
          return cast<BlockArgument>(v).getOwner() != &body;
        });
    if (isInvariant) {
      invariant.insert(&op);
      invariantOps.push_back(&op);
      continue;
    }
    nodeOf[&op] = nodes.size();
    nodes.push_back(&op);
  }
}

std::optional<std::string>
LoopFuser::checkFusableNeuron(Operation *op, InitAttrs &inits) {
  auto neuron = cast<NeuronOpInterface>(op);
  if (!neuron.isStepForm())
    return std::string("it is a multi-step neuron op inside a time loop; use "
                       "the per-step op (snn.") +
           op->getName().stripDialect().str() + "_step) here";
  if (!isVarying(neuron.getInput()))
    return std::string("its input does not vary over time, and a multi-step "
                       "neuron needs a [T, B, ...] input");
  unsigned numStateOperands = neuron.getNumStates();
  for (unsigned k = 1 + numStateOperands; k < op->getNumOperands(); ++k)
    if (isVarying(op->getOperand(k)))
      return "its parameter operand #" + std::to_string(k) +
             " varies over time";
  SmallVector<StringRef, 2> names = initAttrNames(op);
  unsigned firstNext = op->getNumResults() - numStateOperands;
  for (unsigned k = 0; k < numStateOperands; ++k) {
    std::optional<unsigned> j = stateOf(op->getOperand(1 + k));
    if (!j)
      return std::string("its state (operand #") + std::to_string(1 + k) +
             ") is not carried from step to step by this loop";
    std::string which = "loop-carried value #" + std::to_string(*j);
    for (OpOperand &use : stateArg(*j).getUses())
      if (use.getOwner() != op)
        return "its state (" + which + ") is also read by '" +
               use.getOwner()->getName().getStringRef().str() + "'";
    Value next = op->getResult(firstNext + k);
    if (nextState(*j) != next)
      return "the loop does not carry its next state into " + which;
    for (OpOperand &use : next.getUses()) {
      bool isItsState = use.getOwner() == yield &&
                        use.getOperandNumber() == numOutputs + *j;
      // A leaky integrator's output is its membrane.
      if (!isItsState && !isa<LIStepOp>(op))
        return "its state after the step is read by '" +
               use.getOwner()->getName().getStringRef().str() +
               "', and the multi-step op returns only its output";
    }
    if (!finalState(*j).use_empty())
      return "its final state (loop result #" +
             std::to_string(numOutputs + *j) + ") is used after the loop";
    DenseFPElementsAttr init;
    if (!matchPattern(loop.getInits()[*j], m_Constant(&init)))
      return "its initial state (" + which + ") is not a constant";
    std::string why;
    FailureOr<Attribute> param = initAsParam(init, why);
    if (failed(param))
      return "its initial state (" + which + ") " + why;
    auto scalar = getScalarParam(*param);
    bool isDefault = scalar && *scalar == defaultInit(op, names[k]);
    inits.push_back({names[k], isDefault ? Attribute() : *param});
  }
  return std::nullopt;
}

std::optional<std::string> LoopFuser::checkConvertible(Operation *op) {
  if (!isStateless(op))
    return "'" + op->getName().getStringRef().str() +
           "' has no multi-step form";
  for (OpOperand &operand : op->getOpOperands()) {
    unsigned i = operand.getOperandNumber();
    bool varying = isVarying(operand.get());
    if (isDataOperand(op, i) && !varying)
      return "operand #" + std::to_string(i) +
             " does not vary over time, and the multi-step form has no "
             "broadcast";
    if (!isDataOperand(op, i) && varying)
      return "its parameter operand #" + std::to_string(i) +
             " varies over time";
  }
  return std::nullopt;
}

void LoopFuser::computeReachability() {
  unsigned n = nodes.size();
  SmallVector<SmallVector<unsigned>> succ(n);
  for (unsigned q = 0; q < n; ++q)
    for (Value v : nodes[q]->getOperands())
      if (auto p = producerNode(v))
        succ[*p].push_back(q);
  // A loop-carried value links the op that yields it to its readers; a fused
  // neuron's own membrane is internal to it.
  for (unsigned j = 0; j < numStates; ++j) {
    if (owner[j])
      continue;
    auto p = stateProducer(j);
    if (!p)
      continue;
    for (Operation *user : stateArg(j).getUsers())
      if (auto it = nodeOf.find(user); it != nodeOf.end())
        succ[*p].push_back(it->second);
  }
  reach.assign(n, llvm::BitVector(n));
  for (unsigned s = 0; s < n; ++s) {
    SmallVector<unsigned> work(succ[s]);
    while (!work.empty()) {
      unsigned q = work.pop_back_val();
      if (reach[s].test(q))
        continue;
      reach[s].set(q);
      llvm::append_range(work, succ[q]);
    }
  }
}

/// The loop-carried value through which `node` depends on its own output at
/// an earlier step, if any.
std::optional<unsigned> LoopFuser::cycleThrough(unsigned node) {
  for (unsigned j = 0; j < numStates; ++j) {
    if (owner[j])
      continue;
    auto p = stateProducer(j);
    if (!p || (*p != node && !reach[node].test(*p)))
      continue;
    for (Operation *user : stateArg(j).getUsers()) {
      auto it = nodeOf.find(user);
      if (it != nodeOf.end() &&
          (it->second == node || reach[it->second].test(node)))
        return j;
    }
  }
  return std::nullopt;
}

void LoopFuser::keep(unsigned node, const Twine &why) {
  kept.set(node);
  nodes[node]->emitRemark() << "not hoisted out of the time loop: " << why;
}

/// Keeps every op on a path between kept ops, and the producers of states
/// the smaller loop still carries when they depend on kept ops.
void LoopFuser::closeKeptSet() {
  unsigned n = nodes.size();
  for (bool changed = true; changed;) {
    changed = false;
    afterKept = stateReaders;
    for (unsigned k : kept.set_bits())
      afterKept |= reach[k];
    for (unsigned r : stateReaders.set_bits())
      afterKept |= reach[r];
    for (unsigned o = 0; o < n; ++o) {
      if (kept.test(o) || !afterKept.test(o) || !reach[o].anyCommon(kept))
        continue;
      if (stateReaders.test(o))
        keep(o, "it reads a loop-carried value of an earlier step and feeds "
                "ops that stay in the time loop");
      else if (auto j = cycleThrough(o))
        keep(o, "depends on its output at t-1 through loop-carried value #" +
                    Twine(*j));
      else
        keep(o, "it lies between ops that stay in the time loop");
      changed = true;
    }
    for (unsigned j = 0; j < numStates && !changed; ++j) {
      if (owner[j] || (stateArg(j).use_empty() && finalState(j).use_empty()))
        continue;
      auto p = stateProducer(j);
      if (p && !kept.test(*p) && afterKept.test(*p)) {
        keep(*p, "it computes loop-carried value #" + Twine(j) +
                     " from ops that stay in the time loop");
        changed = true;
      }
    }
  }
}

void LoopFuser::run() {
  steps = loop.getNumTimeSteps();
  if (ShapedType::isDynamic(steps)) {
    loop.emitRemark() << "not fused: the number of time steps is not static";
    return;
  }
  forwardInvariantStates();
  classifyInvariantOps();
  unsigned n = nodes.size();
  kept = llvm::BitVector(n);
  stateReaders = llvm::BitVector(n);
  owner.assign(numStates, nullptr);

  // Neurons first: whether a state is owned decides the other ops' reasons.
  DenseMap<Operation *, std::string> reasons;
  for (Operation *op : nodes) {
    if (!isa<NeuronOpInterface>(op))
      continue;
    InitAttrs inits;
    if (auto why = checkFusableNeuron(op, inits)) {
      reasons[op] = *why;
      continue;
    }
    neuronInits[op] = inits;
    for (unsigned k = 0, e = cast<NeuronOpInterface>(op).getNumStates(); k < e;
         ++k)
      owner[*stateOf(op->getOperand(1 + k))] = op;
  }
  computeReachability();
  for (unsigned i = 0; i < n; ++i) {
    Operation *op = nodes[i];
    if (auto it = reasons.find(op); it != reasons.end()) {
      keep(i, it->second);
      continue;
    }
    std::optional<unsigned> state;
    for (Value v : op->getOperands())
      if ((state = stateOf(v)) && !owner[*state])
        break;
    if (state && !owner[*state]) {
      if (auto j = cycleThrough(i)) {
        keep(i, "depends on its output at t-1 through loop-carried value #" +
                    Twine(*j));
        continue;
      }
      stateReaders.set(i);
    }
    if (neuronInits.count(op))
      continue;
    if (auto why = checkConvertible(op))
      keep(i, *why);
  }
  closeKeptSet();
  for (unsigned j = 0; j < numStates; ++j) {
    if (owner[j] || stateArg(j).use_empty())
      continue;
    bool readInLoop = llvm::any_of(stateArg(j).getUsers(), [&](Operation *u) {
      auto it = nodeOf.find(u);
      return it != nodeOf.end() && kept.test(it->second);
    });
    if (!readInLoop)
      loop.emitRemark() << "loop-carried value #" << j
                        << " stays in a time loop: it passes a value to a "
                           "later step (a delay), which the multi-step form "
                           "cannot express";
  }

  bool anyDropped = false;
  for (unsigned j = 0; j < numStates; ++j)
    anyDropped |= (owner[j] && !kept.test(nodeOf[owner[j]])) ||
                  (stateArg(j).use_empty() && finalState(j).use_empty());
  if (invariantOps.empty() && kept.all() && !anyDropped)
    return;
  rebuild();
}

void LoopFuser::buildMultiStep(OpBuilder &b, Operation *op) {
  auto stackedOf = [&](Value v) {
    Value s = stacked.lookup(v);
    assert(s && "data operand has no stacked value");
    return s;
  };
  Type resultType = prependTime(op->getResult(0).getType(), steps);
  if (auto neuron = dyn_cast<NeuronOpInterface>(op)) {
    // snn.lif_step (input, v, [w]) -> snn.lif (input, [w]).
    OperationState state(op->getLoc(),
                         op->getName().getStringRef().drop_back(5));
    state.addOperands(stackedOf(neuron.getInput()));
    for (unsigned k = 1 + neuron.getNumStates(); k < op->getNumOperands(); ++k)
      state.addOperands(op->getOperand(k));
    state.addTypes(resultType);
    NamedAttrList attrs(op->getAttrDictionary());
    for (auto [name, value] : neuronInits[op]) {
      if (value)
        attrs.set(name, value);
      else
        attrs.erase(name);
    }
    state.addAttributes(attrs);
    stacked[op->getResult(0)] = b.create(state)->getResult(0);
    ++stats.neurons;
    return;
  }
  IRMapping mapping;
  for (OpOperand &operand : op->getOpOperands())
    if (isDataOperand(op, operand.getOperandNumber()))
      mapping.map(operand.get(), stackedOf(operand.get()));
  Operation *clone = b.clone(*op, mapping);
  clone->getResult(0).setType(resultType);
  stacked[op->getResult(0)] = clone->getResult(0);
  ++stats.hoisted;
}

void LoopFuser::rebuild() {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  for (Operation *op : invariantOps)
    op->moveBefore(loop);
  for (unsigned i = 0; i < numInputs; ++i)
    stacked[body.getArgument(i)] = loop.getInputs()[i];

  // Ops the smaller loop does not depend on go in front of it.
  for (unsigned i = 0, e = nodes.size(); i < e; ++i)
    if (!kept.test(i) && !afterKept.test(i))
      buildMultiStep(b, nodes[i]);

  SmallVector<unsigned> keptStates;
  for (unsigned j = 0; j < numStates; ++j) {
    bool fused = owner[j] && !kept.test(nodeOf[owner[j]]);
    bool unused = stateArg(j).use_empty() && finalState(j).use_empty();
    if (!fused && !unused)
      keptStates.push_back(j);
  }

  // Values of the kept part needed after it: per-step outputs of the loop and
  // data of the ops rebuilt after it.
  llvm::SetVector<Value> exported;
  auto needsExport = [&](Value v) {
    if (auto p = producerNode(v))
      return kept.test(*p);
    return !isVarying(v) || stateOf(v).has_value();
  };
  for (unsigned i = 0, e = nodes.size(); i < e; ++i)
    if (!kept.test(i) && afterKept.test(i))
      for (OpOperand &operand : nodes[i]->getOpOperands())
        if (isDataOperand(nodes[i], operand.getOperandNumber()) &&
            needsExport(operand.get()))
          exported.insert(operand.get());
  for (unsigned i = 0; i < numOutputs; ++i)
    if (needsExport(yield.getOperand(i)))
      exported.insert(yield.getOperand(i));

  if (kept.any() || !keptStates.empty() || !exported.empty()) {
    auto *newBody = new Block();
    IRMapping mapping;
    SmallVector<Value> ins, inits;
    SmallVector<Type> resultTypes;
    for (unsigned j : keptStates) {
      mapping.map(stateArg(j), newBody->addArgument(stateArg(j).getType(),
                                                    stateArg(j).getLoc()));
      inits.push_back(loop.getInits()[j]);
    }
    // Step values computed outside the smaller loop enter as slices of their
    // stacked values.
    auto lookup = [&](Value v) -> Value {
      if (Value m = mapping.lookupOrNull(v))
        return m;
      if (!isVarying(v))
        return v;
      Value whole = stacked.lookup(v);
      assert(whole && "kept op reads a value computed after the loop");
      BlockArgument slice =
          newBody->insertArgument(ins.size(), v.getType(), v.getLoc());
      ins.push_back(whole);
      mapping.map(v, slice);
      return slice;
    };
    // The block has no parent region yet, so the builder gets the context.
    OpBuilder bodyBuilder(loop.getContext());
    bodyBuilder.setInsertionPointToEnd(newBody);
    for (unsigned i : kept.set_bits()) {
      for (Value v : nodes[i]->getOperands())
        lookup(v);
      bodyBuilder.clone(*nodes[i], mapping);
    }
    SmallVector<Value> yielded;
    for (Value v : exported) {
      yielded.push_back(lookup(v));
      resultTypes.push_back(prependTime(v.getType(), steps));
    }
    for (unsigned j : keptStates) {
      yielded.push_back(lookup(nextState(j)));
      resultTypes.push_back(stateArg(j).getType());
    }
    YieldOp::create(bodyBuilder, yield.getLoc(), yielded);
    IntegerAttr numSteps =
        ins.empty() ? b.getI64IntegerAttr(steps) : IntegerAttr();
    auto smaller =
        TimeLoopOp::create(b, loc, resultTypes, ins, inits, numSteps);
    smaller.getBody().push_back(newBody);
    for (auto [i, v] : llvm::enumerate(exported))
      stacked[v] = smaller.getResult(i);
    for (auto [i, j] : llvm::enumerate(keptStates))
      finalState(j).replaceAllUsesWith(
          smaller.getResult(exported.size() + i));
    stats.kept += kept.count();
  } else {
    ++stats.loopsRemoved;
  }

  // Ops that read the smaller loop's outputs go after it.
  for (unsigned i = 0, e = nodes.size(); i < e; ++i)
    if (!kept.test(i) && afterKept.test(i))
      buildMultiStep(b, nodes[i]);

  for (unsigned i = 0; i < numOutputs; ++i) {
    Value whole = stacked.lookup(yield.getOperand(i));
    assert(whole && "per-step output has no stacked value");
    loop.getResult(i).replaceAllUsesWith(whole);
  }
  // Initial states now in v_init attributes leave dead constants behind.
  llvm::SetVector<Operation *> initOps;
  for (Value init : loop.getInits())
    if (Operation *def = init.getDefiningOp())
      initOps.insert(def);
  loop.erase();
  for (Operation *def : initOps)
    if (def->use_empty() && isMemoryEffectFree(def))
      def->erase();
}

namespace {
struct SNNTemporalFusionPass
    : snn::impl::SNNTemporalFusionPassBase<SNNTemporalFusionPass> {
  void runOnOperation() override {
    SmallVector<TimeLoopOp> loops;
    getOperation().walk([&](TimeLoopOp loop) { loops.push_back(loop); });
    FusionStats stats{numHoisted, numNeuronsFused, numLoopsRemoved,
                      numOpsKept};
    for (TimeLoopOp loop : loops)
      LoopFuser(loop, stats).run();
  }
};
} // namespace
