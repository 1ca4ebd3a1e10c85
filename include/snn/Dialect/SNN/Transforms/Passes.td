//===- Passes.td - snn dialect transformations -------------*- tablegen -*-===//

#ifndef SNN_DIALECT_SNN_TRANSFORMS_PASSES_TD
#define SNN_DIALECT_SNN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SNNTemporalFusionPass : Pass<"snn-temporal-fusion", "func::FuncOp"> {
  let summary = "Turn snn.time_loop step form into the multi-step form";
  let description = [{
    For each `snn.time_loop`, rebuilds the step as ops over the whole
    `[T, B, ...]` tensors:

    * time-invariant ops of the body (`snn.param`, constants) move in front of
      the loop unchanged;
    * stateless layers (linear, conv2d, pools, batch_norm, flatten, add,
      scale, dropout) become one op over all steps, so one GEMM or
      convolution covers `T*B` samples;
    * a per-step neuron op (`snn.lif_step`, ...) whose membrane is carried by
      the loop for it alone, starts from a constant, and is not read after
      the loop becomes the multi-step op (`snn.lif`, ...) with `v_init`
      (`i_init`) taken from the loop's initial value.

    What cannot be expressed over the whole sequence stays in a smaller
    `snn.time_loop`: a recurrence through a loop-carried value other than a
    neuron's own membrane, a delay, a final state read after the loop, an op
    with no multi-step form. Each such op gets a remark that says why. Layers
    after the remaining loop that depend on it only through its per-step
    outputs are still fused. Batch norm then takes training statistics over
    `T*B` samples (the multi-step semantics of `snn.batch_norm`).
  }];
  let dependentDialects = ["::mlir::snn::SNNDialect"];
  let statistics = [
    Statistic<"numHoisted", "hoisted-ops",
              "Stateless ops rebuilt over the whole time axis">,
    Statistic<"numNeuronsFused", "fused-neurons",
              "Per-step neuron ops turned into multi-step neuron ops">,
    Statistic<"numLoopsRemoved", "removed-loops",
              "Time loops removed entirely">,
    Statistic<"numOpsKept", "kept-ops",
              "Ops left in a time loop">,
  ];
}

def SNNFuseElementwisePass : Pass<"snn-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fold elementwise ops into the neuron op that consumes them";
  let description = [{
    Canonical-form rewrites that leave the elementwise work to the single
    neuron kernel: `snn.scale` by `a` feeding a neuron's input folds into its
    input gain (`c *= a` for lif/if/li and their step forms, `c_syn *= a` for
    cuba_lif), scalar or per-neuron. The gain scales the input only, so the
    rewrite is exact for every reset mode and for the backward pass
    (`gX = c gH`). PLIF has no input gain of its own (`c = sigmoid(w)` or 1)
    and is left alone, as is inference batch norm, whose affine the kernel
    generator fuses (its parameters are tensors, and its mode is chosen by the
    entry point).
  }];
  let dependentDialects = ["::mlir::snn::SNNDialect"];
  let statistics = [
    Statistic<"numScalesFolded", "folded-scales",
              "snn.scale ops folded into a neuron's input gain">,
  ];
}

def SNNFoldScaleChainsPass : Pass<"snn-fold-scale-chains", "func::FuncOp"> {
  let summary = "Merge consecutive snn.scale ops into one";
  let description = [{
    `snn.scale(snn.scale(x, a), b)` becomes `snn.scale(x, a * b)`, and a
    product of 1 disappears. The worked example of
    docs/how-to-write-a-fusion-pass.md.
  }];
  let dependentDialects = ["::mlir::snn::SNNDialect"];
  let statistics = [
    Statistic<"numMerged", "merged-scales", "snn.scale pairs merged">,
  ];
}

def SNNCompile : Pass<"snn-compile", "ModuleOp"> {
  let summary = "Write the compiled module directory (manifest.json + kernels)";
  let description = [{
    Compiles `func.func @forward` (the `infer` program) and, when present,
    `func.func @train_step` (the `train_forward`, `backward` and `update`
    programs) into the directory of docs/artifact-format.md: `manifest.json`,
    `init.safetensors` (imported parameter values and per-neuron constants)
    and, for `target=cuda|all`, the generated neuron kernels as
    `kernels.<chip>.cubin` and `kernels.ptx`. The directory is built as
    `<output>.tmp-<pid>` and renamed over `<output>`; on any error nothing is
    left behind. The IR must be in the multi-step form (run
    `--snn-temporal-fusion` first); the module itself is not changed.

    In `@train_step` the ops before the loss op (`snn.loss_*`) form
    `train_forward`, the loss op and the gradient ops `backward`, the
    optimizer ops (`snn.sgd`, `snn.adam`) `update`.

    ```
    snn-opt model.mlir --snn-compile="output=model.snnmod target=cpu"
    ```
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "The compiled module directory to write (e.g. model.snnmod)">,
    Option<"target", "target", "std::string", /*default=*/"\"all\"",
           "Device code to include: cpu (none), cuda or all (neuron kernels "
           "as cubin and PTX; the module runs on the CPU too)">,
    ListOption<"chips", "chips", "std::string",
               "CUDA architectures of the cubins (default sm_80,sm_90)">,
    Option<"batch", "batch", "int64_t", /*default=*/"0",
           "Batch size for dynamic batch dimensions (0: the IR's shapes)">,
  ];
}

#endif // SNN_DIALECT_SNN_TRANSFORMS_PASSES_TD
