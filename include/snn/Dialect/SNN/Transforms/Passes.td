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

def SNNAutodiff : Pass<"snn-autodiff", "ModuleOp"> {
  let summary = "Add @train_step: forward, loss, BPTT with surrogate gradients, optimizer";
  let description = [{
    From the multi-step `@forward(%input) -> [T, B, classes]` (run
    `--snn-temporal-fusion` first on the step form), builds
    `@train_step(%input, %labels : tensor<Bxi32>) -> tensor<f32>`:

    * the forward ops, cloned (batch norm and dropout run in training mode
      there: the compiled module chooses the mode per entry point);
    * the loss on the output (`snn.loss_ce_rate`, `snn.loss_mse_rate`, or
      `snn.loss_ce_membrane` when the output is a membrane: an `snn.li`
      readout, or a step neuron's state that a time loop returns;
      `loss=ce_membrane_max`: `snn.loss_ce_membrane_max`, on the readout's
      maximum over time);
    * reverse-mode gradients in reverse op order: one `snn.neuron_bwd` per
      neuron layer (one reverse-time scan with the layer's surrogate),
      `snn.linear_bwd`/`snn.conv2d_bwd` whose weight gradients are reduced
      over all `T*B` rows in one GEMM/convolution, pooling, batch-norm and
      dropout gradients, `snn.reshape` for flatten, `snn.accumulate` where a
      value has several users; the gradient of a value that depends on no
      trainable parameter (the input) is never computed;
    * one fused optimizer op per trainable parameter (`snn.sgd`,
      `snn.adam`), its state tensors as `snn.param`s named
      `opt:<param>:momentum`, `opt:<param>:m`, `opt:<param>:v`.

    Only the values that backward reads stay alive from the forward pass
    (what `--snn-compile` marks as saved): neuron layers keep their membrane
    `H`, batch norm its statistics, dropout its mask.

    A recurrent layer left in an `snn.time_loop` (its state feeds something
    other than a membrane) is unrolled in `@train_step`: one copy of the body
    per step, reading `snn.time_slice`s of the loop inputs, the step outputs
    gathered by `snn.time_stack`. Its step neurons (`snn.lif_step`,
    `snn.if_step`, `snn.li_step`) get one `snn.neuron_step_bwd` per step, so
    the gradient flows back through the recurrent weights step by step (BPTT).
    `@forward` keeps the loop for inference.
  }];
  let dependentDialects = ["::mlir::snn::SNNDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"forward\"",
           "The function to train">,
    Option<"loss", "loss", "std::string", /*default=*/"\"auto\"",
           "ce_rate | mse_rate | ce_membrane | ce_membrane_max | auto "
           "(ce_membrane when the output is a membrane: an snn.li readout or "
           "a step neuron's state returned by a time loop; else ce_rate); "
           "ce_membrane_max: cross-entropy of the membrane's maximum over "
           "time">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "sgd | adam | adamw">,
    Option<"lr", "lr", "double", /*default=*/"0.1",
           "Base learning rate (snn-run train schedules it; --lr overrides)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "SGD momentum (0: no momentum buffer)">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD with Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "L2 weight decay (SGD, Adam) or decoupled decay (AdamW)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam epsilon">,
  ];
  let statistics = [
    Statistic<"numNeuronGrads", "neuron-grads", "Neuron layers differentiated">,
    Statistic<"numLoopsUnrolled", "unrolled-loops", "Recurrent time loops unrolled for BPTT">,
    Statistic<"numParamsUpdated", "updated-params", "Parameters given an optimizer update">,
  ];
}

def SNNCompile : Pass<"snn-compile", "ModuleOp"> {
  let summary = "Write the compiled module directory (manifest.json + kernels)";
  let description = [{
    Compiles `func.func @forward` (the `infer` program) and, when present,
    `func.func @train_step` (the `train_forward`, `backward` and `update`
    programs) into the directory of docs/artifact-format.md: `manifest.json`,
    `init.safetensors` (imported parameter values and per-neuron constants)
    and the generated neuron kernels: for `target=cuda|all` as
    `kernels.<chip>.cubin` and `kernels.ptx`, for `target=cpu|all` compiled
    by LLVM for this machine's CPU architecture into `kernels.host.so` (the
    runtime loads it with dlopen; linking needs `ld` or `ld.lld`). The
    directory is built as
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
           "Device code to include: cpu (neuron kernels for this CPU), cuda "
           "(neuron kernels as cubin and PTX) or all (both); the module "
           "runs on the CPU whatever the target">,
    ListOption<"chips", "chips", "std::string",
               "CUDA architectures of the cubins (default sm_80,sm_90)">,
    Option<"batch", "batch", "int64_t", /*default=*/"0",
           "Batch size for dynamic batch dimensions (0: the IR's shapes)">,
    Option<"savedH", "saved-h", "std::string", /*default=*/"\"f32\"",
           "Storage of the membrane H that training saves for backward: f32, "
           "or bf16 (half the bytes; backward reads H rounded to bf16)">,
    Option<"hostKernels", "host-kernels", "bool", /*default=*/"true",
           "Compile the neuron kernels for the CPU (target cpu or all; not "
           "with saved-h=bf16); false leaves the CPU's neuron layers to the "
           "runtime's built-in loops">,
    Option<"recompute", "recompute", "int64_t", /*default=*/"0",
           "Training recomputes the H of lif and if layers in the backward "
           "from their input and a membrane checkpoint every this many steps "
           "instead of saving H (0: save H; 8 is a good choice)">,
    Option<"batchNormKernels", "batch-norm-kernels", "bool",
           /*default=*/"false",
           "Batch norm and its gradient as compiler-generated kernels "
           "(kernel ops, GPU and CPU); false leaves them to the runtime's "
           "batch_norm ops">,
  ];
}

#endif // SNN_DIALECT_SNN_TRANSFORMS_PASSES_TD
