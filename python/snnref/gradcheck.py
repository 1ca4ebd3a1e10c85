"""Central finite differences in float64: the check that the reference's own
backward is right.

    fd_grad(f, x)      ∂f/∂x by (f(x + h e_i) - f(x - h e_i)) / 2h, i over x
    check_grad(f, x, g) compares an analytic gradient g with fd_grad and
                       returns the worst relative error (scaled by max |g|)
"""

import numpy as np


def fd_grad(f, x, h=1e-6, indices=None):
    """f maps an array shaped like x to a scalar; `indices` (flat) limits the
    entries probed (the rest are NaN)."""
    x = np.array(x, dtype=np.float64)
    g = np.full(x.size, np.nan)
    flat = x.reshape(-1)
    for i in (range(x.size) if indices is None else indices):
        old = flat[i]
        flat[i] = old + h
        fp = f(x)
        flat[i] = old - h
        fm = f(x)
        flat[i] = old
        g[i] = (fp - fm) / (2 * h)
    return g.reshape(x.shape)


def rel_error(analytic, numeric):
    a, n = np.asarray(analytic, np.float64), np.asarray(numeric, np.float64)
    ok = ~np.isnan(n)
    scale = max(np.max(np.abs(n[ok]), initial=0.0), 1e-12)
    return float(np.max(np.abs(a[ok] - n[ok]), initial=0.0) / scale)


def check_grad(f, x, analytic, h=1e-6, indices=None):
    return rel_error(analytic, fd_grad(f, x, h, indices))


def sample_indices(size, count, rng):
    """Up to `count` distinct flat indices (all when size <= count)."""
    if size <= count:
        return range(size)
    return rng.choice(size, count, replace=False)
