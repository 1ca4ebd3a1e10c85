#!/usr/bin/env python3
"""Whole-network gradients of --snn-autodiff against finite differences.

    autodiff_gradcheck.py NAME MODULE.snnmod

Loads a module compiled from @train_step with the float64 reference
(python/snnref), in smooth mode (spikes are the surrogate's primitive, so the
surrogate BPTT is the exact derivative), with fresh random weights and
input, and compares every parameter gradient of the backward program with
central differences of the loss: normwise relative error < 1e-5. Also checks
that the network is active (not every smooth spike near 0 or 1).
"""

import sys

import numpy as np

from snnref.gradcheck import check_grad, sample_indices
from snnref.manifest import Module


def main():
    name, path = sys.argv[1], sys.argv[2]
    seed = int(np.random.SeedSequence().entropy % (1 << 31))
    rng = np.random.default_rng(seed)
    mod = Module(path)
    mod.initialize(seed=seed)
    shape = mod.info(int(mod.m["input"]))["shape"]
    mod.set("input", rng.normal(0.5, 1.0, shape))
    mod.set("labels", rng.integers(0, shape[1] + 1, shape[1]) % 3)

    def loss(pname, value):
        saved = mod.get(pname).copy()
        mod.set(pname, value)
        mod.run("train_forward", smooth=True)
        mod.run("backward", smooth=True)
        mod.set(pname, saved)
        return float(mod.get("loss"))

    mod.run("train_forward", smooth=True)
    mod.run("backward", smooth=True)
    grads = {t["name"][5:]: mod.get(t["name"]).copy() for t in mod.m["tensors"]
             if t["name"].startswith("grad:") and "grad_of" in t}
    worst, failed = 0.0, []
    for pname, g in sorted(grads.items()):
        p = mod.get(pname).copy()
        err = check_grad(lambda v: loss(pname, v), p, g,
                         indices=sample_indices(p.size, 10, rng))
        worst = max(worst, err)
        if not err < 1e-5 or not np.abs(g).max() > 0:
            failed.append(f"{pname} (rel {err:.2e}, max|g| {np.abs(g).max():.2e})")
    status = "OK" if not failed else "FAIL " + ", ".join(failed)
    print(f"GRADCHECK {name} params={len(grads)} max_rel={worst:.1e} {status} (seed {seed})")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
