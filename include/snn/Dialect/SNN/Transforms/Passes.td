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

def SNNFusePass : Pass<"snn-fuse", "func::FuncOp"> {
  let summary = "Fuse spiking layers with the batch norm before them, the "
                "average/sum pooling after them, the input counts of "
                "event-driven layers, the surrogate band of their "
                "gradients and a thin linear's input gradient in the "
                "neuron backward";
  let description = [{
    Finds the multi-step spiking neuron layers (`snn.lif`, `snn.if`,
    `snn.cuba_lif`) whose spikes go only into an average or sum pooling whose
    windows tile the input (kernel == stride, no padding, the window divides
    H and W). Such a layer and its pooling run as one kernel: a thread per
    window scans T for the window's neurons and writes the pooled spikes
    only. In training (the `@train_step` of `--snn-autodiff`) the layer's
    `snn.neuron_bwd`, which reads the saved membrane and recomputes the
    spikes from it, is not another user: when the gradient of the spikes is
    exactly the pooling's backward (`snn.avg_pool2d_bwd` /
    `snn.sum_pool2d_bwd` with the same window), the neuron backward reads the
    gradient of the pooled spikes and spreads it over the window itself
    (average: times `1 / (KH KW)`), and neither the spikes nor their gradient
    are written.

    Every pair gets a remark: `fused` (inference) or `fused (train)`, with
    the size of the spike tensor that is no longer written, or the reason it
    is left unfused (max pooling, overlapping or padded windows, windows that
    do not tile the input, other users of the spikes, a neuron without a
    generated kernel, a layer split in time, a non-f32 tensor, a spike
    gradient that is not the pooling's backward alone).

    Channels-last poolings (`channels_last`, `[.., H, W, C]` maps) are
    fused the same way: a thread per window of one channel.

    A fused layer gets `snn.fused_pool = {kind = "avg" | "sum",
    kernel = array<i64: KH, KW>}` (plus `channels_last` for a channels-last
    pooling); the IR keeps both ops (and the pooling's
    backward), and `--snn-compile` writes the pair as one manifest `neuron`
    op with a `pool` attribute whose generated kernel writes the pooled
    spikes only (in training also the saved H or checkpoints), and the
    backward as one `neuron_bwd` with `pool` that reads the pooled gradient:
    the pooling and its backward are not in the manifest.

    Batch norm + neuron, in training and inference: a multi-step neuron
    layer (`snn.lif`, `snn.if`, `snn.li`, `snn.cuba_lif`) whose input is an
    `snn.batch_norm` output that nothing else reads (`snn.batch_norm_bwd`
    names it only to find the saved statistics) gets
    `snn.fused_batch_norm = {spatial_rank, eps}`. Its kernel reads the batch
    norm's input x and normalizes it on load, `x * scale + shift` per
    channel: in training with the scale and shift of the batch norm's
    statistics and finish launches (the apply launch goes away), in
    inference with the affine of the running statistics (the batch norm
    goes away). The normalized tensor is never written; the backward does
    not need it (`snn.batch_norm_bwd` reads x and the saved statistics). Not
    fused, with a remark: other users of the batch norm's output, `snn.plif`,
    a layer split in time, non-f32 or dynamic tensors. A layer can have both
    fusions (batch norm before, pooling after), in training and inference.

    Batch norm backward, in training (`batch-norm-backward`, on by default;
    on an H100 the VGG-11 step 2.93 -> 2.86 ms, 2.78 ms with the recomputed
    H below; see bench/results/2026-12-07-H100-fuse-bn-recompute.md): when
    the gradient that such a layer's
    `snn.neuron_bwd` writes goes to its batch norm's `snn.batch_norm_bwd`
    alone, the attribute gets `backward = true`: the neuron backward also
    reads x and the saved statistics and sums gY and gY xhat per channel
    (per run of a channel plane's threads, in f64, a tree in the block: no
    atomics, the same bits run to run), and `batch_norm_bwd` runs its
    finish and apply launches only. Gradients are within 1e-6 relative of
    the unfused module's (the additions' order differs). A remark per layer
    says fused or why not (other readers of the gradient; a backward
    thread's neurons spanning two channels, e.g. 7x7 maps).

    Recomputed H, in training (`recompute`, on by default): a lif or if
    layer fused with its batch norm gets `recompute = C` (C = min(T, 8)) in
    that attribute: its forward saves the membrane every C steps instead of
    H, and its backward reads the batch norm's input x (which it reads for
    the sums above anyway), normalizes it with the forward's scale and
    shift and recomputes H chunk by chunk (`--snn-compile recompute=C` does
    this for every lif and if layer; a module-wide C wins). Gradients are
    those of the layer that saves H, bit for bit. A remark per layer (a
    cuba_lif layer saves H).

    Input counts of event-driven layers, in training and inference (run
    after `--snn-sparsify`): when the spikes of a multi-step spiking layer
    are the input of one event-driven `snn.linear` (directly or through
    `snn.flatten`), the layer gets `snn.fused_spike_count`: its forward
    kernels count the spikes they write (per thread over its steps, a warp
    sum, one integer atomic per warp) and write the layer's decision, and
    the layer's separate `spike_density` kernel, which read the whole spike
    tensor back, is not emitted. Likewise `snn.fused_grad_count` when the
    input gradient of the layer's `snn.neuron_bwd` is the output gradient of
    one event-driven `snn.linear_bwd` (the sparse backward): its backward
    kernel counts the gradient's nonzeros. A remark on each event layer
    says `spike count fused into <layer>` (`gradient count ...`) or why
    not: a tensor read by two event-driven layers (each keeps its own
    decision), a layer fused with its pooling, split in time, or whose
    backward sums its batch norm's gradient. Counts are integers: the
    decisions are those of the separate kernel, bit for bit.

    Input gradients in a surrogate band, in training (run after
    `--snn-sparsify`): when the input gradient of an event-driven
    `snn.linear_bwd` is read only by the `snn.neuron_bwd` of a spiking
    layer (`snn.lif`, `snn.if`, `snn.plif`) with a finite `grad_band` and a
    scalar `v_th`, the linear backward gets `snn.band_masked_gx`: that
    backward uses the gradient only times σ'(H - v_th), which is 0 where
    `|H - v_th| > grad_band`, so the event-driven gx is computed only where
    the layer's saved H is in the band and left unwritten elsewhere, which
    the neuron backward takes as 0 (the manifest's
    `event_linear_band`; a module that saves H in bf16 or recomputes it
    keeps the full `event_linear`). The gradients equal the unmasked
    module's (a zero may differ in sign). A remark on each event-driven linear backward with
    an input gradient says which layer's band masks it or why not (other
    readers of the gradient, a layer without a finite band, a per-neuron
    `v_th`, a layer split in time or fused with its pooling, rows wider
    than 8192 input plus output features).

    A thin linear's input gradient in the neuron backward, in training
    (run after `--snn-autodiff` with a grad-threshold): when the input
    gradient gx = gy W of a dense `snn.linear_bwd` whose linear has at
    most 32 outputs C (a readout) is read only by the `snn.neuron_bwd` of
    a multi-step spiking layer whose surrogate has a finite `grad_band`,
    as the gradient of its spikes, the layer gets
    `snn.fused_linear_grad = C` and the linear backward
    `snn.gx_in_neuron_bwd`. That backward uses gx only times
    σ'(H - v_th), 0 outside the band: it reads gy [T, B, C] and W [C, F]
    and forms gy[t, b, :] W at the steps where one of a thread's neurons
    is in the band (L1/L2 hits), and the linear backward computes its
    weight (and bias) gradient only: the [T, B, F] gx is never written
    nor read back (72 MiB for the SHD net). Not fused, with a remark: a
    layer without a finite band (every entry would need C weights per
    neuron), an event-driven linear backward, a layer fused with its
    pooling, whose backward sums its batch norm's gradient or split in
    time, more than 32 outputs, features not a multiple of 8, non-f32
    tensors. Gradients are within 1e-6 relative of the unfused module's
    (the sum over C runs in another order than the GEMM's).

    A loss's time mean in the neuron scans, in training: when a
    multi-step layer's output is read by `snn.time_sum` (the time mean of
    a `ce_membrane`, `ce_rate`, `mse_*` loss) and the layer has a
    `snn.neuron_bwd`, the layer gets `snn.fused_time_mean = scale` and the
    sum `snn.in_neuron_forward`: the forward kernel that saves H adds up
    the values it writes (f64, step order, as the `time_sum` kernel) and
    writes the scaled sum. When that backward's output gradient is a
    `snn.time_broadcast` read by nothing else, the layer also gets
    `snn.fused_time_broadcast = scale` and the broadcast
    `snn.in_neuron_backward`: the backward kernel reads the [B, F]
    gradient once and uses scale times it at every step (the f64 product,
    as `time_broadcast`). Neither op is a kernel of its own; the results
    are bit for bit the unfused module's. Not fused, with a remark: a layer
    without a generated kernel, fused with its pooling or split in time,
    non-f32 or dynamic shapes, a broadcast that other ops read.

    `batch-norm=false`, `pool=false`, `spike-count=false`,
    `band-mask=false`, `linear-grad=false` or `time-mean=false` leaves that
    fusion out (to measure each fusion alone).
  }];
  let dependentDialects = ["::mlir::snn::SNNDialect"];
  let options = [
    Option<"fuseBatchNorm", "batch-norm", "bool", /*default=*/"true",
           "Fuse a batch norm into the neuron layer after it">,
    Option<"fusePool", "pool", "bool", /*default=*/"true",
           "Fuse a spiking layer with the average/sum pooling after it">,
    Option<"fuseBatchNormBackward", "batch-norm-backward", "bool",
           /*default=*/"true",
           "In training, compute the batch norm backward's sums in the "
           "neuron backward of a layer fused with its batch norm">,
    Option<"fuseRecompute", "recompute", "bool", /*default=*/"true",
           "In training, a lif or if layer fused with its batch norm saves "
           "no H: its backward recomputes H from the batch norm's input">,
    Option<"fuseSpikeCount", "spike-count", "bool", /*default=*/"true",
           "Count the input of an event-driven layer (spikes, or the "
           "sparse backward's gradient) in the neuron kernel that writes "
           "it">,
    Option<"fuseBandMask", "band-mask", "bool", /*default=*/"true",
           "Compute the event-driven input gradient that a banded layer's "
           "neuron backward reads only in that layer's surrogate band">,
    Option<"fuseLinearGrad", "linear-grad", "bool", /*default=*/"true",
           "Compute a thin linear backward's input gradient in the neuron "
           "backward that alone reads it">,
    Option<"fuseTimeMean", "time-mean", "bool", /*default=*/"true",
           "In training, compute a layer's time mean (snn.time_sum) in its "
           "forward scan and read its gradient (snn.time_broadcast) in its "
           "backward scan">,
  ];
  let statistics = [
    Statistic<"numFused", "fused-neuron-pools",
              "Neuron layers fused with their pooling">,
    Statistic<"numFusedTrain", "fused-train-neuron-pools",
              "Training-step neuron layers fused with their pooling">,
    Statistic<"numUnfused", "unfused-neuron-pools",
              "Neuron layers followed by a pooling that cannot be fused">,
    Statistic<"numFusedBatchNorms", "fused-batch-norms",
              "Neuron layers that apply the batch norm before them">,
    Statistic<"numUnfusedBatchNorms", "unfused-batch-norms",
              "Neuron layers after a batch norm that cannot be fused">,
    Statistic<"numFusedBatchNormBackwards", "fused-batch-norm-backwards",
              "Neuron backwards that compute their batch norm backward's "
              "sums">,
    Statistic<"numRecomputedH", "recomputed-h",
              "Layers fused with their batch norm whose backward recomputes "
              "H">,
    Statistic<"numFusedCounts", "fused-counts",
              "Event layer input counts done by the neuron kernels">,
    Statistic<"numUnfusedCounts", "unfused-counts",
              "Event layers whose input count keeps its own kernel">,
    Statistic<"numBandMasked", "band-masked-gradients",
              "Event-driven input gradients computed in a surrogate band "
              "only">,
    Statistic<"numFusedLinearGrads", "fused-linear-grads",
              "Thin linear input gradients computed in a neuron backward">,
    Statistic<"numFusedTimeMeans", "fused-time-means",
              "Time means computed in a neuron forward">,
    Statistic<"numFusedTimeBroadcasts", "fused-time-broadcasts",
              "Time-mean gradients read in a neuron backward">,
    Statistic<"numUnfusedBatchNormBackwards", "unfused-batch-norm-backwards",
              "Training layers with a fused batch norm whose backward "
              "cannot compute its sums">,
  ];
}

def SNNChannelsLastPass : Pass<"snn-channels-last", "func::FuncOp"> {
  let summary = "Run convolutions, batch norms, neurons and pools on "
                "channels-last (NHWC) activations";
  let description = [{
    cuDNN runs a convolution (forward and both gradients) on `[N, H, W, C]`
    activations and `[O, KH, KW, I]` filters markedly faster than on
    `[N, C, H, W]`. This pass rewrites a function's forward ops to that
    layout, before `--snn-autodiff` (the backward then inherits it):

    * every `snn.conv2d` on `[.., C, H, W]` gets `channels_last`; its input
      comes through a `snn.transpose` at the entry (`[.., C, H, W]` ->
      `[.., H, W, C]`, e.g. of the image) and its weight through
      `snn.transpose %w {permutation = [0, 2, 3, 1]}`: the parameter stays
      `[O, I, KH, KW]`, so checkpoints, NIR and PyTorch weights are
      unchanged;
    * the ops that read a rewritten activation follow it: pools get
      `channels_last`, `snn.batch_norm` becomes `spatial_rank = 0` (channels
      last: statistics over `T*B*H*W`), neuron layers, `snn.add`,
      `snn.scale` and `snn.dropout` are elementwise and change shape only;
    * every other reader (`snn.flatten`, `snn.reshape`, linear layers,
      losses, the function's results) gets a `snn.transpose` back to
      `[.., C, H, W]` in front, so what it sees is unchanged.

    A neuron layer with per-neuron parameters or a state chained by
    `--snn-split-time` is left in `[.., C, H, W]` (with the transposes around
    it). Transpose pairs that cancel are folded. Each function gets a remark:
    how many ops were rewritten and how many transposes it has, or why
    nothing was rewritten (no convolution; a function that already has
    gradients or fused layers: the pass runs before `--snn-autodiff` and
    `--snn-fuse`).
  }];
  let dependentDialects = ["::mlir::snn::SNNDialect"];
  let statistics = [
    Statistic<"numRewritten", "rewritten-ops",
              "Ops rewritten to channels-last activations">,
    Statistic<"numTransposes", "transposes",
              "snn.transpose ops in the rewritten functions">,
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

def SNNSparsify : Pass<"snn-sparsify", "func::FuncOp"> {
  let summary = "Run linear (and, on the CPU, convolution) layers on spike inputs event-driven";
  let description = [{
    Marks every `snn.linear` whose input is spikes (the spike output of a
    spiking neuron layer, possibly seen through `snn.flatten`) with
    `event_driven = <crossover>`. `--snn-compile` then emits both the dense
    GEMM and the event-driven form (per row, only the weight columns of the
    nonzero inputs are summed) plus a kernel that measures the input density
    on the device and chooses between them, without a host synchronisation
    (docs/artifact-format.md, "Event-driven linear layers").

    A linear layer stays dense, with a remark saying why, when its input is
    not spikes (a membrane, a synaptic current, batch-norm output, the data
    input, ...) or has fewer than `min-features` input features.

    Run after `--snn-autodiff="grad-threshold=B"`, it also marks every
    `snn.linear_bwd` whose output gradient is the input gradient of a
    neuron layer with a surrogate band (mostly exact zeros): its `gx` and
    `gw` are then also computed event-driven, over the nonzero entries of
    that gradient only, chosen on the device the same way. Any other
    `snn.linear_bwd` stays dense, with a remark.
    `crossover=0` takes the default of the target (`target=cpu` or `cuda`,
    see the user guide); an explicit value in (0, 1] is used as given.

    With `target=cpu` it also marks every `snn.conv2d` (groups 1) whose
    input is spikes: the compiled module (`--snn-compile="target=cpu"`)
    then also runs it event-driven, per image adding each nonzero input's
    weights into the outputs its window positions reach
    (docs/artifact-format.md, "Event-driven convolutions"); its default
    crossover is 0.25. Run after `--snn-autodiff`, it also marks every
    `snn.conv2d_bwd` whose input is spikes: its weight gradient is then
    computed over the nonzero inputs only (its input gradient stays
    dense). With `target=cuda` convolutions stay dense, with a remark.
  }];
  let dependentDialects = ["::mlir::snn::SNNDialect"];
  let options = [
    Option<"minFeatures", "min-features", "int64_t", /*default=*/"64",
           "Input features below which a layer stays dense">,
    Option<"crossover", "crossover", "double", /*default=*/"0.0",
           "Input density up to which the event-driven path runs (0: the "
           "target's default)">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Whose default crossover to take: cpu or cuda">,
    Option<"inputIsSpikes", "input-is-spikes", "bool", /*default=*/"false",
           "The function arguments are spike data (SHD, N-MNIST, DVS): a "
           "layer reading one is event-driven too">,
  ];
  let statistics = [
    Statistic<"numEventDriven", "event-driven-layers",
              "linear layers marked event-driven">,
    Statistic<"numEventDrivenBackward", "event-driven-backwards",
              "linear backwards marked event-driven">,
    Statistic<"numEventDrivenConvolutions", "event-driven-convolutions",
              "convolutions marked event-driven (target=cpu)">,
    Statistic<"numEventDrivenConvolutionBackwards",
              "event-driven-convolution-backwards",
              "convolution weight gradients marked event-driven (target=cpu)">,
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
      maximum over time); from 32 steps on, a loss on the time mean takes
      the mean first (`snn.time_sum` with scale 1/T, the loss on one step,
      `snn.time_broadcast` of its gradient), which is parallel over B x C
      where the loss kernel alone would recompute each class's mean over T;
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

    `grad-threshold=B` gives every spiking neuron layer of `@train_step` the
    surrogate band `grad_band = B` (`#snn.surrogate`): the backward takes the
    surrogate derivative as 0 wherever `|H - v_th| > B`, so the input-current
    gradients of neurons far from threshold are exactly 0 (the sparse
    backward of Perez-Nieves & Goodman). The surrogate keeps its kind and
    shape; `B = inf` gives the gradients of no band.
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
    Option<"gradThreshold", "grad-threshold", "std::string",
           /*default=*/"\"\"",
           "Sparse backward: the surrogate derivative of every spiking layer "
           "is 0 where |H - v_th| > B (a number > 0, or inf: no band; empty: "
           "the layers' own surrogates)">,
  ];
  let statistics = [
    Statistic<"numNeuronGrads", "neuron-grads", "Neuron layers differentiated">,
    Statistic<"numBandedLayers", "banded-layers", "Spiking layers given the grad-threshold band">,
    Statistic<"numLoopsUnrolled", "unrolled-loops", "Recurrent time loops unrolled for BPTT">,
    Statistic<"numParamsUpdated", "updated-params", "Parameters given an optimizer update">,
  ];
}

def SNNSplitTime : Pass<"snn-split-time", "ModuleOp"> {
  let summary = "Split the time axis across ranks: per-rank @forward / @train_step";
  let description = [{
    Rank `p` of `parts` runs the time steps `[floor(p T / P),
    floor((p + 1) T / P))` of every layer (T need not be a multiple of P).
    For each distinct local length `L` the pass replaces `@forward` and
    `@train_step` by `@forward_t<L>` and `@train_step_t<L>`
    (`snn.time_length = L`, `snn.ranks` = the ranks that run it) and marks
    the module with `snn.split_time = {parts = P, steps = T}`:

    * stateless layers run on the local `[L, B, ...]` tensors unchanged;
    * each multi-step neuron layer starts from `snn.recv from prev` (on
      rank 0: its initial state) and sends its final state with
      `snn.send ... to next` (v; i and v for `snn.cuba_lif`; the tags number
      these state tensors in program order);
    * its `snn.neuron_bwd` starts from the gradient of the final state that
      `snn.recv from next` delivers (zeros on the last rank) and sends the
      gradient of the initial state to `prev`;
    * a loss over the time mean of the output takes the mean over all ranks:
      `snn.time_sum` (scale 1/T) and `snn.all_reduce_sum` before the loss,
      `snn.time_broadcast` of its gradient after it, so every rank computes
      the same loss and gradient;
    * weight gradients (linear, conv2d, plif's `w`) are summed over the ranks
      with `snn.all_reduce_sum` right before their optimizer op, after the
      whole backward, so that no collective stalls the backward wavefront.

    Every rank runs the same sequence of transfers, so blocking transfers in
    program order give the wavefront schedule of the temporal-fusion paper
    (rank p starts layer l once rank p - 1 has finished it).

    Refused with an error on the op: recurrent layers (an `snn.time_loop`
    or its unrolled training form: each step depends on the previous one's
    output through weights, so they run on one device), `ce_membrane_max`
    (the maximum over time), training-mode batch norm (its statistics over
    `T*B` would be per rank) and dropout in `@train_step` (per-rank masks).
    Run it after `--snn-autodiff`, or on a module with only `@forward`.
  }];
  let dependentDialects = ["::mlir::snn::SNNDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::arith::ArithDialect"];
  let options = [
    Option<"parts", "parts", "int64_t", /*default=*/"1",
           "Number of ranks the time axis is split across (1 <= parts <= T)">,
  ];
  let statistics = [
    Statistic<"numNeuronsChained", "chained-neurons",
              "Neuron layers that pass their state between ranks">,
    Statistic<"numAllReduces", "all-reduces",
              "Sums over the ranks (weight gradients, time-mean outputs)">,
    Statistic<"numPrograms", "rank-programs",
              "Functions written, one per entry point and local length">,
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
    Option<"recompute", "recompute", "int64_t", /*default=*/"0",
           "Training recomputes the H of lif and if layers in the backward "
           "from their input and a membrane checkpoint every this many steps "
           "instead of saving H (0: save H; 8 is a good choice)">,
    Option<"spikeBits", "spike-bits", "bool", /*default=*/"false",
           "Training saves the spikes that only weight gradients read (the "
           "input of linear_bwd/conv2d_bwd) as bits, 32 per u32 word, and "
           "unpacks them into a shared scratch right before each reader">,
    Option<"eventTiles", "event-tiles", "bool", /*default=*/"false",
           "Event-driven linear layers of at least 256 outputs run as "
           "compact_rows then event_linear_tiles where a tile of the "
           "transposed weight fits a block's shared memory on every chip "
           "(faster from about 5% input density on an H100, slower at 1%; "
           "false: the per-row event_linear kernels)">,
    Option<"rowBits", "row-bits", "bool", /*default=*/"true",
           "A lif or if layer whose training spikes only event_linear_tiles' "
           "compact_rows read (an always event-driven layer after it, "
           "--snn-fuse counting its spikes) writes them as bits, 32 "
           "neurons a u32 word, instead of floats (the same results)">,
    Option<"gradBits", "grad-bits", "bool", /*default=*/"true",
           "A spiking layer that counts its input gradient for an "
           "event-driven linear backward (--snn-fuse) whose weight gradient "
           "lists the gradient's nonzero rows per column (compact_columns, "
           "without spike-bits) also writes the gradient's occupancy as "
           "bits, which compact_columns reads instead of the floats (the "
           "same results)">,
  ];
}

#endif // SNN_DIALECT_SNN_TRANSFORMS_PASSES_TD
