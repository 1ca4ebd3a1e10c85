#!/usr/bin/env python3
"""The batch norm kernels of a compiled module against the float64 reference.

  batch_norm_check.py MODULE

Calls every batch norm `kernel` op's kernels of MODULE/kernels.host.so (an
array of one float* per argument, as the CPU runtime calls it; the launches
in turn, their scratch tensors starting as NaN) on fresh random inputs and compares each output with python/snnref.layers in float64:
y, the running statistics, the saved statistics (training), gx, ggamma and
gbeta (gradient). Normwise relative error below 1e-6 for every output; x has
a mean of several standard deviations (the variance must not cancel). Prints
one line per kernel and exits non-zero on a mismatch.
"""
import ctypes
import json
import sys

import numpy as np

from snnref import layers

TOLERANCE = 1e-6


def rel(ours, ref):
    ref = np.asarray(ref, dtype=np.float64)
    ours = np.asarray(ours, dtype=np.float64).reshape(ref.shape)
    return float(np.linalg.norm(ours - ref) / max(np.linalg.norm(ref), 1e-30))


def call(lib, name, arrays):
    """The host kernel's entry takes an array of the argument pointers and a
    range [begin, end) of its work items (NAME_range = {items, grain}): the
    channels here, run in three uneven ranges as threads would."""
    fn = getattr(lib, name)
    fn.restype = None
    fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64, ctypes.c_int64]
    items = (ctypes.c_int64 * 2).in_dll(lib, name + "_range")[0]
    pointers = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
    cuts = sorted({0, items // 3, items // 3 + 1, items})
    for begin, end in zip(cuts, cuts[1:]):
        fn(pointers, begin, min(end, items))


def run_kernel_op(lib, op, shapes, tensors):
    """Runs the launches of kernel op `op` (or its one kernel) on `tensors`
    (id -> array); the scratch tensors start as NaN (read before written
    shows)."""
    for sid in op.get("scratch", []):
        tensors[sid] = np.full(shapes[sid], np.nan, np.float32)
    for launch in op.get("launches", [op]):
        call(lib, launch["kernel"], [tensors[i] for i in launch["args"]])


def check(lib, shapes, op, rng):
    sub = op["of"][0]
    rank = int(sub["spatial_rank"])
    kind = sub["op"]
    ins, outs = sub["in"], sub["out"]
    if kind == "batch_norm":
        x_shape = shapes[ins[0]]
        C = shapes[ins[1]][0]
        x = rng.normal(4.0, 1.5, x_shape).astype(np.float32)
        gamma, beta, rm = (rng.normal(0, 1, C).astype(np.float32) for _ in range(3))
        rv = rng.uniform(0.5, 1.5, C).astype(np.float32)
        training = bool(sub["training"])
        tensors = dict(zip(ins, [x, gamma, beta, rm.copy(), rv.copy()]))
        tensors.update({i: np.zeros(shapes[i], np.float32) for i in outs})
        run_kernel_op(lib, op, shapes, tensors)
        ref = layers.batch_norm(*(a.astype(np.float64) for a in (x, gamma, beta, rm, rv)),
                                eps=sub["eps"], momentum=sub["momentum"],
                                training=training, spatial_rank=rank)
        names = ["y", "running_mean", "running_var"] + (
            ["saved_mean", "saved_invstd"] if training else [])
        ours = [tensors[outs[0]], tensors[ins[3]], tensors[ins[4]]] + \
            [tensors[i] for i in outs[1:3]]
        errors = {n: rel(a, r) for n, a, r in zip(names, ours, ref)}
    else:
        x_shape = shapes[ins[1]]
        C = shapes[ins[2]][0]
        gy = rng.normal(0.0, 1.0, x_shape).astype(np.float32)
        x = rng.normal(4.0, 1.5, x_shape).astype(np.float32)
        gamma = rng.normal(0, 1, C).astype(np.float32)
        mean = rng.normal(4.0, 0.1, C).astype(np.float32)
        invstd = rng.uniform(0.5, 0.8, C).astype(np.float32)
        tensors = dict(zip(ins, [gy, x, gamma, mean, invstd]))
        tensors.update({i: np.zeros(shapes[i], np.float32) for i in outs})
        run_kernel_op(lib, op, shapes, tensors)
        ref = layers.batch_norm_bwd(*(a.astype(np.float64) for a in (gy, x, gamma, mean, invstd)),
                                    spatial_rank=rank)
        errors = {n: rel(tensors[i], r) for n, i, r in zip(["gx", "ggamma", "gbeta"], outs, ref)}
    failed = [f"{n} (rel {e:.1e})" for n, e in errors.items() if not e < TOLERANCE]
    S = int(np.prod(x_shape[len(x_shape) - rank:], dtype=np.int64))
    print(f"{kernel_name(op)} C={C} S={S} M*S={int(np.prod(x_shape)) // C} "
          f"max_rel={max(errors.values()):.1e} "
          + ("MATCH" if not failed else "MISMATCH " + ", ".join(failed)))
    return not failed


def kernel_name(op):
    """The kernel op's kernels, "+" between its launches."""
    return "+".join(l["kernel"] for l in op.get("launches", [op]))


def main(module):
    manifest = json.load(open(f"{module}/manifest.json"))
    shapes = {t["id"]: t["shape"] for t in manifest["tensors"]}
    lib = ctypes.CDLL(f"{module}/kernels.host.so")
    rng = np.random.default_rng()  # fresh every run
    seen, ok = set(), True
    for ops in manifest["programs"].values():
        for op in ops:
            if op["op"] != "kernel" or kernel_name(op) in seen:
                continue
            if op["of"][0]["op"] in ("batch_norm", "batch_norm_bwd"):
                seen.add(kernel_name(op))
                ok &= check(lib, shapes, op, rng)
    if not seen:
        sys.exit(f"{module}: no batch norm kernel op")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
