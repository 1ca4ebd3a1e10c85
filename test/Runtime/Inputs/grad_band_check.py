#!/usr/bin/env python3
"""The sparse backward (`--snn-autodiff grad-threshold=B`) against the float64
reference, after `grads_reference.py make` and `snn-run grads` of three
builds of one model on the same weights and data:

  grad_band_check.py BANDED DIR DENSE.safetensors INF.safetensors [TOL]
  grad_band_check.py margin BANDED DIR
      exit 1 when some reference H lies within 1e-4 of a band edge
      (|H - v_th| = B: float32 and float64 may then decide differently),
      the band zeroes none or all of a layer's surrogate entries, or a
      batch norm's parameter gradient is a sum that cancels (its terms'
      magnitudes add up to over 40 times its own: the float32 rounding of
      the terms then reaches the 1e-5 bound; measured on the conv net, the
      error grows as about 1.2e-7 times that ratio): the test then draws
      its data again.

BANDED is the module compiled with a finite B and DIR/grads.safetensors its
gradients; DENSE.safetensors those of the module without a band and
INF.safetensors those of grad-threshold=inf. Checks:
  - the banded gradients match the reference's banded gradients (normwise
    relative error below TOL, default 1e-6: float32 against float64 on a
    small net; batch norm's sums over T*B*H*W in float32 need 1e-5);
  - B=inf gives gradients identical (bit for bit) to no band;
  - the band changes the gradients (it cut something).
Prints, per neuron layer of the backward, the fraction of surrogate entries
that are zero with the band and without it (the reference's, on its H).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grads_reference import compare  # noqa: E402
from snnref.layers import _bn_view  # noqa: E402
from snnref.manifest import Module  # noqa: E402
from snnref.surrogate import Surrogate  # noqa: E402
from snnref.tensorio import read_safetensors  # noqa: E402


def reference_after_forward(module, d):
    """The float64 reference of MODULE on DIR's weights and data, after its
    train_forward."""
    mod = Module(module)
    weights = {k: v.astype(np.float64) for k, v in
               read_safetensors(f"{d}/w.safetensors")[0].items()}
    mod.initialize(weights=weights)
    mod.set("input", np.load(f"{d}/x.npy").astype(np.float64))
    mod.set("labels", np.load(f"{d}/y.npy"))
    mod.run("train_forward")
    return mod


def reference_layers(module, d):
    """[(name, neuron, H)] of each spiking neuron_bwd of the backward, H from
    the reference's train_forward on DIR's weights and data."""
    mod = reference_after_forward(module, d)
    out = []
    for op in mod.m["programs"]["backward"]:
        if op.get("op") != "neuron_bwd" or op.get("model") == "li":
            continue
        n = mod.neuron_of(op)
        h = mod.get(int(op["in"][1])).reshape(-1, n.F)
        out.append((mod.info(int(op["in"][1]))["name"], n, h))
    return out


def zero_fractions(layers):
    """[(layer, zero fraction with the band, without it)]."""
    out = []
    for name, n, h in layers:
        banded = n.surrogate.grad(h - n.v_th, h)
        s = n.surrogate
        dense = Surrogate(s.kind, s.alpha, s.theta_grad).grad(h - n.v_th, h)
        out.append((name, float(np.mean(banded == 0)), float(np.mean(dense == 0))))
    return out


def edge_margin(layers):
    """The smallest ||H - v_th| - B| over the banded layers' reference H."""
    margin = np.inf
    for _, n, h in layers:
        if n.surrogate.grad_band is not None:
            margin = min(margin, float(np.min(np.abs(np.abs(h - n.v_th) -
                                                     n.surrogate.grad_band))))
    return margin


def batch_norm_cancellation(module, d):
    """The largest sum(|terms|) / |sum| of a batch norm parameter gradient
    (gbeta = sum gy, ggamma = sum gy xhat, per channel) in the reference's
    backward on DIR's weights and data."""
    mod = reference_after_forward(module, d)
    mod.run("backward")
    worst = 1.0
    ops = [sub for op in mod.m["programs"]["backward"] for sub in op.get("of", [op])]
    for op in ops:
        if op.get("op") != "batch_norm_bwd":
            continue
        gy, x, _, mean, invstd = (mod.get(int(i)) for i in op["in"])
        c, rank = mean.size, int(op.get("spatial_rank", 2))
        gv, xv = _bn_view(gy, c, rank), _bn_view(x, c, rank)
        xhat = (xv - mean.reshape(1, c, 1)) * invstd.reshape(1, c, 1)
        for terms in (gv, gv * xhat):
            total = np.abs(terms.sum(axis=(0, 2)))
            spread = np.abs(terms).sum(axis=(0, 2))
            worst = max(worst, float(np.max(spread / np.maximum(total, 1e-300))))
    return worst


def main(banded, d, dense_path, inf_path, tol="1e-6"):
    status = compare(banded, d, tol=float(tol))
    got = read_safetensors(f"{d}/grads.safetensors")[0]
    dense = read_safetensors(dense_path)[0]
    inf = read_safetensors(inf_path)[0]
    names = [n for n in dense if n.startswith("grad:")]
    same = all(np.array_equal(dense[n], inf[n]) for n in names)
    print(f"INF {'IDENTICAL' if same else 'DIFFERS'} {len(names)} grads")
    changed = any(not np.array_equal(dense[n], got[n]) for n in names)
    print(f"BAND {'CHANGES' if changed else 'KEEPS'} the gradients")
    for name, with_band, without in zero_fractions(reference_layers(banded, d)):
        print(f"ZERO_SG {name} band={with_band:.3f} dense={without:.3f}")
        if not (0.0 < with_band < 1.0 and with_band > without):
            print(f"FAIL {name}: the band should zero some but not all "
                  "surrogate entries")
            status = 1
    return 0 if status == 0 and same and changed else 1


if __name__ == "__main__":
    if sys.argv[1] == "margin":
        # Also draw again while a band zeroes none or all of a layer's
        # surrogate entries (the test needs it to cut some).
        layers = reference_layers(sys.argv[2], sys.argv[3])
        cuts = all(0.0 < b < 1.0 and b > d for _, b, d in zero_fractions(layers))
        well_conditioned = batch_norm_cancellation(sys.argv[2], sys.argv[3]) < 40
        sys.exit(0 if cuts and well_conditioned and edge_margin(layers) > 1e-4 else 1)
    sys.exit(main(*sys.argv[1:6]))
