#!/usr/bin/env python3
"""Data parallel tests: fresh random data, and comparisons of checkpoints.

usage: dp_check.py data MODULE DIR N
           DIR/x.npy [N, sample...] (uniform [0, 4), fresh every run: the
           layers fire at the default initialization; rate coding spikes
           always for values >= 1, randomly below) and DIR/y.npy labels
       dp_check.py compare A.safetensors B.safetensors [TOL]
           every param of A equals B's within TOL (default 1e-6) relative
           to B's largest magnitude, every optimizer tensor ("opt:", sums
           of gradients, one more rounding per step) within 3 x TOL;
           prints MATCH
       dp_check.py same-spikes A.safetensors B.safetensors
           two recordings (snn-run infer --record) hold identical spikes
"""
import sys

import numpy as np

from snnref.manifest import Module
from snnref.tensorio import read_safetensors


def data(module, d, n):
    m = Module(module)
    inp = m.info(int(m.m["input"]))["shape"]
    classes = m.info(int(m.m["output"]))["shape"][-1]
    rng = np.random.default_rng()
    np.save(f"{d}/x.npy", rng.uniform(0, 4, [n] + inp[2:]).astype(np.float32))
    np.save(f"{d}/y.npy", rng.integers(0, classes, n).astype(np.int32))


def compare(a, b, tol):
    ta, tb = read_safetensors(a)[0], read_safetensors(b)[0]
    names = sorted(set(ta) & set(tb))
    if not names or set(ta) != set(tb):
        sys.exit(f"FAIL: tensors differ: {sorted(set(ta) ^ set(tb))}")
    worst, worst_name = 0.0, ""
    for k in names:
        x, y = ta[k].astype(np.float64), tb[k].astype(np.float64)
        scale = max(np.abs(y).max(), 1e-30)
        err = np.abs(x - y).max() / scale
        if k.startswith("opt:"):
            err /= 3
        if err > worst:
            worst, worst_name = err, k
    if worst > tol:
        sys.exit(f"FAIL: {worst_name}: relative difference {worst:.3g} > {tol}")
    moved = any(not np.array_equal(ta[k], 0 * ta[k]) for k in names)
    if not moved:
        sys.exit("FAIL: every tensor is zero")
    print(f"MATCH {len(names)} tensors, max relative difference {worst:.3g} "
          "(optimizer state: a third of it)")


def same_spikes(a, b):
    ta, tb = read_safetensors(a)[0], read_safetensors(b)[0]
    if set(ta) != set(tb) or not ta:
        sys.exit(f"FAIL: recorded layers differ: {sorted(ta)} vs {sorted(tb)}")
    spikes = 0
    for k in sorted(ta):
        x, y = ta[k], tb[k]
        if x.shape != y.shape or not np.array_equal(x, y):
            sys.exit(f"FAIL: {k}: spikes differ")
        spikes += int((x != 0).sum())
    if not spikes:
        sys.exit("FAIL: no spikes at all")
    print(f"SAME {len(ta)} layers, {spikes} spikes")


def main():
    cmd = sys.argv[1]
    if cmd == "data":
        data(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "compare":
        compare(sys.argv[2], sys.argv[3],
                float(sys.argv[4]) if len(sys.argv) > 4 else 1e-6)
    elif cmd == "same-spikes":
        same_spikes(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
