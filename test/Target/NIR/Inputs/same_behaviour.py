#!/usr/bin/env python3
"""Simulates two NIR files with nir_reference.py on the same fresh random
input and prints whether their first outputs are equal.

  same_behaviour.py A.nir B.nir --dt DT --steps T [--gain G] [--trials N]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nir_reference  # noqa: E402


def output(path, x, dt):
    nodes, edges = nir_reference.read_graph(path)
    inputs = [n for n in nodes if nodes[n]["type"] == "Input"]
    outs = nir_reference.Simulator(nodes, edges, dt, "hard").run({inputs[0]: x})
    return outs[sorted(outs)[0]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--dt", type=float, required=True)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--gain", type=float, default=10.0)
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args()
    nodes, _ = nir_reference.read_graph(args.a)
    shape = [int(d) for d in np.ravel(next(
        n["shape"] for n in nodes.values() if n["type"] == "Input"))]
    rng = np.random.default_rng()
    for trial in range(args.trials):
        x = args.gain * rng.uniform(-0.3, 1.0, [args.steps, 3] + shape)
        ya, yb = output(args.a, x, args.dt), output(args.b, x, args.dt)
        if not np.any(ya):
            sys.exit("the output is all zero; the comparison proves nothing")
        if ya.shape != yb.shape or not np.array_equal(ya, yb):
            print(f"DIFFERENT in trial {trial}")
            return 1
    print(f"SAME on {args.trials} random inputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
