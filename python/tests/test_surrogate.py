import numpy as np
import pytest

from snnref import RefError
from snnref.gradcheck import fd_grad
from snnref.surrogate import Surrogate

KINDS = ["sigmoid", "atan", "triangle", "fast_sigmoid"]


def formula(kind, a, u):
    # Written from the contract's table, independently of surrogate.py.
    if kind == "sigmoid":
        return a / 4.0 * (1.0 - np.tanh(a * u / 2.0) ** 2)
    if kind == "atan":
        return a / 2.0 / (1.0 + (np.pi * a * u / 2.0) ** 2)
    if kind == "triangle":
        return np.where(np.abs(u) < a, (a - np.abs(u)) / a ** 2, 0.0)
    return (1.0 + a * np.abs(u)) ** -2.0


@pytest.mark.parametrize("kind", KINDS)
def test_values_match_the_formulas(kind, rng):
    a = rng.uniform(0.5, 5.0)
    u = rng.normal(0, 2, 200)
    np.testing.assert_allclose(Surrogate(kind, a).grad(u), formula(kind, a, u),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kind,alpha", [("sigmoid", 4), ("atan", 2),
                                        ("triangle", 1), ("fast_sigmoid", 10)])
def test_default_alpha(kind, alpha):
    assert Surrogate(kind).alpha == alpha
    assert Surrogate.from_attr({"kind": kind}).alpha == alpha


@pytest.mark.parametrize("kind", KINDS)
def test_primitive_is_an_antiderivative(kind, rng):
    s = Surrogate(kind, rng.uniform(0.5, 3.0))
    u = rng.normal(0, 1.5, 50)
    u = u[np.abs(np.abs(u) - s.alpha) > 1e-3]  # off the triangle's kinks
    u = u[np.abs(u) > 1e-3]
    num = np.array([fd_grad(lambda v: float(s.primitive(v)[0]), [x])[0] for x in u])
    np.testing.assert_allclose(s.grad(u), num, rtol=1e-6, atol=1e-9)


def test_theta_grad_zeroes_below(rng):
    s = Surrogate("sigmoid", 4.0, theta_grad=0.5)
    h = rng.uniform(-1, 2, 100)
    g = s.grad(h - 1.0, h)
    assert np.all(g[h < 0.5] == 0) and np.all(g[h >= 0.5] > 0)


def test_bad_surrogates():
    with pytest.raises(RefError, match="unknown surrogate"):
        Surrogate("relu")
    with pytest.raises(RefError, match="alpha"):
        Surrogate("atan", -1.0)


@pytest.mark.parametrize("kind", KINDS)
def test_grad_band_zeroes_outside_and_keeps_the_shape_inside(kind, rng):
    a, band = rng.uniform(0.5, 3.0), rng.uniform(0.1, 1.0)
    u = rng.normal(0, 1.5, 400)
    dense = Surrogate(kind, a).grad(u)
    banded = Surrogate.from_attr({"kind": kind, "alpha": a,
                                  "grad_band": band}).grad(u)
    inside = np.abs(u) <= band
    assert inside.any() and (~inside).any()
    assert np.array_equal(banded[inside], dense[inside])
    assert np.all(banded[~inside] == 0)


def test_grad_band_inf_is_no_band(rng):
    u = rng.normal(0, 3, 300)
    for kind in KINDS:
        dense = Surrogate(kind).grad(u)
        assert np.array_equal(Surrogate(kind, grad_band=np.inf).grad(u), dense)


def test_grad_band_with_theta_grad(rng):
    # Either threshold zeroes the derivative.
    u = rng.normal(0, 1, 300)
    h = u + 1.0
    s = Surrogate("atan", theta_grad=0.8, grad_band=0.5)
    g = s.grad(u, h)
    want = np.where((h < 0.8) | (np.abs(u) > 0.5), 0.0, Surrogate("atan").grad(u))
    assert np.array_equal(g, want)


@pytest.mark.parametrize("band", [0.0, -1.0, float("nan")])
def test_grad_band_must_be_positive(band):
    with pytest.raises(RefError, match="grad_band must be > 0"):
        Surrogate("sigmoid", grad_band=band)
