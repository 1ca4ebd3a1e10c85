//===- SNNTrainingOps.td - losses, gradients and optimizers -*- tablegen -*-===//
//
// The ops of a training step, produced by --snn-autodiff from a multi-step
// @forward. They work on whole tensors [T, B, ...] like the forward ops; each
// maps one-to-one onto an op of the compiled module's backward/update
// programs (docs/artifact-format.md).
//
//===----------------------------------------------------------------------===//

#ifndef SNN_TRAINING_OPS_TD
#define SNN_TRAINING_OPS_TD

def SNN_ScalarF32 : 0DTensorOf<[F32]>;
def SNN_LabelTensor : RankedTensorOf<[AnySignlessInteger]>;

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

class SNN_LossOp<string mnemonic, string formula> : SNN_Op<mnemonic, [Pure,
    AllTypesMatch<["output", "grad"]>, AllTypesMatch<["loss", "correct"]>]> {
  let summary = "loss of the network output, its gradient and the number of correct samples";
  let description = [{
    `output : [T, B, C]`, `labels : [B]` class indices. With `m[b, c]` the mean
    of `output` over time, the loss is }] # formula # [{ averaged over the
    batch. `grad` is d loss / d output (spread evenly over the T steps);
    `correct` counts the samples whose `argmax_c m[b, c]` is the label.
  }];
  let arguments = (ins SNN_FloatTensor:$output, SNN_LabelTensor:$labels);
  let results = (outs SNN_ScalarF32:$loss, SNN_FloatTensor:$grad,
                      SNN_ScalarF32:$correct);
  let assemblyFormat = [{
    $output `,` $labels attr-dict `:` type($output) `,` type($labels) `->` type($loss)
  }];
  let hasVerifier = 1;
}

def SNN_LossCERateOp : SNN_LossOp<"loss_ce_rate",
    "the cross-entropy of `softmax(m)` (spike rates as logits)">;
def SNN_LossMSERateOp : SNN_LossOp<"loss_mse_rate",
    "the squared error of `m` against the one-hot label, averaged over classes and">;
def SNN_LossCEMembraneOp : SNN_LossOp<"loss_ce_membrane",
    "the cross-entropy of `softmax(m)` where `output` is the membrane of a readout `snn.li` layer,">;
def SNN_LossCEMembraneMaxOp : SNN_Op<"loss_ce_membrane_max", [Pure,
    AllTypesMatch<["output", "grad"]>, AllTypesMatch<["loss", "correct"]>]> {
  let summary = "cross-entropy of the readout membrane's maximum over time";
  let description = [{
    `output : [T, B, C]` (the membrane of a readout layer), `labels : [B]`
    class indices. With `m[b, c] = max_t output[t, b, c]` (as Spiking
    Heidelberg Digits models read their readout), the loss is the
    cross-entropy of `softmax(m)` averaged over the batch. `grad` is
    d loss / d output: each `d loss / d m[b, c]` goes to the first step that
    reaches the maximum, the other steps get 0. `correct` counts the samples
    whose `argmax_c m[b, c]` is the label.
  }];
  let arguments = (ins SNN_FloatTensor:$output, SNN_LabelTensor:$labels);
  let results = (outs SNN_ScalarF32:$loss, SNN_FloatTensor:$grad,
                      SNN_ScalarF32:$correct);
  let assemblyFormat = [{
    $output `,` $labels attr-dict `:` type($output) `,` type($labels) `->` type($loss)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

def SNN_NeuronBwdOp : SNN_Op<"neuron_bwd", [Pure, AttrSizedResultSegments,
    AllTypesMatch<["grad_output", "forward", "grad_input"]>]> {
  let summary = "backpropagation through time of a multi-step neuron layer";
  let description = [{
    `forward` is the result of the multi-step neuron op (`snn.lif`, `snn.if`,
    `snn.plif`, `snn.li`, `snn.cuba_lif`) and `grad_output` the gradient of
    that result. One reverse-time scan computes the gradient of the layer's
    input with the layer's surrogate (DESIGN §2); it reads the membrane `H`
    that the forward layer saves in training, spikes are recomputed from it.
    For `snn.plif` the second result is the gradient of the decay weight `w`.

    On a time split (`--snn-split-time`), `final(...)` gives the gradient of
    the layer's final state (the scan starts from it instead of 0), and the
    results after `->` are the gradients of its `init` state operands, in the
    forward layer's state order.
  }];
  let arguments = (ins SNN_FloatTensor:$grad_output, SNN_FloatTensor:$forward,
                       Variadic<SNN_FloatTensor>:$grad_final_state);
  let results = (outs SNN_FloatTensor:$grad_input,
                      Optional<SNN_FloatTensor>:$grad_w,
                      Variadic<SNN_FloatTensor>:$grad_init_state);
  let assemblyFormat = [{
    $grad_output `,` $forward
    (`final` `(` $grad_final_state^ `:` type($grad_final_state) `)`)? attr-dict
    `:` type($grad_output) (`,` type($grad_w)^)? (`->` type($grad_init_state)^)?
  }];
  let hasVerifier = 1;
}

def SNN_NeuronStepBwdOp : SNN_Op<"neuron_step_bwd", [Pure,
    AllTypesMatch<["grad_output", "grad_state", "forward", "grad_input",
                   "grad_prev_state"]>]> {
  let summary = "backward of one step of a recurrent neuron layer";
  let description = [{
    `forward` is the first result of a step neuron op (`snn.lif_step`,
    `snn.if_step`, `snn.li_step`) inside an unrolled recurrent loop;
    `grad_output` is the gradient of that result and `grad_state` the gradient
    of the next membrane `v_next` (zeros for `snn.li_step`, whose one result
    is both). With the membrane `H` the forward step saved:
    `gH = grad_output σ'(H - v_th) + grad_state dV/dH` (`li`: their sum),
    `grad_input = c gH`, `grad_prev_state = (1 - k) gH` (DESIGN §2).
  }];
  let arguments = (ins SNN_FloatTensor:$grad_output, SNN_FloatTensor:$grad_state,
                       SNN_FloatTensor:$forward);
  let results = (outs SNN_FloatTensor:$grad_input,
                      SNN_FloatTensor:$grad_prev_state);
  let assemblyFormat = [{
    $grad_output `,` $grad_state `,` $forward attr-dict `:` type($grad_output)
  }];
  let hasVerifier = 1;
}

def SNN_PLIFStepBwdOp : SNN_Op<"plif_step_bwd", [Pure,
    AllTypesMatch<["grad_output", "grad_state", "forward", "state",
                   "grad_input", "grad_prev_state"]>,
    AllTypesMatch<["w", "grad_w"]>]> {
  let summary = "backward of one step of a recurrent parametric LIF layer";
  let description = [{
    As `snn.neuron_step_bwd` for `snn.plif_step` (k = sigmoid(w); c = k with
    `decay_input`, else 1), whose membrane before the step is `state` (the
    step's `v` operand) and whose weight is `w`:
    `gH = grad_output σ'(H - v_th) + grad_state dV/dH`,
    `grad_input = c gH`, `grad_prev_state = (1 - k) gH`, and
    `grad_w = Σ gH dH/dk k (1 - k)` with `dH/dk = (H - V) / k` under
    `decay_input` (`H - V = k (v_leak - V + X)`), else `v_leak - V`; the sum
    runs over the batch, and over the features too when `w` is a scalar.
  }];
  let arguments = (ins SNN_FloatTensor:$grad_output, SNN_FloatTensor:$grad_state,
                       SNN_FloatTensor:$forward, SNN_FloatTensor:$state,
                       SNN_FloatTensor:$w);
  let results = (outs SNN_FloatTensor:$grad_input,
                      SNN_FloatTensor:$grad_prev_state,
                      SNN_FloatTensor:$grad_w);
  let assemblyFormat = [{
    $grad_output `,` $grad_state `,` $forward `,` $state `,` $w attr-dict `:`
    type($grad_output) `,` type($w)
  }];
  let hasVerifier = 1;
}

def SNN_CubaLIFStepBwdOp : SNN_Op<"cuba_lif_step_bwd", [Pure,
    AllTypesMatch<["grad_output", "grad_current", "grad_state", "forward",
                   "grad_input", "grad_prev_current", "grad_prev_state"]>]> {
  let summary = "backward of one step of a recurrent current-based LIF layer";
  let description = [{
    As `snn.neuron_step_bwd` for `snn.cuba_lif_step` (whose results are the
    spikes, the next current `i_next` and the next membrane `v_next`):
    `gH = grad_output σ'(H - v_th) + grad_state dV/dH`,
    `gI = c gH + grad_current`, `grad_input = c_syn gI`,
    `grad_prev_current = (1 - k_syn) gI`, `grad_prev_state = (1 - k) gH`.
  }];
  let arguments = (ins SNN_FloatTensor:$grad_output,
                       SNN_FloatTensor:$grad_current,
                       SNN_FloatTensor:$grad_state, SNN_FloatTensor:$forward);
  let results = (outs SNN_FloatTensor:$grad_input,
                      SNN_FloatTensor:$grad_prev_current,
                      SNN_FloatTensor:$grad_prev_state);
  let assemblyFormat = [{
    $grad_output `,` $grad_current `,` $grad_state `,` $forward attr-dict `:`
    type($grad_output)
  }];
  let hasVerifier = 1;
}

def SNN_TimeSliceOp : SNN_Op<"time_slice", [Pure]> {
  let summary = "step `index` of a time-leading tensor";
  let description = [{
    `[T, ...] -> [...]`: the slice at step `index`. --snn-autodiff unrolls a
    recurrent `snn.time_loop` into one copy of its body per step; the body
    reads its inputs through these.
  }];
  let arguments = (ins SNN_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$index);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def SNN_TimeStackOp : SNN_Op<"time_stack", [Pure, SameTypeOperands]> {
  let summary = "step tensors stacked into a time-leading tensor";
  let description = [{
    `N x [...] -> [N, ...]`: the step outputs of an unrolled recurrent loop.
  }];
  let arguments = (ins Variadic<SNN_FloatTensor>:$steps);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = "$steps attr-dict `:` type($steps) `->` type($output)";
  let hasVerifier = 1;
}

def SNN_LinearBwdOp : SNN_Op<"linear_bwd", [Pure]> {
  let summary = "gradients of snn.linear: input (optional), weight, bias (optional)";
  let description = [{
    `grads` are, in order, `gx` (when `need_gx`), `gw = gyᵀ x` reduced over
    every leading dim (T*B rows in one GEMM) and `gb` (when `has_bias`).

    `event_driven = d` (set by `--snn-sparsify` when `grad_output` is the
    input gradient of a neuron layer whose surrogate has a `grad_band`): the
    compiled module also computes `gx` and `gw` event-driven, summing only
    over the nonzero entries of `grad_output`, and takes that path on the
    device whenever their fraction is at most `d` in (0, 1]; above it the
    dense GEMMs run. Both paths compute the same function.
  }];
  let arguments = (ins SNN_FloatTensor:$grad_output, SNN_FloatTensor:$input,
                       SNN_FloatTensor:$weight, BoolAttr:$has_bias,
                       BoolAttr:$need_gx,
                       OptionalAttr<F64Attr>:$event_driven);
  let results = (outs Variadic<SNN_FloatTensor>:$grads);
  let assemblyFormat = [{
    $grad_output `,` $input `,` $weight attr-dict `:` type($grad_output) `,`
    type($input) `,` type($weight) `->` type($grads)
  }];
  let hasVerifier = 1;
}

def SNN_Conv2DBwdOp : SNN_Op<"conv2d_bwd", [Pure]> {
  let summary = "gradients of snn.conv2d: input (optional), weight, bias (optional)";
  let description = [{
    Same geometry attributes as the forward `snn.conv2d`, `channels_last`
    included (then `grad_output`, `input` and `gx` are NHWC and the weight
    and `gw` are `[O, KH, KW, C]`). `grads` are `gx` (when `need_gx`), `gw`
    (reduced over every leading dim) and `gb` (when `has_bias`).

    `event_driven = d` (set by `--snn-sparsify="target=cpu"` when `input`
    is spikes; `groups` 1): the compiled module also computes `gw`
    event-driven on the CPU, over the nonzero inputs only, whenever the
    input's density is at most the crossover `d` in (0, 1]; `gx` and `gb`
    stay dense.
  }];
  let arguments = (ins SNN_FloatTensor:$grad_output, SNN_FloatTensor:$input,
                       SNN_FloatTensor:$weight, BoolAttr:$has_bias,
                       BoolAttr:$need_gx,
                       DefaultValuedAttr<SNN_Pair, "{1, 1}">:$stride,
                       DefaultValuedAttr<SNN_ConvPadding, "{0, 0}">:$padding,
                       DefaultValuedAttr<SNN_Pair, "{1, 1}">:$dilation,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>, "1">:$groups,
                       UnitAttr:$channels_last,
                       OptionalAttr<F64Attr>:$event_driven);
  let results = (outs Variadic<SNN_FloatTensor>:$grads);
  let assemblyFormat = [{
    $grad_output `,` $input `,` $weight attr-dict `:` type($grad_output) `,`
    type($input) `,` type($weight) `->` type($grads)
  }];
  let hasVerifier = 1;
}

class SNN_Pool2DBwdOp<string mnemonic, string what, dag extraArgs,
                      list<Trait> traits = []>
    : SNN_Op<mnemonic, !listconcat(traits, [Pure])> {
  let summary = "gradient of " # what # " pooling";
  let description = [{
    Same window attributes (and layout, `channels_last`) as the forward
    pooling op; the result has the type of the forward op's input.
  }];
  let arguments = !con((ins SNN_FloatTensor:$grad_output), extraArgs,
                       (ins SNN_Pair:$kernel_size, OptionalAttr<SNN_Pair>:$stride,
                            DefaultValuedAttr<SNN_Pair, "{0, 0}">:$padding,
                            UnitAttr:$channels_last));
  let results = (outs SNN_FloatTensor:$grad_input);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::llvm::SmallVector<int64_t, 2> getEffectiveStride() {
      if (auto s = getStride()) return ::llvm::SmallVector<int64_t, 2>(*s);
      return ::llvm::SmallVector<int64_t, 2>(getKernelSize());
    }
  }];
}
def SNN_AvgPool2DBwdOp : SNN_Pool2DBwdOp<"avg_pool2d_bwd", "average", (ins)> {
  let assemblyFormat = "$grad_output attr-dict `:` type($grad_output) `->` type($grad_input)";
}
def SNN_SumPool2DBwdOp : SNN_Pool2DBwdOp<"sum_pool2d_bwd", "sum", (ins)> {
  let assemblyFormat = "$grad_output attr-dict `:` type($grad_output) `->` type($grad_input)";
}
def SNN_MaxPool2DBwdOp : SNN_Pool2DBwdOp<"max_pool2d_bwd", "max (to the first maximum of each window)",
    (ins SNN_FloatTensor:$input), [AllTypesMatch<["input", "grad_input"]>]> {
  let assemblyFormat = [{
    $grad_output `,` $input attr-dict `:` type($grad_output) `->` type($grad_input)
  }];
}

def SNN_BatchNormBwdOp : SNN_Op<"batch_norm_bwd", [Pure,
    AllTypesMatch<["input", "grad_output", "grad_input", "forward"]>,
    AllTypesMatch<["gamma", "grad_gamma", "grad_beta"]>]> {
  let summary = "gradients of a training-mode snn.batch_norm";
  let description = [{
    `forward` is the result of the `snn.batch_norm`, whose batch statistics
    (over T*B and the spatial positions) are saved in training and read here.
  }];
  let arguments = (ins SNN_FloatTensor:$grad_output, SNN_FloatTensor:$input,
                       SNN_FloatTensor:$gamma, SNN_FloatTensor:$forward);
  let results = (outs SNN_FloatTensor:$grad_input, SNN_FloatTensor:$grad_gamma,
                      SNN_FloatTensor:$grad_beta);
  let assemblyFormat = [{
    $grad_output `,` $input `,` $gamma `,` $forward attr-dict `:` type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def SNN_DropoutBwdOp : SNN_Op<"dropout_bwd", [Pure,
    AllTypesMatch<["grad_output", "forward", "grad_input"]>]> {
  let summary = "gradient of snn.dropout through the mask its forward drew";
  let arguments = (ins SNN_FloatTensor:$grad_output, SNN_FloatTensor:$forward);
  let results = (outs SNN_FloatTensor:$grad_input);
  let assemblyFormat = "$grad_output `,` $forward attr-dict `:` type($grad_output)";
  let hasVerifier = 1;
}

def SNN_AccumulateOp : SNN_Op<"accumulate", [Pure, Commutative,
    SameOperandsAndResultType]> {
  let summary = "sum of two gradients of one value (fan-out in the forward graph)";
  let arguments = (ins SNN_FloatTensor:$lhs, SNN_FloatTensor:$rhs);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($output)";
}

def SNN_ReshapeOp : SNN_Op<"reshape", [Pure]> {
  let summary = "the same elements with another static shape (a view, no copy)";
  let description = [{
    The gradient of `snn.flatten`: brings `[T, B, C*H*W]` back to
    `[T, B, C, H, W]`. Both types are static with the same number of elements.
  }];
  let arguments = (ins SNN_FloatTensor:$input);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

// An optimizer step writes the persistent parameter and state: its results
// may be unused, but it must not be erased as dead code.
def SNN_UpdatesInPlace : MemoryEffects<[MemWrite]>;

def SNN_SGDOp : SNN_Op<"sgd", [SNN_UpdatesInPlace, AllTypesMatch<["param", "grad"]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "SGD update of one parameter (PyTorch semantics)";
  let description = [{
    `param - lr * d` with `d = grad + weight_decay * param`, and with
    `momentum > 0` a buffer `buf = momentum * buf + (1 - dampening) d`
    (`state`, an `snn.param` with `trainable = false`) that replaces `d`
    (`d + momentum * buf` when `nesterov`). `lr` is the base learning rate;
    the launcher's schedule scales it (and `snn-run train --lr` replaces it).
    The results are the updated parameter and state: the compiled module
    updates them in place.
  }];
  let arguments = (ins SNN_FloatTensor:$param, SNN_FloatTensor:$grad,
                       Variadic<SNN_FloatTensor>:$state,
                       F64Attr:$lr,
                       DefaultValuedAttr<F64Attr, "0.0">:$momentum,
                       DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       DefaultValuedAttr<BoolAttr, "false">:$nesterov);
  let results = (outs SNN_FloatTensor:$new_param,
                      Variadic<SNN_FloatTensor>:$new_state);
  let assemblyFormat = [{
    $param `,` $grad (`,` $state^)? attr-dict `:` type($param) (`,` type($state)^)?
  }];
  let hasVerifier = 1;
}

def SNN_AdamOp : SNN_Op<"adam", [SNN_UpdatesInPlace, AllTypesMatch<["param", "grad", "m", "v"]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Adam / AdamW update of one parameter (PyTorch semantics)";
  let description = [{
    State: the first and second moment estimates `m` and `v` (`snn.param`s
    with `trainable = false`); the step counter for the bias correction is
    kept by the runtime. `decoupled` makes it AdamW (the weight decay scales
    the parameter instead of joining the gradient).
  }];
  let arguments = (ins SNN_FloatTensor:$param, SNN_FloatTensor:$grad,
                       SNN_FloatTensor:$m, SNN_FloatTensor:$v,
                       F64Attr:$lr,
                       DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                       DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                       DefaultValuedAttr<F64Attr, "1.0e-8">:$eps,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       DefaultValuedAttr<BoolAttr, "false">:$decoupled);
  let results = (outs SNN_FloatTensor:$new_param, SNN_FloatTensor:$new_m,
                      SNN_FloatTensor:$new_v);
  let assemblyFormat = [{
    $param `,` $grad `,` $m `,` $v attr-dict `:` type($param)
  }];
  let hasVerifier = 1;
}

#endif // SNN_TRAINING_OPS_TD
