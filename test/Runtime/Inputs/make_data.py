#!/usr/bin/env python3
"""Writes seeded weights and inputs for a compiled module: DIR/w.safetensors
(every param and buffer, scaled so that the layers fire), DIR/x.npy [N,
sample...] and DIR/y.npy [N] labels.

usage: make_data.py MODULE DIR N [SEED]
       make_data.py --task MODULE DIR N [SEED]
           a learnable task instead: DIR/{xtrain,ytrain,xtest,ytest}.npy
           (N training samples, N/4 test samples) whose class is which
           features are on (a fixed random pattern per class, plus noise)
"""
import sys

import numpy as np

from snnref.manifest import Module
from snnref.tensorio import write_safetensors


def task(module, d, n, rng):
    m = Module(module)
    inp = m.info(int(m.m["input"]))["shape"]
    classes = m.info(int(m.m["output"]))["shape"][-1]
    features = int(np.prod(inp[2:]))
    patterns = (rng.uniform(0, 1, (classes, features)) < 0.5).astype(np.float64)
    for split, count in (("train", n), ("test", max(n // 4, 1))):
        y = rng.integers(0, classes, count)
        x = 0.8 * patterns[y] + rng.uniform(0.0, 0.3, (count, features))
        np.save(f"{d}/x{split}.npy", x.reshape([count] + inp[2:]).astype(np.float32))
        np.save(f"{d}/y{split}.npy", y.astype(np.int32))


def main():
    if sys.argv[1] == "--task":
        rng = np.random.default_rng(int(sys.argv[5]) if len(sys.argv) > 5 else 1)
        return task(sys.argv[2], sys.argv[3], int(sys.argv[4]), rng)
    module, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = np.random.default_rng(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    m = Module(module)
    w = {}
    for t in m.tensors.values():
        if t.get("role") not in ("param", "buffer"):
            continue
        shape = t["shape"]
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        w[t["name"]] = rng.normal(0.0 if len(shape) > 1 else 0.5,
                                  2.0 / np.sqrt(fan_in), shape).astype(np.float32)
    write_safetensors(f"{d}/w.safetensors", w)
    inp = m.info(int(m.m["input"]))["shape"]
    np.save(f"{d}/x.npy", rng.uniform(0.0, 1.0, [n] + inp[2:]).astype(np.float32))
    out = m.info(int(m.m["output"]))["shape"]
    np.save(f"{d}/y.npy", rng.integers(0, out[-1], n).astype(np.int32))


if __name__ == "__main__":
    main()
