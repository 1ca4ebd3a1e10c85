"""NIR node semantics against closed forms and the module neuron."""

import numpy as np
import pytest

from snnref import RefError, nir
from snnref.neuron import Neuron


def test_lif_step_spike_times(rng):
    dt = 1e-3
    while True:
        tau, r, x = rng.uniform(5e-3, 2e-2), rng.uniform(0.5, 2), rng.uniform(1.5, 4)
        k = dt / tau
        h = lambda n: r * x * (1 - (1 - k) ** n)  # v_n from 0, v_leak = 0
        # r x <= 1: the membrane never reaches the threshold; draw again.
        n = next((m for m in range(1, 10000) if h(m) > 1.0), None)
        if n is not None and n < 40 and abs(h(n) - 1.0) > 1e-9:
            break
    s = nir.lif_step(np.full((4 * n, 1), x), tau, r, 0.0, 1.0, dt)
    expected = np.zeros(4 * n)
    expected[n - 1::n] = 1
    np.testing.assert_array_equal(s[:, 0], expected)


def test_li_relaxes_to_v_leak_plus_r_x(rng):
    tau, r, vl, x, dt = 0.02, rng.uniform(0.5, 2), rng.normal(), rng.normal(), 1e-3
    v = nir.li(np.full((50, 1), x), tau, r, vl, dt, v0=0.3)
    n = np.arange(1, 51)
    vstar = vl + r * x
    np.testing.assert_allclose(v[:, 0], vstar + (0.3 - vstar) * (1 - dt / tau) ** n,
                               rtol=1e-10)


def test_if_and_integrator(rng):
    x = rng.uniform(0, 1, (30, 3))
    np.testing.assert_allclose(nir.i(x, 2.0, 0.1), np.cumsum(0.2 * x, axis=0),
                               rtol=1e-12)
    s = nir.if_(x, 2.0, 1.0, 0.1, reset="soft")
    cum = np.cumsum(0.2 * x, axis=0)
    np.testing.assert_array_equal(np.cumsum(s, axis=0), np.floor(cum))


def test_cuba_lif_synapse(rng):
    w, x, dt, ts = rng.uniform(0.5, 2), rng.uniform(0.1, 1), 1e-3, 5e-3
    v = nir.cuba_lif(np.full((20, 1), x), ts, 1e-2, 1.0, 0.0, 1e9, w, dt)
    assert np.all(v == 0)  # no spikes at an unreachable threshold
    cur = nir.li(np.full((20, 1), x), ts, w, 0.0, dt)  # the synapse alone
    n = np.arange(1, 21)
    np.testing.assert_allclose(cur[:, 0], w * x * (1 - (1 - dt / ts) ** n), rtol=1e-12)


@pytest.mark.parametrize("reset", ["hard", "soft"])
def test_lif_step_is_the_strict_module_neuron(reset, rng):
    F, dt = 5, 1e-3
    tau, r = rng.uniform(2e-3, 2e-2, F), rng.uniform(0.5, 3, F)
    vl, vth, vr = rng.normal(0, 0.1, F), rng.uniform(0.5, 1.5, F), rng.normal(0, 0.1, F)
    x = rng.normal(0.5, 1.0, (25, 3, F))
    s = nir.lif_step(x, tau, r, vl, vth, dt, reset, vr)
    n = Neuron("lif", F, k=dt / tau, c=r * dt / tau, v_leak=vl, v_th=vth,
               v_reset=vr, v_init=0.0, reset=reset, strict=True)
    np.testing.assert_array_equal(s, n.forward(x)[0])


def test_threshold_and_delay(rng):
    x = rng.normal(size=(10, 4))
    np.testing.assert_array_equal(nir.threshold(x, 0.2), (x > 0.2).astype(float))
    y = nir.delay(x, 3e-3, 1e-3)
    np.testing.assert_array_equal(y[:3], 0)
    np.testing.assert_array_equal(y[3:], x[:-3])
    assert np.all(nir.delay(x, 20e-3, 1e-3) == 0)


def test_unstable_dt_is_an_error():
    with pytest.raises(RefError, match="dt/tau"):
        nir.lif_step(np.zeros((2, 1)), 1e-4, 1.0, 0.0, 1.0, 1e-3)
    with pytest.raises(RefError, match="hard or soft"):
        nir.if_(np.ones((2, 1)), 1.0, 0.5, 1.0, reset="zero")
