#!/usr/bin/env python3
"""A float64 NumPy reference for a compiled module's `infer` program.

  make-inputs MODULE DIR   random weights (DIR/w.safetensors) and input (DIR/x.npy)
  compare MODULE DIR       runs the reference on them and compares DIR/y.npy,
                           the output of `snn-run MODULE infer`

Independent of the C++ runtime: ops are written from docs/artifact-format.md.
Spikes must be equal except where the float64 membrane is within 1e-4 of the
threshold (float32 rounding may flip those); there must be spikes at all.
"""
import json
import struct
import sys

import numpy as np


def load(module):
    return json.load(open(f"{module}/manifest.json"))


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, a in tensors.items():
        b = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + b:8 + n + e], "<f4").reshape(info["shape"])
    return out


def make_inputs(module, d):
    m = load(module)
    rng = np.random.default_rng()  # fresh every run
    w = {}
    for t in m["tensors"]:
        if t["role"] not in ("param", "buffer"):
            continue
        shape, name = t["shape"], t["name"]
        if name.endswith("running_var"):
            a = rng.uniform(0.5, 1.5, shape)
        elif name.endswith("running_mean"):
            a = rng.normal(0.0, 0.1, shape)
        elif len(shape) >= 2:
            fan_in = int(np.prod(shape[1:]))
            a = rng.normal(0.0, 2.5 / np.sqrt(fan_in), shape)
        else:
            a = rng.normal(1.0, 0.5, shape)  # biases, BN affine: keep every layer spiking
        w[name] = a.astype(np.float32)
    write_safetensors(f"{d}/w.safetensors", w)
    inp = m["tensors"][m["input"]]["shape"]
    n = 2 * inp[1] - 3  # a full batch and a padded one
    x = rng.uniform(0.0, 1.0, [n] + inp[2:]).astype(np.float32)
    np.save(f"{d}/x.npy", x)


def batch_norm(x, g, b, mu, var, attrs):
    """Eval-mode batch norm; attrs has spatial_rank and eps."""
    sh = [1] * x.ndim
    sh[x.ndim - 1 - attrs["spatial_rank"]] = -1
    return (x - mu.reshape(sh)) / np.sqrt(var.reshape(sh) + attrs["eps"]) * \
        g.reshape(sh) + b.reshape(sh)


def conv2d(x, w, b, stride, pad, dil, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dil[0]:i * dil[0] + stride[0] * oh:stride[0],
                           j * dil[1]:j * dil[1] + stride[1] * ow:stride[1]]
                y[:, g * og:(g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return y + (b[None, :, None, None] if b is not None else 0)


def pool(x, kind, k, s, p):
    n, c, h, w = x.shape
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])), constant_values=fill)
    oh, ow = (h + 2 * p[0] - k[0]) // s[0] + 1, (w + 2 * p[1] - k[1]) // s[1] + 1
    wins = [xp[:, :, i:i + s[0] * oh:s[0], j:j + s[1] * ow:s[1]]
            for i in range(k[0]) for j in range(k[1])]
    if kind == "max":
        return np.max(wins, axis=0)
    total = np.sum(wins, axis=0)
    return total / (k[0] * k[1]) if kind == "avg" else total


def computed_ops(program):
    """The ops a program computes: a generated `kernel` op stands for the
    ops of its `of` list (docs/artifact-format.md)."""
    for op in program:
        yield from op["of"] if op["op"] == "kernel" else [op]


def run_infer(m, values):
    near = []
    get = lambda i: values[i]
    for op in computed_ops(m["programs"]["infer"]):
        kind, ins, outs = op["op"], op["in"], op["out"]
        shape = m["tensors"][outs[0]]["shape"]
        if kind == "linear":
            x, w = get(ins[0]), get(ins[1])
            y = x @ w.T + (get(ins[2]) if op.get("has_bias") else 0)
        elif kind == "conv2d":
            x = get(ins[0])
            lead = x.shape[:-3]
            y = conv2d(x.reshape((-1,) + x.shape[-3:]), get(ins[1]),
                       get(ins[2]) if op.get("has_bias") else None,
                       op["stride"], op["padding"], op["dilation"], op["groups"])
        elif kind in ("avg_pool2d", "sum_pool2d", "max_pool2d"):
            x = get(ins[0])
            y = pool(x.reshape((-1,) + x.shape[-3:]), kind.split("_")[0],
                     op["kernel"], op["stride"], op["padding"])
        elif kind == "batch_norm":
            y = batch_norm(*(get(i) for i in ins), op)
        elif kind == "neuron":
            assert op["model"] == "lif" and op["reset"] == "hard", op
            x = get(ins[0])
            if "bn" in op:
                # Applies the batch norm in front of it (--snn-fuse): x,
                # gamma, beta, running_mean, running_var.
                x = batch_norm(x, *(get(i) for i in ins[1:5]), op["bn"])
            T = x.shape[0]
            xs = x.reshape(T, -1)
            v = np.full(xs.shape[1], op["v_init"], dtype=np.float64)
            y = np.zeros_like(xs)
            for t in range(T):
                h = v + op["k"] * (op["v_leak"] - v) + op["c"] * xs[t]
                s = (h > op["v_th"]) if op["strict"] else (h >= op["v_th"])
                near.append(np.abs(h - op["v_th"]) < 1e-4)
                v = h * (1 - s) + op["v_reset"] * s
                y[t] = s
            if "pool" in op:
                # Fused with its pooling (--snn-fuse): the neuron op, then a
                # pooling whose windows tile the map.
                k = op["pool"]["kernel"]
                y = y.reshape((-1,) + x.shape[-3:])
                y = pool(y, op["pool"]["kind"], k, k, [0, 0])
        else:
            raise SystemExit(f"reference: op {kind} not covered")
        values[outs[0]] = np.asarray(y, dtype=np.float64).reshape(shape)
    for t in m["tensors"]:
        if "alias_of" in t and t["alias_of"] in values:
            values[t["id"]] = values[t["alias_of"]].reshape(t["shape"])
    return any(a.any() for a in near)


def compare(module, d):
    m = load(module)
    w = read_safetensors(f"{d}/w.safetensors")
    x = np.load(f"{d}/x.npy").astype(np.float64)
    got = np.load(f"{d}/y.npy")
    inp = m["tensors"][m["input"]]["shape"]
    T, B = inp[0], inp[1]
    outs = []
    near_any = False
    for first in range(0, x.shape[0], B):
        chunk = x[first:first + B]
        valid = chunk.shape[0]
        batch = np.zeros([B] + inp[2:])
        batch[:valid] = chunk
        values = {}
        for t in m["tensors"]:
            if t["role"] in ("param", "buffer"):
                values[t["id"]] = w[t["name"]].astype(np.float64)
        values[m["input"]] = np.broadcast_to(batch, [T] + list(batch.shape)).copy()
        # Aliases (flatten) are resolved lazily: give them their source's data.
        aliases = {t["id"]: t for t in m["tensors"] if "alias_of" in t}

        class Values(dict):
            def __missing__(self, key):
                a = aliases[key]
                return self[a["alias_of"]].reshape(a["shape"])
        vals = Values(values)
        near_any |= run_infer(m, vals)
        outs.append(vals[m["output"]][:, :valid])
    ref = np.concatenate(outs, axis=1)
    if ref.shape != got.shape:
        raise SystemExit(f"shape mismatch: reference {ref.shape}, snn-run {got.shape}")
    diff = int(np.sum(ref != got))
    spikes = int(ref.sum())
    print(f"output {ref.shape}: {spikes} reference spikes, {diff} differences"
          f"{' (near-threshold values present)' if near_any else ''}")
    if spikes == 0:
        raise SystemExit("FAIL: no output spikes: the comparison proves nothing")
    if diff > (ref.size * 1e-3 if near_any else 0):
        raise SystemExit("FAIL: snn-run differs from the float64 reference")
    print("MATCH")


if __name__ == "__main__":
    {"make-inputs": make_inputs, "compare": compare}[sys.argv[1]](sys.argv[2], sys.argv[3])
