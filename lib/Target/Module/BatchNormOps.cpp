//===- BatchNormOps.cpp - batch norm as a generated kernel op -------------===//
//
// docs/artifact-format.md, "Generated op kernels": a batch_norm or
// batch_norm_bwd of the manifest becomes one `kernel` op. Eval launches one
// kernel; training forward and backward launch three in turn (statistics,
// finish, apply) that share a scratch tensor, an output of the op that
// nothing reads after it.
//
//===----------------------------------------------------------------------===//

#include "ManifestBuilder.h"

#include "snn/Conversion/NeuronToGPU/BatchNormKernels.h"

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
    const llvm::json::Value &y = out[0], &mean = out[1], &invstd = out[2];
    launch(specs[0], Array{x, scratch});
    launch(specs[1],
           Array{x, gamma, beta, runMean, runVar, mean, invstd, scratch});
    launch(specs[2], Array{x, scratch, y});
  }
  out.push_back(scratch);
  return Object{{"op", "kernel"},
                {"launches", std::move(launches)},
                {"in", std::move(in)},
                {"out", std::move(out)},
                {"scratch", Array{scratch}},
                {"of", Array{std::move(op)}}};
}
