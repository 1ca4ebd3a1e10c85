#!/usr/bin/env python3
"""Writes seeded weights and inputs for a compiled module: DIR/w.safetensors
(every param and buffer, scaled so that the layers fire), DIR/x.npy [N,
sample...] and DIR/y.npy [N] labels.

usage: make_data.py MODULE DIR N [SEED]
"""
import sys

import numpy as np

from snnref.manifest import Module
from snnref.tensorio import write_safetensors


def main():
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
