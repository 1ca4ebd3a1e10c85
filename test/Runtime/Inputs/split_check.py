#!/usr/bin/env python3
"""Time split tests: a split module's results against one process's.

usage: split_check.py grads SPLIT.safetensors ONE.safetensors [TOL]
           the same tensors (snn-run grads: loss, gradients, updated
           weights), each within TOL (default 1e-6) relative to ONE's
           largest magnitude, and some gradient is not zero; prints MATCH
       split_check.py outputs SPLIT.npy ONE.npy [TOL]
           the outputs of snn-run infer --output, not all zero: identical
           spikes (prints SAME SPIKES), or membranes within TOL relative
           (prints MATCH)
"""
import sys

import numpy as np

from snnref.tensorio import read_safetensors


def grads(a, b, tol):
    ta, tb = read_safetensors(a)[0], read_safetensors(b)[0]
    if set(ta) != set(tb) or not ta:
        sys.exit(f"FAIL: tensors differ: {sorted(set(ta) ^ set(tb))}")
    worst, worst_name = 0.0, ""
    for k in sorted(tb):
        x, y = ta[k].astype(np.float64), tb[k].astype(np.float64)
        if x.shape != y.shape:
            sys.exit(f"FAIL: {k}: shape {x.shape} vs {y.shape}")
        err = np.abs(x - y).max() / max(np.abs(y).max(), 1e-30)
        if err > worst:
            worst, worst_name = err, k
    if worst > tol:
        sys.exit(f"FAIL: {worst_name}: relative difference {worst:.3g} > {tol}")
    zero = [k for k in tb if k.startswith("grad:") and not tb[k].any()]
    if zero:
        sys.exit(f"FAIL: gradients all zero (a weak test): {zero}")
    print(f"MATCH {len(tb)} tensors, max relative difference {worst:.3g}")


def outputs(a, b, tol):
    x, y = np.load(a), np.load(b)
    if x.shape != y.shape:
        sys.exit(f"FAIL: output shapes differ: {x.shape} {y.shape}")
    if not y.any():
        sys.exit("FAIL: the outputs are all zero (a weak test)")
    if np.isin(y, (0.0, 1.0)).all():
        # Spikes: the same float operations per neuron give the same spikes.
        if not np.array_equal(x, y):
            sys.exit(f"FAIL: {int((x != y).sum())} spikes differ")
        print(f"SAME SPIKES {y.shape}")
        return
    # Membranes: the GEMMs of a rank have fewer rows, which may round
    # differently (BLAS picks its blocking by size).
    err = np.abs(x.astype(np.float64) - y).max() / np.abs(y).max()
    if err > tol:
        sys.exit(f"FAIL: outputs differ by {err:.3g} > {tol} (relative)")
    print(f"MATCH {y.shape}, max relative difference {err:.3g}")


if __name__ == "__main__":
    if sys.argv[1] == "grads":
        grads(sys.argv[2], sys.argv[3],
              float(sys.argv[4]) if len(sys.argv) > 4 else 1e-6)
    elif sys.argv[1] == "outputs":
        outputs(sys.argv[2], sys.argv[3],
                float(sys.argv[4]) if len(sys.argv) > 4 else 1e-6)
    else:
        sys.exit(__doc__)
