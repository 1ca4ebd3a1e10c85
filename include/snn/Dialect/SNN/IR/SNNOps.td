//===- SNNOps.td - snn dialect operations ------------------*- tablegen -*-===//
//
// Neuron layers (multi-step and per-step), stateless layers applied to the
// trailing (sample) dimensions of any number of leading dimensions, parameters
// and the time loop. Semantics: docs/ and DESIGN §2.
//
//===----------------------------------------------------------------------===//

#ifndef SNN_OPS_TD
#define SNN_OPS_TD

include "snn/Dialect/SNN/IR/SNNDialect.td"
include "snn/Dialect/SNN/IR/SNNAttrs.td"
include "snn/Dialect/SNN/IR/SNNInterfaces.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Constraints
//===----------------------------------------------------------------------===//

def SNN_FloatTensor : RankedTensorOf<[AnyFloat]>;

// A neuron parameter: one f64 for every neuron, or a dense float tensor with one
// value per neuron (the shape of the feature dimensions).
def SNN_NeuronParamAttr : Attr<
    Or<[CPred<"::llvm::isa<::mlir::FloatAttr>($_self) && "
              "::llvm::cast<::mlir::FloatAttr>($_self).getType().isF64()">,
        CPred<"::llvm::isa<::mlir::DenseFPElementsAttr>($_self)">]>,
    "scalar f64 or per-neuron dense float tensor"> {
  let storageType = "::mlir::Attribute";
  let returnType = "::mlir::Attribute";
  let convertFromStorage = "$_self";
  let constBuilderCall = "$_builder.getF64FloatAttr($0)";
}
class SNN_ParamDefault<string value> : DefaultValuedAttr<SNN_NeuronParamAttr, value>;

def SNN_Pair : ConfinedAttr<DenseI64ArrayAttr, [DenseArrayCount<2>]>;
// Convolution padding: [top, left] on both sides, or [top, left, bottom,
// right] (asymmetric, e.g. "same" padding of an even kernel).
def SNN_ConvPadding : ConfinedAttr<DenseI64ArrayAttr,
    [AttrConstraint<CPred<"::llvm::cast<::mlir::DenseI64ArrayAttr>($_self).size() == 2 || ::llvm::cast<::mlir::DenseI64ArrayAttr>($_self).size() == 4">,
                    "with 2 or 4 elements">]>;

// Leak and input scaling: H = V + k (v_leak - V) + c X.
defvar LeakArgs = (ins
  SNN_ParamDefault<"0.5">:$k,
  SNN_ParamDefault<"0.5">:$c,
  SNN_ParamDefault<"0.0">:$v_leak);

// Firing and reset; shared by every spiking neuron.
defvar FireArgs = (ins
  SNN_ParamDefault<"1.0">:$v_th,
  SNN_ParamDefault<"0.0">:$v_reset,
  DefaultValuedAttr<SNN_ResetModeAttr, "::mlir::snn::ResetMode::Hard">:$reset,
  OptionalAttr<SNN_NeuronParamAttr>:$v_init,
  UnitAttr:$strict,
  OptionalAttr<SNN_SurrogateAttr>:$surrogate,
  UnitAttr:$detach_reset);

defvar SynapseArgs = (ins
  SNN_ParamDefault<"0.5">:$k_syn,
  SNN_ParamDefault<"1.0">:$c_syn,
  OptionalAttr<SNN_NeuronParamAttr>:$i_init);

class SNN_NeuronOp<string mnemonic, bit step, int numStates, list<Trait> traits = []>
    : SNN_Op<mnemonic, !listconcat(traits, [Pure,
        SNN_NeuronOpInterface])> {
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    bool isStepForm() { return }] # !if(step, "true", "false") # [{; }
    unsigned getNumStates() { return }] # numStates # [{; }
  }];
}

defvar FireDescription = [{
  Firing: `S[t] = H[t] >= v_th` (`H[t] > v_th` with `strict`, as NIR). Reset:
  `hard` sets `V = H (1 - S) + v_reset S`; `soft` subtracts, `V = H - v_th S`.
  The initial membrane is `v_init` (default: `v_reset` for a hard reset, 0 for a
  soft reset). `surrogate` (default `#snn.surrogate<sigmoid, alpha = 4.0>`) is the
  derivative of the spike in backward; `detach_reset` cuts the gradient through
  the reset. Every parameter is a scalar (`f64`) or a dense tensor with one value
  per neuron (the feature shape).
}];

// A time split (--snn-split-time) starts a layer from the state its previous
// time range ended with and hands its own final state on: optional state
// operands [B, features...] (v; i then v for cuba_lif) and results.
defvar SplitStateIn = (ins Variadic<SNN_FloatTensor>:$init_state);
defvar SplitStateOut = (outs Variadic<SNN_FloatTensor>:$final_state);
defvar SplitStateFormat = [{
  $input (`init` `(` $init_state^ `:` type($init_state) `)`)? attr-dict `:` type($input)
  (`->` type($final_state)^)?
}];
defvar SplitStateDescription = [{

  With `init(...)` the layer starts from these state tensors
  (`[B, features...]`: the membrane `v`; for `snn.cuba_lif` the current `i`
  then `v`) instead of `v_init`/`i_init`, which must then be absent; with
  `-> types` it also returns its state after the last step, in the same
  order. `--snn-split-time` uses both to chain the time ranges of the ranks.
}];

//===----------------------------------------------------------------------===//
// Multi-step neuron ops: [T, B, features...] -> [T, B, features...]
//===----------------------------------------------------------------------===//

def SNN_LIFOp : SNN_NeuronOp<"lif", 0, 1, [AllTypesMatch<["input", "spikes"]>]> {
  let summary = "leaky integrate-and-fire layer, scanned over time";
  let description = !strconcat([{
    Charge: `H[t] = V[t-1] + k (v_leak - V[t-1]) + c X[t]` for each neuron of
    `X : [T, B, features...]`; the result is the spike train `S : [T, B, ...]`.
    SpikingJelly `LIFNode(tau)`: `k = c = 1/tau`; snnTorch `Leaky(beta)`:
    `k = 1 - beta, c = 1, reset = soft`; NIR `LIF`: `k = dt/tau, c = r dt/tau`.
  }], FireDescription, SplitStateDescription, [{

    ```mlir
    %s = snn.lif %x {k = 5.000000e-01, c = 5.000000e-01} : tensor<8x64x512xf32>
    ```
  }]);
  let arguments = !con((ins SNN_FloatTensor:$input), LeakArgs, FireArgs, SplitStateIn);
  let results = !con((outs SNN_FloatTensor:$spikes), SplitStateOut);
  let assemblyFormat = SplitStateFormat;
}

def SNN_IFOp : SNN_NeuronOp<"if", 0, 1, [AllTypesMatch<["input", "spikes"]>]> {
  let summary = "integrate-and-fire layer (no leak), scanned over time";
  let description = !strconcat([{
    `H[t] = V[t-1] + c X[t]`.
  }], FireDescription, SplitStateDescription);
  let arguments = !con((ins SNN_FloatTensor:$input,
                            SNN_ParamDefault<"1.0">:$c), FireArgs, SplitStateIn);
  let results = !con((outs SNN_FloatTensor:$spikes), SplitStateOut);
  let assemblyFormat = SplitStateFormat;
}

def SNN_PLIFOp : SNN_NeuronOp<"plif", 0, 1, [AllTypesMatch<["input", "spikes"]>]> {
  let summary = "parametric LIF: the leak k = sigmoid(w) is learned";
  let description = !strconcat([{
    As `snn.lif` with `k = sigmoid(w)`, `w` a trainable parameter of shape `[1]`
    (one leak for the layer, SpikingJelly `ParametricLIFNode`) or the feature
    shape (one per neuron). With `decay_input` (default) `c = k`, else `c = 1`.
  }], FireDescription, SplitStateDescription);
  let arguments = !con((ins SNN_FloatTensor:$input, SNN_FloatTensor:$w,
                            DefaultValuedAttr<BoolAttr, "true">:$decay_input,
                            SNN_ParamDefault<"0.0">:$v_leak), FireArgs, SplitStateIn);
  let results = !con((outs SNN_FloatTensor:$spikes), SplitStateOut);
  let assemblyFormat = [{
    $input `,` $w (`init` `(` $init_state^ `:` type($init_state) `)`)? attr-dict
    `:` type($input) `,` type($w) (`->` type($final_state)^)?
  }];
}

def SNN_LIOp : SNN_NeuronOp<"li", 0, 1, [AllTypesMatch<["input", "membrane"]>]> {
  let summary = "leaky integrator (readout): the membrane, no spikes";
  let description = !strconcat([{
    `V[t] = V[t-1] + k (v_leak - V[t-1]) + c X[t]`, `V[-1] = v_init` (default 0);
    the result is the membrane `V : [T, B, features...]`.
  }], SplitStateDescription);
  let arguments = !con((ins SNN_FloatTensor:$input), LeakArgs,
                       (ins OptionalAttr<SNN_NeuronParamAttr>:$v_init), SplitStateIn);
  let results = !con((outs SNN_FloatTensor:$membrane), SplitStateOut);
  let assemblyFormat = SplitStateFormat;
}

def SNN_CubaLIFOp : SNN_NeuronOp<"cuba_lif", 0, 2, [AllTypesMatch<["input", "spikes"]>]> {
  let summary = "current-based LIF: a synaptic current feeds a LIF neuron";
  let description = !strconcat([{
    `I[t] = I[t-1] - k_syn I[t-1] + c_syn X[t]` (`I[-1] = i_init`, default 0), then
    the LIF charge with `I[t]` as input: `H[t] = V[t-1] + k (v_leak - V[t-1]) + c I[t]`.
    NIR `CubaLIF`: `k_syn = dt/tau_syn`, `c_syn = w_in dt/tau_syn`... see the NIR import.
  }], FireDescription, SplitStateDescription);
  let arguments = !con((ins SNN_FloatTensor:$input), SynapseArgs, LeakArgs, FireArgs, SplitStateIn);
  let results = !con((outs SNN_FloatTensor:$spikes), SplitStateOut);
  let assemblyFormat = SplitStateFormat;
}

//===----------------------------------------------------------------------===//
// Per-step neuron ops (inside snn.time_loop): [B, features...]
//===----------------------------------------------------------------------===//

def SNN_LIFStepOp : SNN_NeuronOp<"lif_step", 1, 1, [AllTypesMatch<["input", "v", "spikes", "v_next"]>]> {
  let summary = "one time step of a LIF layer";
  let description = [{
    One step of `snn.lif`: takes the input of this step and the membrane `v`
    after the previous step; returns the spikes and the membrane after reset.
  }];
  let arguments = !con((ins SNN_FloatTensor:$input, SNN_FloatTensor:$v), LeakArgs, FireArgs);
  let results = (outs SNN_FloatTensor:$spikes, SNN_FloatTensor:$v_next);
  let assemblyFormat = "$input `,` $v attr-dict `:` type($input)";
}

def SNN_IFStepOp : SNN_NeuronOp<"if_step", 1, 1, [AllTypesMatch<["input", "v", "spikes", "v_next"]>]> {
  let summary = "one time step of an IF layer";
  let arguments = !con((ins SNN_FloatTensor:$input, SNN_FloatTensor:$v,
                            SNN_ParamDefault<"1.0">:$c), FireArgs);
  let results = (outs SNN_FloatTensor:$spikes, SNN_FloatTensor:$v_next);
  let assemblyFormat = "$input `,` $v attr-dict `:` type($input)";
}

def SNN_PLIFStepOp : SNN_NeuronOp<"plif_step", 1, 1, [AllTypesMatch<["input", "v", "spikes", "v_next"]>]> {
  let summary = "one time step of a parametric LIF layer";
  let arguments = !con((ins SNN_FloatTensor:$input, SNN_FloatTensor:$v, SNN_FloatTensor:$w,
                            DefaultValuedAttr<BoolAttr, "true">:$decay_input,
                            SNN_ParamDefault<"0.0">:$v_leak), FireArgs);
  let results = (outs SNN_FloatTensor:$spikes, SNN_FloatTensor:$v_next);
  let assemblyFormat = "$input `,` $v `,` $w attr-dict `:` type($input) `,` type($w)";
}

def SNN_LIStepOp : SNN_NeuronOp<"li_step", 1, 1, [AllTypesMatch<["input", "v", "v_next"]>]> {
  let summary = "one time step of a leaky integrator";
  let arguments = !con((ins SNN_FloatTensor:$input, SNN_FloatTensor:$v), LeakArgs,
                       (ins OptionalAttr<SNN_NeuronParamAttr>:$v_init));
  let results = (outs SNN_FloatTensor:$v_next);
  let assemblyFormat = "$input `,` $v attr-dict `:` type($input)";
}

def SNN_CubaLIFStepOp : SNN_NeuronOp<"cuba_lif_step", 1, 2,
    [AllTypesMatch<["input", "i", "v", "spikes", "i_next", "v_next"]>]> {
  let summary = "one time step of a current-based LIF layer";
  let arguments = !con((ins SNN_FloatTensor:$input, SNN_FloatTensor:$i, SNN_FloatTensor:$v),
                       SynapseArgs, LeakArgs, FireArgs);
  let results = (outs SNN_FloatTensor:$spikes, SNN_FloatTensor:$i_next, SNN_FloatTensor:$v_next);
  let assemblyFormat = "$input `,` $i `,` $v attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Stateless ops: applied to the trailing sample dims of any leading dims
//===----------------------------------------------------------------------===//

def SNN_LinearOp : SNN_Op<"linear", [Pure]> {
  let summary = "fully connected layer: y = x W^T + b";
  let description = [{
    `input : [..., in]`, `weight : [out, in]`, optional `bias : [out]`, result
    `[..., out]`. Every leading dimension (time and batch) is a row of one GEMM.

    `event_driven = d` (set by `--snn-sparsify` on a layer whose input is
    spikes): the compiled module also runs the layer event-driven, per row
    summing only the weight columns of the nonzero inputs, and picks that
    path on the device whenever the input's density (fraction of nonzeros)
    is at most the crossover `d` in (0, 1]; above it the dense GEMM runs.
    Both paths compute the same function.
  }];
  let arguments = (ins SNN_FloatTensor:$input, SNN_FloatTensor:$weight,
                       Optional<SNN_FloatTensor>:$bias,
                       OptionalAttr<F64Attr>:$event_driven);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)? `->` type($output)
  }];
  let hasVerifier = 1;
}

def SNN_Conv2DOp : SNN_Op<"conv2d", [Pure]> {
  let summary = "2-d convolution (cross-correlation, as PyTorch)";
  let description = [{
    `input : [..., C, H, W]`, `weight : [O, C/groups, KH, KW]`, optional
    `bias : [O]`, result `[..., O, OH, OW]` with
    `OH = (H + pad_top + pad_bottom - dil (KH - 1) - 1) / stride + 1`.
    `padding` is `[pad_top, pad_left]` (the same on both sides) or
    `[pad_top, pad_left, pad_bottom, pad_right]`.

    With `channels_last` the activations are NHWC: `input : [..., H, W, C]`,
    `weight : [O, KH, KW, C]` (PyTorch's channels_last order of OIHW, cuDNN's
    KRSC), result `[..., OH, OW, O]`; `groups` must then be 1.

    `event_driven = d` (set by `--snn-sparsify="target=cpu"` on a
    convolution whose input is spikes; `groups` 1): the compiled module also
    runs the layer event-driven on the CPU, per image adding, for each
    nonzero input, its weights times its value into the outputs its window
    positions reach, and picks that path whenever the input's density is at
    most the crossover `d` in (0, 1]; above it the dense convolution runs.
    Both paths compute the same function.
  }];
  let arguments = (ins SNN_FloatTensor:$input, SNN_FloatTensor:$weight,
                       Optional<SNN_FloatTensor>:$bias,
                       DefaultValuedAttr<SNN_Pair, "{1, 1}">:$stride,
                       DefaultValuedAttr<SNN_ConvPadding, "{0, 0}">:$padding,
                       DefaultValuedAttr<SNN_Pair, "{1, 1}">:$dilation,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntPositive]>, "1">:$groups,
                       UnitAttr:$channels_last,
                       OptionalAttr<F64Attr>:$event_driven);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)? `->` type($output)
  }];
  let hasVerifier = 1;
}

class SNN_Pool2DOp<string mnemonic, string what> : SNN_Op<mnemonic, [Pure]> {
  let summary = what # " pooling over the two spatial dims";
  let description = [{
    `input : [..., C, H, W]` -> `[..., C, OH, OW]`, `OH = (H + 2 pad - K) / stride + 1`;
    with `channels_last`, `[..., H, W, C]` -> `[..., OH, OW, C]`.
    `stride` defaults to `kernel_size`; `padding` is at most half the kernel.
  }];
  let arguments = (ins SNN_FloatTensor:$input, SNN_Pair:$kernel_size,
                       OptionalAttr<SNN_Pair>:$stride,
                       DefaultValuedAttr<SNN_Pair, "{0, 0}">:$padding,
                       UnitAttr:$channels_last);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::llvm::SmallVector<int64_t, 2> getEffectiveStride() {
      if (auto s = getStride()) return ::llvm::SmallVector<int64_t, 2>(*s);
      return ::llvm::SmallVector<int64_t, 2>(getKernelSize());
    }
  }];
}
def SNN_AvgPool2DOp : SNN_Pool2DOp<"avg_pool2d", "average">;
def SNN_SumPool2DOp : SNN_Pool2DOp<"sum_pool2d", "sum">;
def SNN_MaxPool2DOp : SNN_Pool2DOp<"max_pool2d", "max">;

def SNN_BatchNormOp : SNN_Op<"batch_norm", [Pure,
    AllTypesMatch<["gamma", "beta", "running_mean", "running_var"]>,
    AllTypesMatch<["input", "output"]>]> {
  let summary = "batch normalization over all leading dims (T*B in the multi-step form)";
  let description = [{
    `input : [..., C, spatial...]` with `spatial_rank` spatial dims (2 after a
    convolution, 0 after a linear layer). In training, statistics are taken over
    every leading and spatial position (over `T*B*H*W`, as SpikingJelly's
    multi-step batch norm); in inference `running_mean`/`running_var` are used,
    which makes it a per-channel affine that the compiler fuses into the
    following neuron kernel.
  }];
  let arguments = (ins SNN_FloatTensor:$input, SNN_FloatTensor:$gamma, SNN_FloatTensor:$beta,
                       SNN_FloatTensor:$running_mean, SNN_FloatTensor:$running_var,
                       DefaultValuedAttr<F64Attr, "1e-5">:$eps,
                       DefaultValuedAttr<F64Attr, "0.1">:$momentum,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "2">:$spatial_rank);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta `,` $running_mean `,` $running_var attr-dict `:`
    type($input) `,` type($gamma)
  }];
  let hasVerifier = 1;
}

def SNN_FlattenOp : SNN_Op<"flatten", [Pure]> {
  let summary = "merge the trailing dims into one";
  let description = [{
    The result keeps the leading dims of the input and merges all the others:
    `tensor<4x64x8x7x7xf32> -> tensor<4x64x392xf32>`.
  }];
  let arguments = (ins SNN_FloatTensor:$input);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def SNN_TransposeOp : SNN_Op<"transpose", [Pure]> {
  let summary = "permute the dims of a tensor";
  let description = [{
    Result dim `i` is input dim `permutation[i]`; the elements are copied
    (`--snn-channels-last` moves activations between `[.., C, H, W]` and
    `[.., H, W, C]` with it, and a convolution's weight from `[O, I, KH, KW]`
    to `[O, KH, KW, I]`).

    ```mlir
    %y = snn.transpose %x {permutation = array<i64: 0, 1, 3, 4, 2>}
        : tensor<4x8x3x32x32xf32> -> tensor<4x8x32x32x3xf32>
    ```
  }];
  let arguments = (ins SNN_FloatTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizeMethod = 1;
}

def SNN_AddOp : SNN_Op<"add", [Pure, Commutative, SameOperandsAndResultType]> {
  let summary = "elementwise sum (residual connections)";
  let arguments = (ins SNN_FloatTensor:$lhs, SNN_FloatTensor:$rhs);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($output)";
}

def SNN_ScaleOp : SNN_Op<"scale", [Pure, SameOperandsAndResultType]> {
  let summary = "multiply by a constant";
  let arguments = (ins SNN_FloatTensor:$input, F64Attr:$scale);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasFolder = 1;
}

def SNN_DropoutOp : SNN_Op<"dropout", [SameOperandsAndResultType]> {
  let summary = "dropout (training only; identity in inference)";
  let description = [{
    Zeroes each element with probability `p` and scales the others by
    `1/(1-p)`. With `shared_across_time` one mask covers every time step of a
    neuron (SpikingJelly's multi-step dropout), so a neuron is either dropped for
    the whole sequence or not at all.
  }];
  let arguments = (ins SNN_FloatTensor:$input,
                       F64Attr:$p,
                       UnitAttr:$shared_across_time);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def SNN_ParamOp : SNN_Op<"param", [Pure]> {
  let summary = "a named model parameter (weight, bias, statistic)";
  let description = [{
    A tensor of the model that checkpoints store under `name` (a dotted path such
    as `fc1.weight`, the same key as in PyTorch `state_dict`s and NIR files).
    Its initial value is `value` when present (imported weights), else drawn
    from `init` (`init_scale` is the constant / the uniform bound / the normal
    std). `trainable = false` marks buffers such as batch-norm running statistics.

    ```mlir
    %w = snn.param "fc1.weight" {init = #snn.init<kaiming_uniform>} : tensor<512x784xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name,
                       DefaultValuedAttr<SNN_InitKindAttr, "::mlir::snn::InitKind::Zeros">:$init,
                       OptionalAttr<F64Attr>:$init_scale,
                       OptionalAttr<ElementsAttr>:$value,
                       DefaultValuedAttr<BoolAttr, "true">:$trainable);
  let results = (outs SNN_FloatTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// The time loop (step form)
//===----------------------------------------------------------------------===//

def SNN_TimeLoopOp : SNN_Op<"time_loop", [AttrSizedOperandSegments,
    RecursiveMemoryEffects, SingleBlock]> {
  let summary = "a loop over time steps whose body is one step";
  let description = [{
    `inputs` are time-leading tensors `[T, ...]`; `inits` are the initial values
    of the loop-carried state (membranes, recurrent outputs). The body's block
    arguments are, in order, the step `t` slice of each input (`[...]`) and the
    current state. `snn.yield` returns the step's outputs followed by the next
    state. The results are the outputs stacked over time (`[T, ...]`), followed by
    the final state. `num_steps` is required only when there are no inputs.

    ```mlir
    %out, %v = snn.time_loop ins(%x : tensor<8x64x784xf32>)
        iter_args(%v0 : tensor<64x512xf32>) -> tensor<8x64x512xf32>, tensor<64x512xf32> {
    ^bb0(%xt: tensor<64x784xf32>, %v: tensor<64x512xf32>):
      %h = snn.linear %xt, %w : tensor<64x784xf32>, tensor<512x784xf32> -> tensor<64x512xf32>
      %s, %vn = snn.lif_step %h, %v : tensor<64x512xf32>
      snn.yield %s, %vn : tensor<64x512xf32>, tensor<64x512xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<SNN_FloatTensor>:$inputs,
                       Variadic<SNN_FloatTensor>:$inits,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$num_steps);
  let results = (outs Variadic<SNN_FloatTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    (`iter_args` `(` $inits^ `:` type($inits) `)`)?
    attr-dict `->` type($results) $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of time steps (the leading dim of the inputs, or num_steps).
    int64_t getNumTimeSteps();
    /// Number of per-step outputs (results stacked over time).
    unsigned getNumStepOutputs() { return getNumResults() - getInits().size(); }
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    YieldOp getYield();
  }];
}

def SNN_YieldOp : SNN_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"TimeLoopOp">]> {
  let summary = "end of a time step: the step's outputs, then the next state";
  let arguments = (ins Variadic<SNN_FloatTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

include "snn/Dialect/SNN/IR/SNNTrainingOps.td"
include "snn/Dialect/SNN/IR/SNNSplitOps.td"

#endif // SNN_OPS_TD
