"""The time split's algebra (snnref.split_time) against one process: spikes
identical, loss and gradients equal, for every neuron model, P = 1..4 and
T not divisible by P."""

import numpy as np
import pytest

from snnref.errors import RefError
from snnref.layers import linear, linear_bwd
from snnref.losses import rate_loss
from snnref.neuron import Neuron
from snnref.split_time import run_split, time_ranges


def test_time_ranges_cover_the_sequence_in_order():
    assert time_ranges(10, 4) == [(0, 2), (2, 5), (5, 7), (7, 10)]
    assert time_ranges(3, 3) == [(0, 1), (1, 2), (2, 3)]
    with pytest.raises(RefError, match="between 1 and the number of time steps, 3"):
        time_ranges(3, 4)


def _network(rng, model, F_in=6, F_hidden=5, C=3):
    def neuron(features):
        kw = dict(k=0.4, c=0.7, v_th=0.6, v_reset=0.1)
        if model == "plif":
            return Neuron("plif", features, v_th=0.6,
                          plif_w=rng.normal(size=features))
        if model == "cuba_lif":
            kw.update(k_syn=0.3, c_syn=0.9, i_init=0.05)
        if model == "li":
            return Neuron("lif", features, **kw)
        return Neuron(model, features, **kw)
    out = Neuron("li", C, k=0.3, c=1.0, v_init=0.2) if model == "li" \
        else neuron(C)
    return [("linear", rng.normal(size=(F_hidden, F_in)), rng.normal(size=F_hidden)),
            ("neuron", neuron(F_hidden)),
            ("linear", rng.normal(size=(C, F_hidden)), None),
            ("neuron", out)]


def _one_process(layers, x, labels, loss):
    """Plain forward/backward over all T steps, without the split code."""
    acts, hs = [x], []
    for layer in layers:
        if layer[0] == "linear":
            acts.append(linear(acts[-1], layer[1], layer[2]))
            hs.append(None)
        else:
            s, h, _ = layer[1].forward(acts[-1])
            acts.append(s)
            hs.append(h)
    value, gy, _ = rate_loss(loss, acts[-1], labels)
    grads = [None] * len(layers)
    for i in range(len(layers) - 1, -1, -1):
        layer = layers[i]
        if layer[0] == "linear":
            inp = acts[i]
            gx, gw, gb = linear_bwd(gy.reshape(-1, gy.shape[-1]),
                                    inp.reshape(-1, inp.shape[-1]), layer[1],
                                    has_bias=layer[2] is not None)
            gy, grads[i] = gx.reshape(inp.shape), (gw, gb)
        else:
            gy, grads[i] = layer[1].backward(gy, hs[i])
    return acts[1:], value, grads


@pytest.mark.parametrize("model", ["lif", "if", "plif", "li", "cuba_lif"])
@pytest.mark.parametrize("parts", [1, 2, 3, 4])
def test_split_equals_one_process(model, parts):
    rng = np.random.default_rng(16 + parts)
    T, B = 7, 4  # 7 is divisible by none of 2, 3, 4
    layers = _network(rng, model)
    x = rng.normal(size=(T, B, 6)) * 2.0
    labels = rng.integers(0, 3, size=B)
    loss = "loss_ce_membrane" if model == "li" else "loss_ce_rate"
    want_out, want_loss, want_grads = _one_process(layers, x, labels, loss)
    got_out, got_loss, got_grads = run_split(layers, x, labels, parts, loss)
    spiking = [i for i, l in enumerate(layers)
               if l[0] == "neuron" and l[1].model != "li"]
    assert spiking and any(want_out[i].any() for i in spiking)
    for i in spiking:
        np.testing.assert_array_equal(got_out[i], want_out[i])
    assert got_loss == pytest.approx(want_loss, rel=1e-12, abs=1e-12)
    assert np.abs(want_grads[0][0]).max() > 0  # the gradient reaches fc1
    for got, want in zip(got_grads, want_grads):
        assert len(_parts(got)) == len(_parts(want))
        for g, w in zip(_parts(got), _parts(want)):
            if w is None:
                assert g is None
            else:
                np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def _parts(grad):
    """A layer's gradients as a list: (gw, gb), [gw of plif] or []."""
    if grad is None:
        return []
    return list(grad) if isinstance(grad, tuple) else [grad]
