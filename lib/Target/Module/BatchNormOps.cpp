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
// reads x and the affine's inputs.
//
//===----------------------------------------------------------------------===//

#include "ManifestBuilder.h"

#include "snn/Conversion/NeuronToGPU/BatchNormKernels.h"
#include "snn/Dialect/SNN/IR/FusedBatchNorm.h"

using namespace mlir;
using namespace mlir::snn;
using llvm::json::Array;
using llvm::json::Object;

Object ManifestBuilder::toBatchNormKernelOp(Object op) {
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

  int64_t scratch = addTensor(Object{
      {"shape", Array{getBatchNormScratchElements(specs[0].batchNorm)}},
      {"role", "activation"}});
  Array launches;
  auto launch = [&](const OpKernelSpec &spec, Array args) {
    launches.push_back(makeLaunch(spec, std::move(args)));
  };
  if (backward) {
    const llvm::json::Value &gy = in[0], &x = in[1], &gamma = in[2],
                            &mean = in[3], &invstd = in[4];
    const llvm::json::Value &gx = out[0], &ggamma = out[1], &gbeta = out[2];
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
  out.push_back(scratch);
  return Object{{"op", "kernel"},
                {"launches", std::move(launches)},
                {"in", std::move(in)},
                {"out", std::move(out)},
                {"scratch", Array{scratch}},
                {"of", Array{std::move(op)}}};
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
      fused->eps != bn.getEps().convertToDouble())
    return op->emitError()
           << "'" << kFusedBatchNormAttrName
           << "' must be {spatial_rank, eps} of the snn.batch_norm whose "
              "output only this layer reads; let --snn-fuse set it";
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
    if (recomputeChunk > 0)
      return neuron->emitError()
             << "recompute-chunk does not support a layer fused with its "
                "batch norm (the backward would recompute H from the "
                "normalized input, which is not written); compile without "
                "recompute-chunk or without --snn-fuse";
  }
  json["bn"] = Object{{"training", training},
                      {"eps", bn.getEps().convertToDouble()},
                      {"spatial_rank", bn.getSpatialRank()}};
  return success();
}
