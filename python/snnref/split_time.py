"""The time split of --snn-split-time, in float64: what the P ranks compute.

Rank p owns the steps [floor(p T / P), floor((p + 1) T / P)). Each neuron
layer of a rank starts from the final state of the same layer on rank p - 1
(rank 0: the initial state) and, in the backward, from the gradient of its
final state that rank p + 1 returns (the last rank: zeros). A loss on the time
mean takes each rank's sum over its steps scaled by 1/T, summed over the
ranks; its gradient w.r.t. the mean, scaled by 1/T, is every local step's
output gradient. Weight gradients are each rank's sum, summed over the ranks.

`run_split` executes a sequential network (linear and neuron layers) this
way, rank after rank; with P = 1 it is the one-process computation, so
comparing P > 1 against P = 1 checks the split's algebra, and a compiled
module's per-rank programs are checked against it.
"""

import numpy as np

from .errors import RefError
from .layers import linear, linear_bwd
from .losses import rate_loss


def time_ranges(steps, parts):
    """[(begin, end)] of each rank."""
    if not 1 <= parts <= steps:
        raise RefError(f"split-time: parts={parts} must be between 1 and the "
                       f"number of time steps, {steps}")
    return [(p * steps // parts, (p + 1) * steps // parts)
            for p in range(parts)]


def run_split(layers, x, labels, parts, loss="loss_ce_rate"):
    """layers: [("linear", w, b or None) | ("neuron", Neuron)], applied in
    order to x [T, B, features]. Returns (outputs, loss, grads): outputs is
    each layer's output over all T steps (the ranks' pieces concatenated),
    grads a list with (gw, gb) per linear layer and the plif gw (or None)
    per neuron layer, summed over the ranks."""
    x = np.asarray(x, dtype=np.float64)
    T = x.shape[0]
    ranges = time_ranges(T, parts)
    # Forward, rank by rank (the order the wavefront would finish them in).
    acts = [[x[b:e]] for b, e in ranges]   # per rank: input of each layer
    saved = [[None] * len(layers) for _ in ranges]
    for li, layer in enumerate(layers):
        state = None
        for p, _ in enumerate(ranges):
            inp = acts[p][-1]
            if layer[0] == "linear":
                out = linear(inp, layer[1], layer[2])
            else:
                out, h, _, final = layer[1].forward_from(inp, state)
                saved[p][li] = (h, state)
                state = final
            acts[p].append(out)
    # The loss of the mean over all ranks.
    partial = [a[-1].sum(axis=0, keepdims=True) / T for a in acts]
    mean = np.sum(partial, axis=0)
    value, gmean, _ = rate_loss(loss, mean, labels)
    grads_out = [np.broadcast_to(gmean / T, a[-1].shape).copy() for a in acts]
    # Backward, last rank first.
    grads = [None] * len(layers)
    for li in range(len(layers) - 1, -1, -1):
        layer = layers[li]
        grad_state = None
        for p in range(len(ranges) - 1, -1, -1):
            gy = grads_out[p]
            if layer[0] == "linear":
                inp = acts[p][li]
                gx, gw, gb = linear_bwd(gy.reshape(-1, gy.shape[-1]),
                                        inp.reshape(-1, inp.shape[-1]),
                                        layer[1],
                                        has_bias=layer[2] is not None)
                gx = gx.reshape(inp.shape)
                local = (gw, gb)
            else:
                h, state = saved[p][li]
                gx, gw, grad_state = layer[1].backward_from(gy, h, grad_state,
                                                            state)
                local = gw
            grads_out[p] = gx
            grads[li] = local if grads[li] is None else _add(grads[li], local)
    outputs = [np.concatenate([a[i + 1] for a in acts])
               for i in range(len(layers))]
    return outputs, value, grads


def _add(a, b):
    if a is None:
        return None
    if isinstance(a, tuple):
        return tuple(_add(u, v) for u, v in zip(a, b))
    return a + b
