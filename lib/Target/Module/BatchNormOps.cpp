//===- BatchNormOps.cpp - batch norm as a generated kernel op -------------===//
//
// docs/artifact-format.md, "Generated op kernels": a batch_norm or
// batch_norm_bwd of the manifest becomes one `kernel` op. Eval launches one
// kernel; training forward and backward launch three in turn (statistics,
// finish, apply) that share a scratch tensor, an output of the op that
// nothing reads after it.
//
// A batch norm fused with the neuron layer after it (--snn-fuse,
// snn.fused_batch_norm) writes no y: in training it is the statistics and
// finish launches, and the neuron op reads x and the scratch (the finish
// kernel's scale and shift); in inference it is nothing, and the neuron op
// reads x and the affine's inputs. With `backward` the layer's neuron_bwd
// writes the partial sums of the batch norm backward into a scratch of its
// own layout, and batch_norm_bwd is the finish and apply launches on it.
// A layer that recomputes H (`recompute`, or --snn-compile recompute=C)
// has its neuron_bwd read x and the forward's batch norm inputs, the
// scratch of the scale and shift among them, to normalize x again.
//
//===----------------------------------------------------------------------===//

#include "ManifestBuilder.h"

#include "snn/Conversion/NeuronToGPU/BatchNormKernels.h"
#include "snn/Dialect/SNN/IR/FusedBatchNorm.h"

using namespace mlir;
using namespace mlir::snn;
using llvm::json::Array;
using llvm::json::Object;

Object ManifestBuilder::toBatchNormKernelOp(
    Object op, std::optional<std::pair<int64_t, int64_t>> sums) {
  bool backward = *op.getString("op") == "batch_norm_bwd";
  Array in = *op.getArray("in");
  Array out = *op.getArray("out");
  // x is the backward's second input.
  SmallVector<int64_t> input =
      toInts(*tensor(*in[backward ? 1 : 0].getAsInteger()).getArray("shape"));
  SmallVector<OpKernelSpec, 3> specs = makeBatchNormKernelSpecs(
      input, *op.getInteger("spatial_rank"),
      op.getBoolean("training").value_or(true), backward,
      op.getNumber("eps").value_or(1e-5),
      op.getNumber("momentum").value_or(0.1),
      op.getBoolean("accumulate").value_or(false));
  if (specs.size() == 1) { // eval: x, gamma, beta, running stats, y
    Array args = in;
    args.push_back(out[0]);
    return makeKernelOp(specs[0], std::move(args), std::move(in),
                        std::move(out), Array{std::move(op)});
  }

  Array launches;
  auto launch = [&](const OpKernelSpec &spec, Array args) {
    launches.push_back(makeLaunch(spec, std::move(args)));
  };
  // The neuron backward may have written the backward's partial sums (its
  // layout: sums->second parts per channel): then no statistics launch,
  // and finish and apply read that scratch.
  int64_t scratch;
  if (sums) {
    scratch = sums->first;
    for (OpKernelSpec &spec : specs)
      spec.batchNorm.parts = sums->second;
  } else {
    scratch = addTensor(Object{
        {"shape", Array{getBatchNormScratchElements(specs[0].batchNorm)}},
        {"role", "activation"}});
  }
  if (backward) {
    const llvm::json::Value &gy = in[0], &x = in[1], &gamma = in[2],
                            &mean = in[3], &invstd = in[4];
    const llvm::json::Value &gx = out[0], &ggamma = out[1], &gbeta = out[2];
    if (!sums)
      launch(specs[0], Array{gy, x, mean, invstd, scratch});
    launch(specs[1], Array{gamma, invstd, scratch, ggamma, gbeta});
    launch(specs[2], Array{gy, x, mean, invstd, scratch, gx});
  } else {
    const llvm::json::Value &x = in[0], &gamma = in[1], &beta = in[2],
                            &runMean = in[3], &runVar = in[4];
    // Applied by the neuron op: no y, and no apply launch.
    bool applied = op.getBoolean("applied_by_neuron").value_or(false);
    const llvm::json::Value &mean = out[applied ? 0 : 1],
                            &invstd = out[applied ? 1 : 2];
    launch(specs[0], Array{x, scratch});
    launch(specs[1],
           Array{x, gamma, beta, runMean, runVar, mean, invstd, scratch});
    if (!applied)
      launch(specs[2], Array{x, scratch, out[0]});
  }
  // A scratch of its own is an output; the neuron backward's sums an input
  // that an earlier op wrote.
  (sums ? in : out).push_back(scratch);
  return Object{{"op", "kernel"},
                {"launches", std::move(launches)},
                {"in", std::move(in)},
                {"out", std::move(out)},
                {sums ? "scratch_in" : "scratch", Array{scratch}},
                {"of", Array{std::move(op)}}};
}

/// Whether the gradient that the neuron backward of `layer` writes goes to
/// the snn.batch_norm_bwd of `bn` alone (whose sums it can compute).
static bool isBatchNormBackwardOfLayer(Operation *layer, BatchNormOp bn) {
  for (OpOperand &use : layer->getResult(0).getUses()) {
    auto bwd = dyn_cast<NeuronBwdOp>(use.getOwner());
    if (!bwd || &use != &bwd.getForwardMutable())
      continue;
    Value gy = bwd.getGradInput();
    auto bnBwd = gy.hasOneUse() ? dyn_cast<BatchNormBwdOp>(*gy.user_begin())
                                : BatchNormBwdOp();
    return bnBwd && bnBwd.getGradOutput() == gy &&
           bnBwd.getForward() == bn.getOutput() &&
           bnBwd.getInput() == bn.getInput();
  }
  // Inference: no backward.
  return true;
}

FailureOr<Operation *> ManifestBuilder::getFusedBatchNormOp(Operation *op) {
  if (!op->hasAttr(kFusedBatchNormAttrName))
    return static_cast<Operation *>(nullptr);
  std::optional<FusedBatchNorm> fused = getFusedBatchNorm(op);
  auto bn = cast<NeuronOpInterface>(op).getInput().getDefiningOp<BatchNormOp>();
  // Its output is read by the layer alone (batch_norm_bwd names it to find
  // the saved statistics).
  bool alone = bn && llvm::all_of(bn->getUses(), [&](OpOperand &use) {
    auto bwd = dyn_cast<BatchNormBwdOp>(use.getOwner());
    return use.getOwner() == op ||
           (bwd && &use == &bwd.getForwardMutable());
  });
  if (!fused || !bn || !alone || isa<PLIFOp>(op) ||
      !getInitState(op).empty() ||
      fused->spatialRank != static_cast<int64_t>(bn.getSpatialRank()) ||
      fused->eps != bn.getEps().convertToDouble() ||
      (fused->backward && !isBatchNormBackwardOfLayer(op, bn)))
    return op->emitError()
           << "'" << kFusedBatchNormAttrName
           << "' must be {spatial_rank, eps} of the snn.batch_norm whose "
              "output only this layer reads (backward = true: and whose "
              "snn.batch_norm_bwd alone reads the layer's input gradient); "
              "let --snn-fuse set it";
  return bn.getOperation();
}

Operation *ManifestBuilder::getFusingNeuron(Operation *bn) {
  for (Operation *user : bn->getResult(0).getUsers())
    if (auto neuron = dyn_cast<NeuronOpInterface>(user);
        neuron && user->hasAttr(kFusedBatchNormAttrName) &&
        neuron.getInput() == bn->getResult(0))
      return user;
  return nullptr;
}

LogicalResult ManifestBuilder::addBatchNormBackwardSums(Operation *op,
                                                        NeuronRecord &record,
                                                        Array &in, Array &out,
                                                        Object &json) {
  auto bn = cast<BatchNormOp>(record.batchNormBackward);
  auto kernel = kernels.find(record.op);
  auto saved = savedState.find(bn);
  if (kernel == kernels.end() || kernel->second.batchNormParts <= 0 ||
      saved == savedState.end())
    return op->emitError()
           << "the layer's backward computes its batch norm backward's sums "
              "(snn.fused_batch_norm backward = true) but has no generated "
              "kernel that writes them";
  // A recomputing backward has read x and the statistics already
  // (addRecomputedBatchNormInputs).
  if (!record.recomputedBatchNorm) {
    in.push_back(record.batchNormInput);
    for (int64_t id : saved->second) // saved_mean, saved_invstd
      in.push_back(id);
  }
  BatchNormGeometry g;
  g.channels = cast<RankedTensorType>(bn.getGamma().getType()).getDimSize(0);
  g.parts = kernel->second.batchNormParts;
  int64_t scratch = addTensor(
      Object{{"shape", Array{getBatchNormScratchElements(g)}},
             {"role", "activation"}});
  out.push_back(scratch);
  fusedBatchNormSums[bn] = {scratch, g.parts};
  json["bn"] = Object{{"eps", bn.getEps().convertToDouble()},
                      {"spatial_rank", bn.getSpatialRank()},
                      {"parts", g.parts}};
  return success();
}

LogicalResult ManifestBuilder::addFusedBatchNormInputs(Operation *neuron,
                                                       Operation *bnOp,
                                                       Phase phase, Array &in,
                                                       Object &json) {
  auto bn = cast<BatchNormOp>(bnOp);
  bool training = phase == Phase::TrainForward;
  SmallVector<Value, 4> values{bn.getGamma(), bn.getBeta()};
  if (!training)
    values.append({bn.getRunningMean(), bn.getRunningVar()});
  for (Value value : values) {
    FailureOr<int64_t> id = lookup(neuron, value);
    if (failed(id))
      return failure();
    in.push_back(*id);
  }
  if (training) {
    auto saved = savedState.find(bnOp);
    auto scratch = fusedBatchNormScratch.find(bnOp);
    if (saved == savedState.end() || scratch == fusedBatchNormScratch.end())
      return neuron->emitError()
             << "the snn.batch_norm fused into this layer did not run in "
                "training mode before it";
    for (int64_t id : saved->second) // saved_mean, saved_invstd
      in.push_back(id);
    in.push_back(scratch->second);
  }
  json["bn"] = Object{{"training", training},
                      {"eps", bn.getEps().convertToDouble()},
                      {"spatial_rank", bn.getSpatialRank()}};
  return success();
}

LogicalResult
ManifestBuilder::addRecomputedBatchNormInputs(const NeuronRecord &record,
                                              Array &in, Object &json) {
  if (!record.recomputedBatchNorm)
    return success();
  // The inputs the training forward's neuron op read (its `bn` is not the
  // backward's).
  Object forwardJson;
  if (failed(addFusedBatchNormInputs(record.op, record.recomputedBatchNorm,
                                     Phase::TrainForward, in, forwardJson)))
    return failure();
  auto bn = cast<BatchNormOp>(record.recomputedBatchNorm);
  json["bn"] = Object{{"eps", bn.getEps().convertToDouble()},
                      {"spatial_rank", bn.getSpatialRank()}};
  return success();
}
