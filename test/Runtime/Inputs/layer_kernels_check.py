#!/usr/bin/env python3
"""The generated kernels of the linear and convolution ops against the
float64 reference.

  layer_kernels_check.py MODULE

For every linear, conv2d, linear_bwd and conv2d_bwd op of MODULE
(docs/artifact-format.md, "Layer ops: library calls and their kernels"),
runs the op as the CPU runtime does: float32 GEMMs (numpy) and the op's
generated kernels of MODULE/kernels.host.so (its `columns`: im2col, the
layout copies, col2im, chunk by chunk; its `launches`: the bias add, the
bias gradient), each kernel in three uneven ranges of its work items as
threads would, the scratch tensors starting as NaN. Compares y, gx, gw and
gb with python/snnref.layers in float64 on fresh random inputs: normwise
relative error below 1e-6. Prints one line per op and exits non-zero on a
mismatch.
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


class Kernels:
    def __init__(self, module):
        self.lib = ctypes.CDLL(f"{module}/kernels.host.so")

    def call(self, name, pointers):
        fn = getattr(self.lib, name)
        fn.restype = None
        fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64, ctypes.c_int64]
        items = (ctypes.c_int64 * 2).in_dll(self.lib, name + "_range")[0]
        args = (ctypes.c_void_p * len(pointers))(*pointers)
        cuts = sorted({0, items // 3, items // 3 + 1, items})
        for begin, end in zip(cuts, cuts[1:]):
            fn(args, begin, min(end, items))

    def launch(self, launch, tensors):
        self.call(launch["kernel"], [tensors[i].ctypes.data for i in launch["args"]])


def at(array, offset):
    """The address of element `offset` of a float32 array."""
    return array.ctypes.data + 4 * offset


def f32(rng, shape, scale=1.0):
    return (rng.normal(0.0, scale, shape)).astype(np.float32)


def conv_shapes(op, shapes):
    """The shapes of x, w and y (backward: gy) of a conv op."""
    ins = op["in"]
    if op["op"] == "conv2d_bwd":
        return shapes[ins[1]], shapes[ins[2]], shapes[ins[0]]
    return shapes[ins[0]], shapes[ins[1]], shapes[op["out"][0]]


def conv_bwd_errors(geo, gy, x, w, gx, gw, gb):
    """gw, and gx and gb where computed (not None), against the reference."""
    rgx, rgw, rgb = layers.conv2d_bwd(gy.astype(np.float64), x.astype(np.float64),
                                      w.astype(np.float64), has_bias=gb is not None,
                                      **geo)
    errors = {"gw": rel(gw, rgw)}
    if gx is not None:
        errors["gx"] = rel(gx, rgx)
    if gb is not None:
        errors["gb"] = rel(gb, rgb)
    return errors


def check_conv_nhwc(k, op, shapes, rng):
    """channels_last: x [M, H, W, C], w [O, KH, KW, C]; the GEMMs read and
    write the activations in place, columns [images * P, KH * KW * C]."""
    backward, ins = op["op"] == "conv2d_bwd", op["in"]
    x_shape, w_shape, y_shape = conv_shapes(op, shapes)
    H, W, C = x_shape[-3:]
    O, KH, KW, _ = w_shape
    OH, OW = y_shape[-3:-1]
    M = int(np.prod(x_shape)) // (C * H * W)
    K, P = KH * KW * C, OH * OW
    geo = dict(stride=op.get("stride", [1, 1]), padding=op.get("padding", [0, 0]),
               dilation=op.get("dilation", [1, 1]), channels_last=True)
    has_bias = bool(op.get("has_bias", False))
    plan = op["columns"]
    if "rows" in plan or "channels_last" in plan or "channels_first" in plan:
        return "NHWC", {"a layout copy or rows scratch in an NHWC plan": np.inf}
    n = int(plan["images"])
    cols = n * P
    col = np.full(cols * K, np.nan, np.float32)
    x = f32(rng, (M, H, W, C))
    w = f32(rng, (O, KH, KW, C), 1.0 / np.sqrt(K))
    wm = w.reshape(O, K)
    if not backward:
        y = np.full((M, OH, OW, O), np.nan, np.float32)
        b = f32(rng, O) if has_bias else None
        for m0 in range(0, M, n):
            k.call(plan["im2col"]["kernel"], [at(x, m0 * H * W * C), col.ctypes.data])
            y.reshape(M * P, O)[m0 * P:(m0 + n) * P] = col.reshape(cols, K) @ wm.T
        for launch in op.get("launches", []):
            k.launch(launch, {op["out"][0]: y, ins[2]: b})
        ref = layers.conv2d(x.astype(np.float64), w.astype(np.float64),
                            None if b is None else b.astype(np.float64), **geo)
        errors = {"y": rel(y, ref)}
    else:
        gy = f32(rng, (M, OH, OW, O))
        need_gx = bool(op.get("need_gx", True))
        gx = np.full((M, H, W, C), np.nan, np.float32)
        gw = np.zeros((O, K), np.float32)
        gb = np.full(O, np.nan, np.float32)
        for m0 in range(0, M, n):
            g = gy.reshape(M * P, O)[m0 * P:(m0 + n) * P]
            k.call(plan["im2col"]["kernel"], [at(x, m0 * H * W * C), col.ctypes.data])
            gw += g.T @ col.reshape(cols, K)
            col[...] = (g @ wm).ravel()
            if need_gx:
                k.call(plan["col2im"]["kernel"], [col.ctypes.data, at(gx, m0 * H * W * C)])
        if has_bias:
            k.launch(op["launches"][0], {ins[0]: gy, op["out"][-2]: gb})
        errors = conv_bwd_errors(geo, gy, x, w, gx if need_gx else None, gw,
                                 gb if has_bias else None)
    return f"NHWC M={M} H={H} W={W} C={C} O={O} images/chunk={n}", errors


def check_conv(k, op, shapes, rng):
    if op.get("channels_last", False):
        return check_conv_nhwc(k, op, shapes, rng)
    backward, ins = op["op"] == "conv2d_bwd", op["in"]
    x_shape, w_shape, y_shape = conv_shapes(op, shapes)
    C, H, W = x_shape[-3:]
    O, Cg, KH, KW = w_shape
    OH, OW = y_shape[-2:]
    M = int(np.prod(x_shape)) // (C * H * W)
    G = int(op.get("groups", 1))
    Og, Kg, P = O // G, Cg * KH * KW, OH * OW
    geo = dict(stride=op.get("stride", [1, 1]), padding=op.get("padding", [0, 0]),
               dilation=op.get("dilation", [1, 1]), groups=G)
    has_bias = bool(op.get("has_bias", False))
    plan = op["columns"]
    n = int(plan["images"])
    cols = n * P
    col = np.full(C * KH * KW * cols, np.nan, np.float32)
    rows = np.full(O * cols, np.nan, np.float32)
    x = f32(rng, (M, C, H, W))
    w = f32(rng, (O, Cg, KH, KW), 1.0 / np.sqrt(Kg))
    wm = w.reshape(G, Og, Kg)
    tensors = {}
    if not backward:
        y = np.full((M, O, OH, OW), np.nan, np.float32)
        b = f32(rng, O) if has_bias else None
        for m0 in range(0, M, n):
            k.call(plan["im2col"]["kernel"], [at(x, m0 * C * H * W), col.ctypes.data])
            for g in range(G):
                rows[g * Og * cols:(g + 1) * Og * cols] = (
                    wm[g] @ col[g * Kg * cols:(g + 1) * Kg * cols].reshape(Kg, cols)).ravel()
            k.call(plan["channels_last"]["kernel"], [rows.ctypes.data, at(y, m0 * O * P)])
        if has_bias:
            tensors = {op["out"][0]: y, ins[2]: b}
        for launch in op.get("launches", []):
            k.launch(launch, tensors)
        ref = layers.conv2d(x.astype(np.float64), w.astype(np.float64),
                            None if b is None else b.astype(np.float64), **geo)
        errors = {"y": rel(y, ref)}
    else:
        gy = f32(rng, (M, O, OH, OW))
        need_gx = bool(op.get("need_gx", True))
        gx = np.full((M, C, H, W), np.nan, np.float32)
        gw = np.zeros((G, Og, Kg), np.float32)
        gb = np.full(O, np.nan, np.float32)
        for m0 in range(0, M, n):
            k.call(plan["channels_first"]["kernel"], [at(gy, m0 * O * P), rows.ctypes.data])
            k.call(plan["im2col"]["kernel"], [at(x, m0 * C * H * W), col.ctypes.data])
            for g in range(G):
                r = rows[g * Og * cols:(g + 1) * Og * cols].reshape(Og, cols)
                cg = col[g * Kg * cols:(g + 1) * Kg * cols].reshape(Kg, cols)
                gw[g] += r @ cg.T
                cg[...] = wm[g].T @ r
            if need_gx:
                k.call(plan["col2im"]["kernel"], [col.ctypes.data, at(gx, m0 * C * H * W)])
        if has_bias:
            k.launch(op["launches"][0], {ins[0]: gy, op["out"][-3]: gb})
        errors = conv_bwd_errors(geo, gy, x, w, gx if need_gx else None, gw,
                                 gb if has_bias else None)
    return f"M={M} C={C} H={H} W={W} O={O} groups={G} images/chunk={n}", errors


def check_linear(k, op, shapes, rng):
    backward = op["op"] == "linear_bwd"
    ins = op["in"]
    N, K = shapes[ins[2] if backward else ins[1]]
    rows = int(np.prod(shapes[ins[0]])) // (N if backward else K)
    if not backward:
        x, b = f32(rng, (rows, K)), f32(rng, N)
        y = (x @ f32(rng, (N, K)).T).astype(np.float32)
        before = y.astype(np.float64)
        k.launch(op["launches"][0], {op["out"][0]: y, ins[2]: b})
        return f"rows={rows} N={N}", {"y": rel(y, before + b.astype(np.float64))}
    gy, gb = f32(rng, (rows, N)), np.full(N, np.nan, np.float32)
    k.launch(op["launches"][0], {ins[0]: gy, op["out"][-1]: gb})
    return f"rows={rows} N={N}", {"gb": rel(gb, gy.astype(np.float64).sum(axis=0))}


def main(module):
    manifest = json.load(open(f"{module}/manifest.json"))
    shapes = {t["id"]: t["shape"] for t in manifest["tensors"]}
    k = Kernels(module)
    rng = np.random.default_rng()  # fresh every run
    ok, checked = True, 0
    for program, ops in manifest["programs"].items():
        for op in ops:
            kind = op["op"]
            if kind in ("conv2d", "conv2d_bwd"):
                what, errors = check_conv(k, op, shapes, rng)
            elif kind in ("linear", "linear_bwd") and op.get("has_bias", False):
                what, errors = check_linear(k, op, shapes, rng)
            else:
                continue
            checked += 1
            failed = [f"{n} (rel {e:.1e})" for n, e in errors.items() if not e < TOLERANCE]
            ok &= not failed
            print(f"{program}: {kind} {what} max_rel={max(errors.values()):.1e} "
                  + ("MATCH" if not failed else "MISMATCH " + ", ".join(failed)))
    if not checked:
        sys.exit(f"{module}: no linear or conv op with generated kernels")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
