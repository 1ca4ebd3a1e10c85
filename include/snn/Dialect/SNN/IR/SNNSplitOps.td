//===- SNNSplitOps.td - time split across ranks ------------*- tablegen -*-===//
//
// The communication of --snn-split-time: rank p of P runs the time steps
// [floor(p T / P), floor((p + 1) T / P)) of every layer. Neuron state moves
// from rank to rank (snn.send / snn.recv), time-reducing losses and weight
// gradients are summed over all ranks (snn.all_reduce_sum). Every rank runs
// the same sequence of these ops, so blocking transfers in program order form
// the wavefront schedule: rank p starts a layer once rank p - 1 has finished
// it. Each op maps onto one op of the compiled module (docs/artifact-format.md).
//
//===----------------------------------------------------------------------===//

#ifndef SNN_SPLIT_OPS_TD
#define SNN_SPLIT_OPS_TD

// Transfers and collectives must keep their program order on every rank and
// are never dead code: they synchronise with other ranks.
def SNN_Communicates : MemoryEffects<[MemRead, MemWrite]>;

def SNN_RecvOp : SNN_Op<"recv", [SNN_Communicates,
    AllTypesMatch<["fallback", "result"]>]> {
  let summary = "a tensor from the neighbouring rank of a time split";
  let description = [{
    The tensor that the `peer` rank (`prev`: the rank of the previous time
    range, `next`: of the following one) sent with the same `tag`; a rank
    without such a neighbour (rank 0 for `prev`, the last rank for `next`)
    gets `fallback`, which is what one process would use: the layer's initial
    state in the forward, zeros for the gradient of the final state in the
    backward. `tag` numbers the state tensors of the neuron layers in program
    order (forward and backward transfers of one state share it), so a
    mismatch between the programs of two ranks is an error, not a mix-up.

    ```mlir
    %v0 = snn.recv from prev tag 0 or %init : tensor<64x512xf32>
    ```
  }];
  let arguments = (ins SNN_Peer:$peer, ConfinedAttr<I64Attr, [IntNonNegative]>:$tag,
                       SNN_FloatTensor:$fallback);
  let results = (outs SNN_FloatTensor:$result);
  let assemblyFormat = [{
    `from` $peer `tag` $tag `or` $fallback attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def SNN_SendOp : SNN_Op<"send", [SNN_Communicates]> {
  let summary = "a tensor to the neighbouring rank of a time split";
  let description = [{
    Hands `value` to the `peer` rank's `snn.recv` with the same `tag`; on a
    rank without that neighbour it does nothing.

    ```mlir
    snn.send %vT to next tag 0 : tensor<64x512xf32>
    ```
  }];
  let arguments = (ins SNN_FloatTensor:$value, SNN_Peer:$peer,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$tag);
  let assemblyFormat = "$value `to` $peer `tag` $tag attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def SNN_AllReduceSumOp : SNN_Op<"all_reduce_sum", [SNN_Communicates,
    SameOperandsAndResultType]> {
  let summary = "the elementwise sum of a tensor over every rank";
  let description = [{
    Every rank gets the same sum (a weight gradient summed over the time
    ranges, or the partial time-sum of a network output).

    ```mlir
    %gw = snn.all_reduce_sum %gw_local : tensor<512x784xf32>
    ```
  }];
  let arguments = (ins SNN_FloatTensor:$input);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

def SNN_TimeSumOp : SNN_Op<"time_sum", [Pure]> {
  let summary = "scaled sum over the leading (time) dimension, kept as length 1";
  let description = [{
    `[L, ...] -> [1, ...]`: `scale * sum_t input[t]`. A rank's share of the
    time mean of a network output (`scale = 1/T` with T the whole sequence).
  }];
  let arguments = (ins SNN_FloatTensor:$input, F64Attr:$scale);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def SNN_TimeBroadcastOp : SNN_Op<"time_broadcast", [Pure]> {
  let summary = "a length-1 time dimension repeated, scaled";
  let description = [{
    `[1, ...] -> [L, ...]`: `output[t] = scale * input[0]` for every local
    step: the gradient of `snn.time_sum` (same `scale`).
  }];
  let arguments = (ins SNN_FloatTensor:$input, F64Attr:$scale);
  let results = (outs SNN_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

#endif // SNN_SPLIT_OPS_TD
