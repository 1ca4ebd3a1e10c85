"""NIR node semantics discretized with forward Euler at step dt (docs/nir.md),
in float64. Every function takes x as [T, ...] (time leading) and returns the
node's output over time; states start at 0 unless given.

  LIF       tau dv/dt = (v_leak - v) + r I
            v[t] = v[t-1] + (dt/tau) (v_leak - v[t-1]) + (r dt/tau) x[t]
            s[t] = v[t] > v_threshold (strict); hard reset v = v_reset,
            soft v = v - v_threshold
  LI        as LIF without threshold; output v
  CubaLIF   tau_syn di/dt = -i + w_in x;  tau_mem dv/dt = (v_leak - v) + r i
            i[t] = i[t-1] - (dt/tau_syn) i[t-1] + (w_in dt/tau_syn) x[t],
            then the LIF update with x = i[t]
  IF        dv/dt = r I:  v[t] = v[t-1] + r dt x[t]; threshold and reset as LIF
  I         dv/dt = r I:  v[t] = v[t-1] + r dt x[t]; output v
  Threshold s[t] = x[t] > threshold (stateless)
  Delay     y[t] = x[t - round(delay/dt)] (0 before the first input)

An Euler factor dt/tau > 1 makes the discrete node unstable: an error, as in
the importer.
"""

import numpy as np

from .errors import RefError


def _f64(v):
    return np.asarray(v, dtype=np.float64)


def _euler(dt, tau, what):
    k = float(dt) / _f64(tau)
    if np.any(k > 1.0) or np.any(_f64(tau) <= 0):
        raise RefError(f"{what}: dt/tau = {np.max(k):g} (dt = {dt:g}) must be "
                       "in (0, 1]; choose a dt no larger than the smallest tau")
    return k


def _fire(v, v_th, reset, v_reset):
    if reset not in ("hard", "soft"):
        raise RefError(f"reset must be hard or soft, not '{reset}'")
    s = (v > v_th).astype(np.float64)
    v = v * (1 - s) + v_reset * s if reset == "hard" else v - v_th * s
    return s, v


def _scan(x, k, c, v_leak, v_th=None, reset="hard", v_reset=0.0, v0=0.0):
    x = _f64(x)
    v = np.broadcast_to(_f64(v0), x.shape[1:]).astype(np.float64)
    out = np.empty_like(x)
    for t in range(x.shape[0]):
        v = v + k * (v_leak - v) + c * x[t]
        if v_th is None:
            out[t] = v
        else:
            out[t], v = _fire(v, v_th, reset, v_reset)
    return out


def lif_step(x, tau, r, v_leak, v_threshold, dt, reset="hard", v_reset=0.0, v0=0.0):
    k = _euler(dt, tau, "LIF")
    return _scan(x, k, _f64(r) * k, _f64(v_leak), _f64(v_threshold), reset,
                 _f64(v_reset), v0)


def li(x, tau, r, v_leak, dt, v0=0.0):
    k = _euler(dt, tau, "LI")
    return _scan(x, k, _f64(r) * k, _f64(v_leak), v0=v0)


def cuba_lif(x, tau_syn, tau_mem, r, v_leak, v_threshold, w_in, dt,
             reset="hard", v_reset=0.0, v0=0.0, i0=0.0):
    ks = _euler(dt, tau_syn, "CubaLIF synapse")
    cur = _scan(x, ks, _f64(w_in) * ks, 0.0, v0=i0)
    return lif_step(cur, tau_mem, r, v_leak, v_threshold, dt, reset, v_reset, v0)


def if_(x, r, v_threshold, dt, reset="hard", v_reset=0.0, v0=0.0):
    return _scan(x, 0.0, _f64(r) * float(dt), 0.0, _f64(v_threshold), reset,
                 _f64(v_reset), v0)


def i(x, r, dt, v0=0.0):
    return _scan(x, 0.0, _f64(r) * float(dt), 0.0, v0=v0)


def threshold(x, threshold):
    return (_f64(x) > _f64(threshold)).astype(np.float64)


def delay(x, delay, dt):
    x = _f64(x)
    n = int(round(float(delay) / float(dt)))
    if n < 0:
        raise RefError(f"Delay: a negative delay {delay} is not causal")
    y = np.zeros_like(x)
    if n < x.shape[0]:
        y[n:] = x[:x.shape[0] - n]
    return y
