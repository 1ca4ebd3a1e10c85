"""The neuron scan against closed forms, and its BPTT against central
differences of the smooth forward (S = σ(H - v_th))."""

import numpy as np
import pytest

from snnref import RefError
from snnref.gradcheck import check_grad, fd_grad
from snnref.neuron import Neuron


def first_spike_step(k, c, x, v_th):
    """Constant input from V = 0: H_n = c x (1 - (1-k)^n) / k (n = 1, 2, ...)."""
    n = 1
    while c * x * (1 - (1 - k) ** n) / k < v_th:
        n += 1
    return n


def test_lif_constant_input_fires_periodically(rng):
    while True:
        k, c, x = rng.uniform(0.1, 0.6), rng.uniform(0.3, 1.0), rng.uniform(1.5, 6.0)
        n = first_spike_step(k, c, x, 1.0)
        if c * x / k > 1.05 and n < 10 and \
                abs(c * x * (1 - (1 - k) ** n) / k - 1.0) > 1e-6:
            break
    T = 5 * n
    s, h, _ = Neuron("lif", 1, k=k, c=c).forward(np.full((T, 1), x))
    expected = np.zeros(T)
    expected[n - 1::n] = 1.0  # hard reset to 0 restarts the same charge curve
    np.testing.assert_array_equal(s[:, 0], expected)
    np.testing.assert_allclose(h[n - 1, 0], c * x * (1 - (1 - k) ** n) / k, rtol=1e-12)


def test_if_soft_reset_counts(rng):
    x = rng.uniform(0.05, 0.95, 8)
    T = 40
    cum = np.arange(1, T + 1)[:, None] * x[None, :]
    keep = np.all(np.abs(cum - np.round(cum)) > 1e-9, axis=0)
    s, _, _ = Neuron("if", 8, c=1.0, reset="soft").forward(np.tile(x, (T, 1)))
    # With k = 0 and a subtracting reset, spikes up to t = floor(sum x).
    np.testing.assert_array_equal(np.cumsum(s, axis=0)[:, keep], np.floor(cum)[:, keep])


def test_strict_decides_at_exact_threshold():
    x = np.ones((1, 1))
    assert Neuron("if", 1, c=1.0).forward(x)[0][0, 0] == 1.0
    assert Neuron("if", 1, c=1.0, strict=True).forward(x)[0][0, 0] == 0.0


def test_v_init_and_per_neuron_params(rng):
    F, B, T = 4, 3, 6
    p = dict(k=rng.uniform(0.1, 0.9, F), c=rng.uniform(0.1, 1, F),
             v_leak=rng.normal(0, 0.2, F), v_th=rng.uniform(0.5, 1.5, F),
             v_reset=rng.normal(0, 0.1, F), v_init=rng.normal(0, 0.3, F))
    x = rng.normal(0.5, 1.0, (T, B * F))
    s, h, _ = Neuron("lif", F, **p).forward(x)
    # One neuron at a time, written out.
    for b in range(B):
        for f in range(F):
            v = p["v_init"][f]
            for t in range(T):
                hh = v + p["k"][f] * (p["v_leak"][f] - v) + p["c"][f] * x[t, b * F + f]
                assert h[t, b * F + f] == pytest.approx(hh, rel=1e-12, abs=1e-12)
                sp = float(hh >= p["v_th"][f])
                assert s[t, b * F + f] == sp
                v = p["v_reset"][f] if sp else hh


def test_default_v_init_is_v_reset_for_hard_reset():
    n = Neuron("lif", 2, v_reset=[0.2, -0.1])
    np.testing.assert_array_equal(n.v_init, [0.2, -0.1])
    assert np.all(Neuron("lif", 2, v_reset=0.3, reset="soft").v_init == 0)


def test_cuba_current_closed_form(rng):
    ks, cs, x = rng.uniform(0.1, 0.5), rng.uniform(0.5, 2), rng.uniform(0.1, 0.5)
    T = 12
    _, _, cur = Neuron("cuba_lif", 1, k_syn=ks, c_syn=cs, v_th=1e9).forward(
        np.full((T, 1), x))
    n = np.arange(1, T + 1)
    np.testing.assert_allclose(cur[:, 0], cs * x * (1 - (1 - ks) ** n) / ks, rtol=1e-12)


def test_heaviside_backward_two_steps(rng):
    # DESIGN §2 written out for T = 2, one neuron, hard reset.
    k, c, vr = 0.4, 0.7, 0.1
    n = Neuron("lif", 1, k=k, c=c, v_reset=vr, surrogate={"kind": "atan", "alpha": 2})
    h = np.array([[rng.uniform(0.5, 1.5)], [rng.uniform(0.5, 1.5)]])
    gs = rng.normal(size=(2, 1))
    sg = lambda u: 2 / (2 * (1 + (np.pi / 2 * 2 * u) ** 2))
    gh1 = gs[1, 0] * sg(h[1, 0] - 1)
    s0 = float(h[0, 0] >= 1)
    dvdh0 = (1 - s0) + (vr - h[0, 0]) * sg(h[0, 0] - 1)
    gh0 = gs[0, 0] * sg(h[0, 0] - 1) + gh1 * (1 - k) * dvdh0
    gx, _ = n.backward(gs, h)
    np.testing.assert_allclose(gx[:, 0], [c * gh0, c * gh1], rtol=1e-12)


def test_theta_grad_blocks_the_surrogate(rng):
    n = Neuron("lif", 5, surrogate={"kind": "sigmoid", "theta_grad": 0.8})
    h = np.array([[0.1, 0.5, 0.79, 0.81, 1.2]])
    gx, _ = n.backward(np.ones_like(h), h)
    assert np.all(gx[0, :3] == 0) and np.all(gx[0, 3:] > 0)


CASES = [
    dict(model="lif", reset="hard"),
    dict(model="lif", reset="soft", surrogate={"kind": "atan"}),
    dict(model="lif", reset="hard", surrogate={"kind": "fast_sigmoid", "alpha": 3}),
    dict(model="lif", reset="soft", surrogate={"kind": "triangle", "alpha": 2.0}),
    dict(model="if", reset="hard"),
    dict(model="li"),
    dict(model="cuba_lif", reset="hard", k_syn=0.3, c_syn=1.5, i_init=0.2),
    dict(model="cuba_lif", reset="soft", surrogate={"kind": "atan"}),
]


def _random_params(rng, F):
    return dict(k=rng.uniform(0.2, 0.8, F), c=rng.uniform(0.3, 1.2, F),
                v_leak=rng.normal(0, 0.1, F), v_th=rng.uniform(0.6, 1.2, F),
                v_reset=rng.normal(0, 0.1, F))


@pytest.mark.parametrize("case", CASES)
def test_backward_matches_finite_differences(case, rng):
    T, B, F = 7, 2, 3
    n = Neuron(features=F, **_random_params(rng, F), **case)
    x = rng.normal(0.6, 0.8, (T, B * F))
    r = rng.normal(size=x.shape)
    f = lambda xx: float((r * n.forward(xx, smooth=True)[0]).sum())
    _, h, _ = n.forward(x, smooth=True)
    gx, _ = n.backward(r, h, smooth=True)
    assert check_grad(f, x, gx) < 1e-6


@pytest.mark.parametrize("reset", ["hard", "soft"])
def test_detach_reset_is_the_gradient_with_frozen_reset_spikes(reset, rng):
    T, F = 6, 4
    n = Neuron("lif", F, reset=reset, detach_reset=True, **_random_params(rng, F))
    x = rng.normal(0.7, 0.8, (T, F))
    s0, h, _ = n.forward(x, smooth=True)
    r = rng.normal(size=x.shape)
    f = lambda xx: float((r * n.forward(xx, smooth=True, reset_spikes=s0)[0]).sum())
    gx, _ = n.backward(r, h, smooth=True)
    assert check_grad(f, x, gx) < 1e-6


@pytest.mark.parametrize("per_neuron", [False, True])
@pytest.mark.parametrize("decay_input", [True, False])
def test_plif_weight_gradient(per_neuron, decay_input, rng):
    T, B, F = 6, 2, 3
    w = rng.normal(0, 1, F if per_neuron else 1)
    x = rng.normal(0.6, 0.8, (T, B * F))
    r = rng.normal(size=x.shape)
    make = lambda ww: Neuron("plif", F, plif_w=ww, decay_input=decay_input,
                             v_leak=0.05)
    n = make(w)
    _, h, _ = n.forward(x, smooth=True)
    gx, gw = n.backward(r, h, smooth=True)
    assert gw.shape == w.shape
    fw = lambda ww: float((r * make(ww).forward(x, smooth=True)[0]).sum())
    assert check_grad(fw, w, gw) < 1e-6
    fx = lambda xx: float((r * n.forward(xx, smooth=True)[0]).sum())
    assert check_grad(fx, x, gx) < 1e-6


def test_bad_parameters():
    with pytest.raises(RefError, match="unknown neuron model"):
        Neuron("izhikevich")
    with pytest.raises(RefError, match="one per feature"):
        Neuron("lif", 4, v_th=[1.0, 2.0])
    with pytest.raises(RefError, match="plif needs"):
        Neuron("plif", 2)
    with pytest.raises(RefError, match="not \\[T, B\\*3\\]"):
        Neuron("lif", 3).forward(np.zeros((2, 4)))


@pytest.mark.parametrize("model,reset", [("lif", "hard"), ("lif", "soft"),
                                         ("if", "hard"), ("li", "hard")])
def test_steps_chain_into_the_scan(model, reset, rng):
    """step() from the previous membrane, T times, is the multi-step scan."""
    nrn = Neuron(model=model, features=3, k=0.3, c=0.8, v_th=0.7, reset=reset)
    x = rng.normal(0.5, 1.0, (6, 2, 3))
    out, h, _ = nrn.forward(x)
    v = np.broadcast_to(nrn.v_init, (2, 3))
    for t in range(6):
        o, v, ht = nrn.step(x[t], v)
        assert np.array_equal(o, out[t]) and np.allclose(ht, h[t], rtol=0, atol=1e-12)


@pytest.mark.parametrize("model,reset", [("lif", "hard"), ("lif", "soft"), ("li", "hard")])
def test_step_backward_matches_finite_differences(model, reset, rng):
    """The gradients of one smooth step wrt its input and previous membrane."""
    nrn = Neuron(model=model, features=4, k=0.35, c=0.9, v_th=0.6, reset=reset)
    x, v = rng.normal(0.4, 1.0, (2, 4)), rng.normal(0.2, 0.5, (2, 4))
    gs, gvn = rng.normal(size=(2, 4)), rng.normal(size=(2, 4))

    def loss(xv, vv):
        o, vn, _ = nrn.step(xv, vv, smooth=True)
        return float(np.sum(gs * o) + (0.0 if model == "li" else np.sum(gvn * vn)))

    _, _, h = nrn.step(x, v, smooth=True)
    gx, gv = nrn.step_backward(gs, np.zeros_like(gs) if model == "li" else gvn, h,
                               smooth=True)
    assert check_grad(lambda a: loss(a, v), x, gx) < 1e-6
    assert check_grad(lambda a: loss(x, a), v, gv) < 1e-6


def test_cuba_steps_chain_into_the_scan_and_their_backward_is_exact(rng):
    nrn = Neuron(model="cuba_lif", features=3, k=0.3, c=0.8, v_th=0.7,
                 k_syn=0.4, c_syn=0.9)
    x = rng.normal(0.6, 1.0, (6, 2, 3))
    out, h, _ = nrn.forward(x)
    v, i = np.broadcast_to(nrn.v_init, (2, 3)), np.broadcast_to(nrn.i_init, (2, 3))
    for t in range(6):
        o, v, ht, i = nrn.step(x[t], v, i=i)
        assert np.array_equal(o, out[t]) and np.allclose(ht, h[t], rtol=0, atol=1e-12)

    x0, v0, i0 = rng.normal(0.4, 1.0, (2, 3)), rng.normal(0.2, 0.5, (2, 3)), rng.normal(0, 0.5, (2, 3))
    gs, gvn, gin = (rng.normal(size=(2, 3)) for _ in range(3))

    def loss(xv, vv, iv):
        o, vn, _, inext = nrn.step(xv, vv, smooth=True, i=iv)
        return float(np.sum(gs * o) + np.sum(gvn * vn) + np.sum(gin * inext))

    _, _, hh, _ = nrn.step(x0, v0, smooth=True, i=i0)
    gx, gv, gi = nrn.step_backward(gs, gvn, hh, smooth=True, gi_next=gin)
    assert check_grad(lambda a: loss(a, v0, i0), x0, gx) < 1e-6
    assert check_grad(lambda a: loss(x0, a, i0), v0, gv) < 1e-6
    assert check_grad(lambda a: loss(x0, v0, a), i0, gi) < 1e-6
