#!/usr/bin/env python3
"""Every generated op kernel of a module's kernels.host.so honours its range.

  range_check.py MODULE

For each kernel of a `kernel` op (its own, or each of its `launches`;
docs/artifact-format.md, "CPU kernels and threads") on
fresh random tensors: an empty range ([0, 0) and [items, items + 5)) changes
no tensor; one call over [0, items) changes something; three calls over
uneven ranges [0, k), [k, k + 1), [k + 1, items) give the same bits as that
one call. Event-driven kernels get a decision that chooses their path.
One line per kernel.
"""
import ctypes
import json
import sys

import numpy as np


def main(module):
    manifest = json.load(open(f"{module}/manifest.json"))
    tensors = {t["id"]: t for t in manifest["tensors"]}
    lib = ctypes.CDLL(f"{module}/kernels.host.so")
    rng = np.random.default_rng()  # fresh every run
    seen, failures = set(), 0
    for ops in manifest["programs"].values():
        # A kernel op's own kernel, or each of its `launches`.
        launches = [launch for op in ops if op["op"] == "kernel"
                    for launch in op.get("launches", [op])]
        for op in launches:
            if op["kernel"] in seen:
                continue
            name = op["kernel"]
            seen.add(name)

            def fresh():
                arrays = []
                for i in op["args"]:
                    t = tensors[i]
                    n = int(np.prod(t["shape"], dtype=np.int64))
                    if t.get("dtype") == "i32":  # a decision (count 0, event path), a limit
                        arrays.append(np.array(([0, 1] + [0] * n)[:n], np.int32))
                    else:
                        arrays.append(rng.random(n, dtype=np.float32))
                if op.get("run_values"):
                    run = np.array([0, 1, 7, 0], np.uint32)
                    run[0] = np.float32(1e-3).view(np.uint32)
                    arrays.append(run)
                return arrays

            fn = getattr(lib, name)
            fn.restype = None
            fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64, ctypes.c_int64]
            items = (ctypes.c_int64 * 2).in_dll(lib, name + "_range")[0]

            def call(arrays, ranges):
                ptrs = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
                for begin, end in ranges:
                    fn(ptrs, begin, end)

            original = fresh()
            empty = [a.copy() for a in original]
            call(empty, [(0, 0), (items, items + 5)])
            whole = [a.copy() for a in original]
            call(whole, [(0, items)])
            k = items // 3
            split = [a.copy() for a in original]
            call(split, [(0, k), (k, min(k + 1, items)), (min(k + 1, items), items)])
            problems = []
            if any(a.tobytes() != b.tobytes() for a, b in zip(empty, original)):
                problems.append("an empty range changed a tensor")
            if all(a.tobytes() == b.tobytes() for a, b in zip(whole, original)):
                problems.append("the whole range changed nothing")
            if any(a.tobytes() != b.tobytes() for a, b in zip(split, whole)):
                problems.append("split ranges differ from one call")
            print(f"RANGE {name} items={items} " + ("OK" if not problems else "FAIL " + "; ".join(problems)))
            failures += bool(problems)
    if not seen:
        sys.exit(f"{module}: no kernel op")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
