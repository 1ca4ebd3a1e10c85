#!/usr/bin/env python3
"""Prints a NIR file as sorted text lines for FileCheck: `dump_nir.py F.nir`.

    version 1.0.0
    node fc type=Affine bias=[0.5, -1] weight=shape(2, 3)
    edge fc -> lif

Arrays of up to 8 values are printed (rounded to 6 significant digits), larger
ones by shape. When the `nir` package is importable, the file must also load
with nir.read (without its type check, which rejects valid grouped and
non-square convolutions).
"""
import sys

import h5py
import numpy as np


def fmt(value):
    if isinstance(value, bytes):
        return value.decode()
    arr = np.asarray(value)
    if arr.dtype.kind in "SO":
        return str([v.decode() if isinstance(v, bytes) else v for v in arr.ravel()])
    if arr.size > 8:
        return "shape%s" % (tuple(arr.shape),)
    vals = ["%.6g" % v for v in arr.ravel()]
    return vals[0] if arr.ndim == 0 else "[" + ", ".join(vals) + "]"


def main():
    path = sys.argv[1]
    with h5py.File(path, "r") as f:
        print("version", fmt(f["version"][()]))
        graph = f["node"]
        print("graph type=%s" % fmt(graph["type"][()]))
        for name in sorted(graph["nodes"]):
            node = graph["nodes"][name]
            params = " ".join("%s=%s" % (k, fmt(node[k][()]))
                              for k in sorted(node) if k != "type")
            print("node %s type=%s %s" % (name, fmt(node["type"][()]), params))
        for src, dst in sorted((fmt(a), fmt(b)) for a, b in graph["edges"][()]):
            print("edge %s -> %s" % (src, dst))
    try:
        import nir
    except ImportError:
        return
    nir.read(path, type_check=False)
    print("nir.read ok")


if __name__ == "__main__":
    main()
