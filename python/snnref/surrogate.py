"""Surrogate derivatives σ'(u), u = H - v_th (docs/artifact-format.md), and a
primitive σ(u) of each.

The primitives are what makes the BPTT backward checkable by finite
differences: a neuron whose forward fires S = σ(u) instead of Θ(u) has
exactly the surrogate backward as its true gradient (neuron.py, smooth=True).
"""

import numpy as np

from .errors import RefError

DEFAULT_ALPHA = {"sigmoid": 4.0, "atan": 2.0, "triangle": 1.0,
                 "fast_sigmoid": 10.0}


class Surrogate:
    """kind, alpha, the optional secondary threshold theta_grad (σ' = 0
    where H < theta_grad) and the optional band grad_band = B (σ' = 0 where
    |H - v_th| > B; inf or None: no band)."""

    def __init__(self, kind="sigmoid", alpha=None, theta_grad=None,
                 grad_band=None):
        if kind not in DEFAULT_ALPHA:
            raise RefError(f"unknown surrogate '{kind}' (expected sigmoid, "
                           "atan, triangle or fast_sigmoid)")
        self.kind = kind
        self.alpha = float(DEFAULT_ALPHA[kind] if alpha is None else alpha)
        if not self.alpha > 0:
            raise RefError(f"surrogate '{kind}': alpha must be > 0, got {alpha}")
        self.theta_grad = None if theta_grad is None else float(theta_grad)
        self.grad_band = None if grad_band is None else float(grad_band)
        if self.grad_band is not None and not self.grad_band > 0:
            raise RefError(f"surrogate '{kind}': grad_band must be > 0 (inf "
                           f"keeps every gradient), got {grad_band}")

    @classmethod
    def from_attr(cls, attr):
        """From a manifest op's "surrogate" attribute (object, string or absent)."""
        if attr is None:
            return cls()
        if isinstance(attr, str):
            return cls(attr)
        if not isinstance(attr, dict):
            raise RefError(f"'surrogate' must be an object or a string, got {attr!r}")
        return cls(attr.get("kind", "sigmoid"), attr.get("alpha"),
                   attr.get("theta_grad"), attr.get("grad_band"))

    def grad(self, u, h=None):
        """σ'(u); h (= u + v_th) is needed only for theta_grad."""
        u = np.asarray(u, dtype=np.float64)
        a = self.alpha
        if self.kind == "sigmoid":
            z = 1.0 / (1.0 + np.exp(-a * u))
            g = a * z * (1.0 - z)
        elif self.kind == "atan":
            g = a / (2.0 * (1.0 + (np.pi / 2.0 * a * u) ** 2))
        elif self.kind == "triangle":
            g = (1.0 / a) * np.maximum(0.0, 1.0 - np.abs(u) / a)
        else:
            g = 1.0 / (a * np.abs(u) + 1.0) ** 2
        if self.theta_grad is not None:
            if h is None:
                raise RefError("theta_grad needs H to decide where σ' is zero")
            g = np.where(np.asarray(h) < self.theta_grad, 0.0, g)
        if self.grad_band is not None:
            g = np.where(np.abs(u) > self.grad_band, 0.0, g)
        return g

    def primitive(self, u):
        """A σ with σ' = grad (theta_grad ignored): the smooth spike."""
        u = np.asarray(u, dtype=np.float64)
        a = self.alpha
        if self.kind == "sigmoid":
            return 1.0 / (1.0 + np.exp(-a * u))
        if self.kind == "atan":
            return np.arctan(np.pi / 2.0 * a * u) / np.pi + 0.5
        if self.kind == "triangle":
            # ∫ (1/a)(1 - |u|/a) du on [-a, a]: 0 below, 1 above.
            v = np.clip(u, -a, a)
            return 0.5 + (v - v * np.abs(v) / (2.0 * a)) / a
        return 0.5 + u / (1.0 + a * np.abs(u))
