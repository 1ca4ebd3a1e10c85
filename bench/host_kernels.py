#!/usr/bin/env python3
"""Times generated CPU kernels of compiled modules side by side, one thread.

    bench/host_kernels.py MODULE.snnmod [MODULE.snnmod ...] --kernels NAME ... \
        [--floats N] [--repeat R] [--rounds K]

Each kernel `NAME` of a module's kernels.host.so (docs/artifact-format.md:
`void NAME(void **args, int64_t begin, int64_t end)` with `NAME_range`) runs
all its work items [0, items) on arguments that are all distinct buffers of
N random floats in [-1, 1) (N at least every tensor of the kernel ABI: the
default fits the SHD layer, T = 100, B = 16, 1472 neurons). Modules
alternate kernel by kernel for K rounds; the table shows each module's best
of R calls per round, the median over rounds, and its ratio to the first
module. Compare only modules of the same layer shapes.
"""

import argparse
import ctypes
import statistics
import time

import numpy as np

MAX_ARGS = 32


def load(path):
    lib = ctypes.CDLL(f"{path}/kernels.host.so")
    return lib


def kernel(lib, name):
    fn = getattr(lib, name)
    fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64, ctypes.c_int64]
    fn.restype = None
    items = (ctypes.c_int64 * 2).in_dll(lib, f"{name}_range")[0]
    return fn, items


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="+")
    ap.add_argument("--kernels", nargs="+", required=True)
    ap.add_argument("--floats", type=int, default=100 * 16 * 1472 + 64)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()

    rng = np.random.default_rng(0)
    buffers = [rng.uniform(-1, 1, a.floats).astype(np.float32) for _ in range(MAX_ARGS)]
    args = (ctypes.c_void_p * MAX_ARGS)(*[b.ctypes.data for b in buffers])
    libs = [load(m) for m in a.modules]
    times = {(m, k): [] for m in a.modules for k in a.kernels}
    items = {}
    for _ in range(a.rounds):
        for k in a.kernels:
            for m, lib in zip(a.modules, libs):
                fn, n = kernel(lib, k)
                items[(m, k)] = n
                fn(args, 0, n)  # warm-up
                best = float("inf")
                for _ in range(a.repeat):
                    t0 = time.perf_counter()
                    fn(args, 0, n)
                    best = min(best, time.perf_counter() - t0)
                times[(m, k)].append(best * 1e3)
    print("| kernel | module | work items | ms (median of rounds) | vs first |")
    print("|---|---|---|---|---|")
    for k in a.kernels:
        base = statistics.median(times[(a.modules[0], k)])
        for m in a.modules:
            t = statistics.median(times[(m, k)])
            print(f"| {k} | {m} | {items[(m, k)]} | {t:.3f} | {base / t:.2f}x |")


if __name__ == "__main__":
    main()
