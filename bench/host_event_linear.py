#!/usr/bin/env python3
"""Times the CPU event_linear kernel of compiled modules side by side.

    bench/host_event_linear.py KERNEL ROWS K N MODULE.snnmod [MODULE ...] \
        [--densities 0.01,0.05] [--threads 1,2] [--repeat 5]

KERNEL is an event_linear kernel of each module's kernels.host.so (the
manifest's `kernel` name, e.g. snn_op5_event_linear) with x [ROWS, K] and
the transposed weight [K, N] (no bias). Its input is random spikes at each
density, the weight random normal, the decision "event path"; the kernel
runs all rows on 1 thread, or split in two halves on 2 threads (as the
runtime splits them). Prints each module's best time of R calls and whether
its output equals the first module's bit for bit.
"""

import argparse
import ctypes
import threading
import time

import numpy as np


def time_kernel(path, name, x, wt, y, threads, repeat):
    lib = ctypes.CDLL(f"{path}/kernels.host.so")
    fn = getattr(lib, name)
    fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64, ctypes.c_int64]
    fn.restype = None
    items = (ctypes.c_int64 * 2).in_dll(lib, f"{name}_range")[0]
    decision = np.array([1, 1], dtype=np.int32)
    bufs = [x, wt, decision, y]
    args = (ctypes.c_void_p * len(bufs))(*[b.ctypes.data for b in bufs])
    cuts = [items * i // threads for i in range(threads + 1)]
    best = float("inf")
    for _ in range(repeat):
        y.fill(np.nan)
        start = time.perf_counter()
        if threads == 1:
            fn(args, 0, items)
        else:
            workers = [threading.Thread(target=fn, args=(args, cuts[i], cuts[i + 1]))
                       for i in range(threads)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kernel")
    p.add_argument("rows", type=int)
    p.add_argument("k", type=int)
    p.add_argument("n", type=int)
    p.add_argument("modules", nargs="+")
    p.add_argument("--densities", default="0.01,0.05")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    rng = np.random.default_rng(0)
    wt = rng.standard_normal(a.k * a.n).astype(np.float32)
    for d in map(float, a.densities.split(",")):
        x = (rng.random(a.rows * a.k) < d).astype(np.float32)
        for threads in map(int, a.threads.split(",")):
            first = None
            cells = []
            for m in a.modules:
                y = np.empty(a.rows * a.n, dtype=np.float32)
                ms = time_kernel(m, a.kernel, x, wt, y, threads, a.repeat)
                same = "" if first is None else (
                    " same" if np.array_equal(first, y) else " DIFFERENT")
                first = y if first is None else first
                cells.append(f"{ms:.2f} ms{same}")
            print(f"{a.kernel} {a.rows}x{a.k}->{a.n} density {d} threads {threads}: "
                  + " | ".join(cells))


if __name__ == "__main__":
    main()
