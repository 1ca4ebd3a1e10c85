#!/usr/bin/env python3
"""Runs the host twins of the generated neuron kernels on random inputs and
compares them with a float64 NumPy implementation of DESIGN §2.

For each layer configuration: write an snn module, generate the host kernels
with `snn-opt --snn-neuron-to-host`, add a `main` that runs forward (saving H)
and backward and prints every output as raw f32 bits, lower to LLVM, run it
with mlir-runner, and compare: spikes exactly, H and gradients to 1e-5.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np


def mlir_float(v):
    """repr() (exact), with the '.' that MLIR's float literals need: "1e-05"
    would not parse as a float."""
    r = repr(float(v))
    return r.replace("e", ".0e") if "e" in r and "." not in r else r

T = 5
F32 = np.float32

# name, model, batch, features, attributes (per-neuron values are arrays).
CONFIGS = [
    ("lif_hard_sigmoid_v4", "lif", 2, 8,
     dict(k=0.3, c=0.7, v_th=1.0, v_reset=0.0)),
    ("lif_soft_atan_strict_wrap", "lif", 4, 3,
     dict(k="per", v_th="per", reset="soft", strict=True,
          surrogate=("atan", 2.0, None))),
    ("if_triangle_detach_scalar", "if", 1, 5,
     dict(c=1.3, v_reset=-0.2, v_init="per", detach_reset=True,
          surrogate=("triangle", 1.0, None))),
    ("li_readout", "li", 2, 6, dict(k=0.25, c="per", v_init=0.1)),
    ("cuba_fast_sigmoid_theta", "cuba_lif", 3, 4,
     dict(k=0.2, c=0.9, k_syn=0.4, c_syn="per", i_init="per",
          surrogate=("fast_sigmoid", 10.0, 0.5))),
    ("lif_leak_reset_per_neuron", "lif", 1, 7,
     dict(k=0.5, c=0.5, v_leak=0.3, v_reset="per",
          surrogate=("sigmoid", 4.0, 0.2))),
    ("cuba_soft_detach", "cuba_lif", 4, 2,
     dict(k="per", c=1.0, reset="soft", detach_reset=True)),
]

# Layers generated with reduced storage (`h-dtype=bf16`, `spike-bits`) and
# their number of steps: 5 steps fill part of one 8-bit word, 12 part of a
# 16-bit word, 40 one full and one partial 32-bit word.
STORAGE = {
    "lif_bf16h_bits_T5": dict(h_dtype="bf16", spike_bits=True, steps=5),
    "if_bits_soft_T12": dict(spike_bits=True, steps=12),
    "cuba_bf16h_bits_T40": dict(h_dtype="bf16", spike_bits=True, steps=40),
    "li_bf16h": dict(h_dtype="bf16", spike_bits=True),
    # Recompute H in the backward from membrane checkpoints every C steps:
    # 13 = 4 + 4 + 4 + 1 steps, 12 = 3 x 4, and with packed spikes.
    "lif_recompute_T13": dict(recompute_chunk=4, steps=13),
    "if_recompute_soft_T12": dict(recompute_chunk=4, steps=12),
    "lif_recompute_bits_T20": dict(recompute_chunk=8, spike_bits=True, steps=20),
    "lif_band_recompute_T13": dict(recompute_chunk=4, steps=13),
    # A time split (--snn-split-time): the layer starts from a given state,
    # returns its final one, and the backward chains the state's gradient.
    "lif_chained": dict(chain=True),
    "cuba_chained_bits_T12": dict(chain=True, spike_bits=True, steps=12),
    "li_chained": dict(chain=True),
    "cuba_blocks_bits_T12": dict(spike_bits=True, steps=12),
    "lif_blocks_chained": dict(chain=True),
}
CONFIGS += [
    ("lif_bf16h_bits_T5", "lif", 2, 8,
     dict(k=0.3, c=0.7, v_th="per", surrogate=("atan", 2.0, None))),
    ("if_bits_soft_T12", "if", 3, 4, dict(c=0.6, reset="soft")),
    ("cuba_bf16h_bits_T40", "cuba_lif", 1, 6,
     dict(k=0.2, c=0.9, k_syn=0.4, c_syn="per")),
    ("li_bf16h", "li", 2, 5, dict(k=0.25, c="per")),
    ("lif_recompute_T13", "lif", 2, 8,
     dict(k=0.3, c=0.7, v_th="per", v_reset="per",
          surrogate=("triangle", 1.0, None))),
    ("if_recompute_soft_T12", "if", 3, 4,
     dict(c=0.6, reset="soft", v_init="per", surrogate=("atan", 2.0, None))),
    ("lif_recompute_bits_T20", "lif", 1, 12,
     dict(k=0.4, c=0.5, detach_reset=True, surrogate=("sigmoid", 4.0, 0.3))),
    # The sparse backward's band |H - v_th| <= B (4th entry of surrogate).
    ("lif_band_sigmoid", "lif", 2, 8,
     dict(k=0.3, c=0.7, v_th="per", surrogate=("sigmoid", 4.0, None, 0.3))),
    ("cuba_band_theta_soft", "cuba_lif", 3, 4,
     dict(k=0.2, c=0.9, reset="soft", surrogate=("atan", 2.0, 0.5, 0.4))),
    ("lif_band_recompute_T13", "lif", 2, 8,
     dict(k=0.3, c=0.7, v_reset="per", surrogate=("fast_sigmoid", 3.0, None, 0.25))),
    ("lif_chained", "lif", 2, 8,
     dict(k=0.3, c=0.7, v_th="per", surrogate=("atan", 2.0, None))),
    ("cuba_chained_bits_T12", "cuba_lif", 3, 4,
     dict(k=0.2, c=0.9, k_syn=0.4, c_syn="per", reset="soft")),
    ("li_chained", "li", 2, 6, dict(k=0.25, c="per")),
    # Layers of many threads: the CPU kernels take the steps outside blocks
    # of 128 threads of 8 neurons (HostStepInterchange.cpp). N = 1080 is one
    # full block and a partial one (the first call runs one thread); F = 45
    # makes the per-feature parameters a gather.
    ("lif_blocks_per_feature", "lif", 3, 360,
     dict(k="per", v_th="per", surrogate=("atan", 2.0, None))),
    ("lif_blocks_gather_band", "lif", 8, 45,
     dict(k=0.3, c=0.7, v_reset="per", surrogate=("sigmoid", 4.0, None, 0.3))),
    ("cuba_blocks_bits_T12", "cuba_lif", 2, 520,
     dict(k=0.2, c=0.9, k_syn=0.4, c_syn="per")),
    ("lif_blocks_chained", "lif", 3, 360,
     dict(k=0.3, c=0.7, v_th="per", reset="soft")),
]


def state_names(model):
    """A chained layer's state tensors in the op's order."""
    return ["i", "v"] if model == "cuba_lif" else ["v"]


def storage_options(name):
    """The snn-opt options of a layer's storage, e.g. "h-dtype=bf16 spike-bits=1"."""
    st = STORAGE.get(name, {})
    return " ".join(([f"h-dtype={st['h_dtype']}"] if "h_dtype" in st else []) +
                    (["spike-bits=1"] if st.get("spike_bits") else []) +
                    ([f"recompute-chunk={st['recompute_chunk']}"]
                     if st.get("recompute_chunk") else []))


def steps_of(name):
    return STORAGE.get(name, {}).get("steps", T)


def spike_word_bits(steps):
    return 8 if steps <= 8 else 16 if steps <= 16 else 32


def unpack_spikes(words, steps):
    """[words, n] packed spikes -> [steps, n] 0/1 (bit j of word w is step w*bits+j)."""
    bits = spike_word_bits(steps)
    words = words.astype(np.uint64)
    return np.stack([(words[t // bits] >> np.uint64(t % bits)) & np.uint64(1)
                     for t in range(steps)]).astype(np.float64)


def round_bf16(a):
    """float32 -> nearest bfloat16 (ties to even), as float32."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32)


# ABI order of the tensor parameters (docs/artifact-format.md, then the synapse).
PARAM_ORDER = ["k", "c", "v_leak", "v_th", "v_reset", "v_init", "k_syn",
               "c_syn", "i_init"]


def resolve_params(model, attrs, features, rng):
    """Parameter values (float64 of their f32 rounding) and the per-neuron ones."""
    defaults = dict(k=0.5, c=0.5 if model != "if" else 1.0, v_leak=0.0,
                    v_th=1.0, v_reset=0.0, k_syn=0.5, c_syn=1.0, i_init=0.0)
    if model == "if":
        defaults["c"] = 1.0
    ranges = dict(k=(0.05, 0.95), c=(0.3, 1.5), v_leak=(-0.3, 0.3),
                  v_th=(0.6, 1.2), v_reset=(-0.4, 0.1), v_init=(-0.3, 0.6),
                  k_syn=(0.1, 0.9), c_syn=(0.5, 1.5), i_init=(-0.5, 0.5))
    values, per_neuron = {}, {}
    for name, value in attrs.items():
        if name not in ranges:
            continue
        if isinstance(value, str):
            lo, hi = ranges[name]
            arr = rng.uniform(lo, hi, size=features).astype(F32)
            per_neuron[name] = arr
            values[name] = arr.astype(np.float64)
        else:
            values[name] = np.float64(F32(value))
    for name, value in defaults.items():
        values.setdefault(name, np.float64(F32(value)))
    if model == "if":
        values["k"] = np.float64(0.0)
    soft = attrs.get("reset") == "soft"
    if "v_init" not in values:
        values["v_init"] = np.float64(0.0) if (soft or model == "li") \
            else values["v_reset"]
    return values, per_neuron


def mlir_attrs(model, attrs, per_neuron):
    parts = []
    for name, value in attrs.items():
        if name in per_neuron:
            arr = per_neuron[name]
            body = ", ".join(mlir_float(v) for v in arr)
            parts.append(f"{name} = dense<[{body}]> : tensor<{arr.size}xf32>")
        elif name == "reset":
            parts.append(f"reset = #snn.reset<{value}>")
        elif name in ("strict", "detach_reset"):
            if value:
                parts.append(name)
        elif name == "surrogate":
            kind, alpha, theta, band = (tuple(value) + (None,))[:4]
            extra = f", theta_grad = {float(theta)!r}" if theta is not None else ""
            extra += f", grad_band = {float(band)!r}" if band is not None else ""
            parts.append(f"surrogate = #snn.surrogate<{kind}, alpha = "
                         f"{float(alpha)!r}{extra}>")
        else:
            parts.append(f"{name} = {float(value)!r}")
    return "{" + ", ".join(parts) + "}"


def surrogate_grad(kind, alpha, u):
    if kind == "sigmoid":
        z = 1.0 / (1.0 + np.exp(-alpha * u))
        return alpha * z * (1.0 - z)
    if kind == "atan":
        return alpha / (2.0 * (1.0 + (np.pi / 2.0 * alpha * u) ** 2))
    if kind == "triangle":
        return (1.0 / alpha) * np.maximum(0.0, 1.0 - np.abs(u) / alpha)
    if kind == "fast_sigmoid":
        return 1.0 / (alpha * np.abs(u) + 1.0) ** 2
    raise ValueError(kind)


def _layer(model, attrs, p, n, dtype):
    """Per-neuron parameter vectors (parameters tile over the batch)."""
    tile = lambda v: np.broadcast_to(np.tile(v, n // v.size) if np.ndim(v)
                                     else v, (n,)).astype(dtype)
    return [tile(p[name]) for name in PARAM_ORDER]


def forward(model, attrs, p, x, dtype=np.float64, resets=None, init=None,
            final=None):
    """DESIGN §2 forward in `dtype`, in the order of its formulas: S, H, I.
    `resets` ([T, n] 0/1) replaces the spike decisions of the resets, so that
    a float64 run follows a float32 run whose H came within rounding of the
    threshold instead of diverging from it. `init` ({"v", "i"}) replaces
    v_init and i_init; `final`, a dict, receives the state after the last
    step."""
    x = x.astype(dtype)
    steps, n = x.shape
    k, c, v_leak, v_th, v_reset, v_init, k_syn, c_syn, i_init = _layer(
        model, attrs, p, n, dtype)
    soft = attrs.get("reset") == "soft"
    strict = attrs.get("strict", False)
    S, H, I = (np.zeros_like(x) for _ in range(3))
    v, i = v_init.copy(), i_init.copy()
    if init is not None:
        v, i = init["v"].astype(dtype), init.get("i", i).astype(dtype)
    for t in range(steps):
        inp = x[t]
        if model == "cuba_lif":
            i = i - k_syn * i + c_syn * inp
            I[t] = i
            inp = i
        h = v + k * (v_leak - v) + c * inp
        H[t] = h
        if model == "li":
            S[t], v = h, h
            continue
        s = (h > v_th if strict else h >= v_th).astype(dtype)
        S[t] = s
        if resets is not None:
            s = resets[t].astype(dtype)
        v = h - v_th * s if soft else h * (1 - s) + v_reset * s
    if final is not None:
        final.update(v=v, i=i)
    return S, H, I


def backward(model, attrs, p, H, gs, gfinal=None, ginit=None):
    """DESIGN §2 BPTT in float64 from the charged membranes H: gX. The scan
    starts from `gfinal` ({"v", "i"}) when given; `ginit`, a dict, receives
    the gradient of the initial state."""
    H, gs = H.astype(np.float64), gs.astype(np.float64)
    steps, n = H.shape
    k, c, v_leak, v_th, v_reset, v_init, k_syn, c_syn, i_init = _layer(
        model, attrs, p, n, np.float64)
    soft = attrs.get("reset") == "soft"
    strict = attrs.get("strict", False)
    detach = attrs.get("detach_reset", False)
    kind, alpha, theta, band = (tuple(attrs.get("surrogate", ("sigmoid", 4.0, None)))
                                + (None,))[:4]
    gX = np.zeros_like(H)
    gv, gi = np.zeros(n), np.zeros(n)
    if gfinal is not None:
        gv, gi = gfinal["v"].astype(np.float64), \
            gfinal.get("i", gi).astype(np.float64)
    for t in reversed(range(steps)):
        if model != "li":
            h = H[t]
            sg = surrogate_grad(kind, alpha, h - v_th)
            if theta is not None:
                sg = np.where(h < theta, 0.0, sg)
            if band is not None:
                # Decided as the kernel decides it, in float32: a float64
                # |H - v_th| within rounding of B may fall on the other side.
                u32 = h.astype(np.float32) - v_th.astype(np.float32)
                sg = np.where(np.abs(u32) > np.float32(band), 0.0, sg)
            s = (h > v_th if strict else h >= v_th).astype(np.float64)
            if soft:
                dvdh = np.ones(n) if detach else 1.0 - v_th * sg
            else:
                dvdh = (1.0 - s) + (0.0 if detach else (v_reset - h) * sg)
            gh = gs[t] * sg + gv * dvdh
        else:
            gh = gs[t] + gv
        gin = c * gh
        gv = gh * (1.0 - k)
        if model == "cuba_lif":
            gi_total = gin + gi
            gin = c_syn * gi_total
            gi = gi_total * (1.0 - k_syn)
        gX[t] = gin
    if ginit is not None:
        ginit.update(v=gv, i=gi)
    return gX


def random_chain(model, n, rng):
    """Inputs of a chained layer: initial state ("v0", "i0") and the final
    state's gradient ("gvT", "giT")."""
    return {key: rng.normal(0.2, 0.5, size=n).astype(F32)
            for k in state_names(model) for key in (k + "0", "g" + k + "T")}


def layer_module(model, attrs, per_neuron, steps, batch, features, chained,
                 private=False):
    """@net: one multi-step layer; a chained one takes its initial state as
    arguments and returns its final state too (as --snn-split-time writes)."""
    ttype = f"tensor<{steps}x{batch}x{features}xf32>"
    init, results, state_types, state_args = "", "%s", "", ""
    if chained:
        names = state_names(model)
        stype = f"tensor<{batch}x{features}xf32>"
        init = (f" init({', '.join('%' + k + '0' for k in names)} : "
                f"{', '.join([stype] * len(names))})")
        results = ", ".join(["%s"] + ["%" + k + "T" for k in names])
        state_types = " -> " + ", ".join([stype] * len(names))
        state_args = "".join(f", %{k}0: {stype}" for k in names)
    return (f"func.func {'private ' if private else ''}@net(%x: {ttype}"
            f"{state_args}) -> {ttype} {{\n"
            f"  {results} = snn.{model} %x{init} "
            f"{mlir_attrs(model, attrs, per_neuron)}"
            f" : {ttype}{state_types}\n  return %s : {ttype}\n}}\n")


def global_decl(name, arr):
    body = ", ".join(mlir_float(v) for v in arr.ravel())
    return (f'  memref.global "private" constant @{name} : '
            f"memref<{arr.size}xf32> = dense<[{body}]>\n")


def build_main(prefix, model, steps, n, x, gs, params, storage, chain=None):
    """A main that runs forward-with-H and backward and prints raw bits."""
    size = steps * n
    cuba = model == "cuba_lif"
    flat = f"memref<{size}xf32>"
    types = dict(s=flat, h=flat, i=flat, gx=flat)
    if storage.get("h_dtype") == "bf16":
        types["h"] = f"memref<{size}xbf16>"
    bits = spike_word_bits(steps)
    if storage.get("spike_bits") and model != "li":
        types["s"] = f"memref<{-(-steps // bits) * n}xi{bits}>"
    chunk = storage.get("recompute_chunk", 0) if model != "li" else 0
    if chunk:
        types["ckpt"] = f"memref<{max(-(-steps // chunk) - 1, 1) * n}xf32>"
    decls = global_decl("g_x", x) + global_decl("g_gs", gs)
    # Chained state: the initial state and the final state's gradient in,
    # the final state and the initial state's gradient out ([n] each).
    names = state_names(model) if chain else []
    state_in = [f"{k}0" for k in names]
    grad_in = [f"g{k}T" for k in names]
    state_out = [f"{k}T" for k in names]
    grad_out = [f"g{k}0" for k in names]
    for key in state_in + grad_in:
        decls += global_decl(f"g_{key}", chain[key])
    for key in state_in + grad_in + state_out + grad_out:
        types[key] = f"memref<{n}xf32>"
    for name, arr in params:
        decls += global_decl(f"g_{name}", arr)
    body = [f"    %x = memref.get_global @g_x : {flat}",
            f"    %gs = memref.get_global @g_gs : {flat}"]
    for key in state_in + grad_in:
        body.append(f"    %{key} = memref.get_global @g_{key} : {types[key]}")
    for name, arr in params:
        body.append(f"    %p_{name} = memref.get_global @g_{name} : "
                    f"memref<{arr.size}xf32>")
    saved = "ckpt" if chunk else "h"
    outs = ["s", saved] + (["i"] if cuba else []) + ["gx"] + state_out + \
        grad_out
    for name in outs:
        body.append(f"    %{name} = memref.alloc() : {types[name]}")
    pnames = [f"%p_{n}" for n, _ in params]
    ptypes = [f"memref<{a.size}xf32>" for _, a in params]
    fwd_args = ["%x", "%s", "%" + saved] + (["%i"] if cuba else [])
    bwd_args = (["%gs", "%x", "%ckpt", "%gx"] if chunk else
                ["%gs", "%h", "%gx"] + (["%i"] if cuba else []))
    types["x"] = flat
    fwd_args += ["%" + k for k in state_in + state_out]
    bwd_args += ["%" + k for k in grad_in + grad_out]
    fwd_types = [flat] + [types[a[1:]] for a in fwd_args[1:]] + ptypes
    bwd_types = [flat] + [types[a[1:]] for a in bwd_args[1:]] + ptypes
    # Each kernel runs its threads in two calls, [0, 1) and [1, past the
    # end): a range split as the runtime's threads make it (the kernel clamps
    # the end to its thread count).
    body += ["    %r0 = arith.constant 0 : index",
             "    %r1 = arith.constant 1 : index",
             "    %rend = arith.constant 1099511627776 : index"]
    for fn, args, types_ in ((f"{prefix}_fwd_h", fwd_args, fwd_types),
                             (f"{prefix}_bwd", bwd_args, bwd_types)):
        for lo, hi in (("%r0", "%r1"), ("%r1", "%rend")):
            body.append(f"    call @{fn}({', '.join(args + pnames + [lo, hi])}) : "
                        f"({', '.join(types_ + ['index', 'index'])}) -> ()")
    body += ["    %c0 = arith.constant 0 : index",
             "    %c1 = arith.constant 1 : index",
             "    %c16 = arith.constant 16 : i32"]
    for name in outs:
        mtype = types[name]
        count, elem = mtype[len("memref<"):-1].split("x")
        # Every output printed as i32: f32 bits, bf16 bits shifted into the
        # f32 position, spike words zero-extended (32-bit words as they are).
        result = "%b"
        if elem == "f32":
            convert = ["      %b = arith.bitcast %f : f32 to i32"]
        elif elem == "bf16":
            convert = ["      %w = arith.bitcast %f : bf16 to i16",
                       "      %e = arith.extui %w : i16 to i32",
                       "      %b = arith.shli %e, %c16 : i32"]
        elif elem == "i32":
            convert, result = [], "%f"
        else:
            convert = [f"      %b = arith.extui %f : {elem} to i32"]
        body += [
            f"    %cn_{name} = arith.constant {count} : index",
            f"    %bits_{name} = memref.alloc() : memref<{count}xi32>",
            f"    scf.for %j = %c0 to %cn_{name} step %c1 {{",
            f"      %f = memref.load %{name}[%j] : {mtype}"] + convert + [
            f"      memref.store {result}, %bits_{name}[%j] : memref<{count}xi32>",
            f"    }}",
            f"    %u_{name} = memref.cast %bits_{name} : memref<{count}xi32> "
            f"to memref<*xi32>",
            f"    call @printMemrefI32(%u_{name}) : (memref<*xi32>) -> ()"]
    return (decls +
            "  func.func private @printMemrefI32(memref<*xi32>) "
            "attributes {llvm.emit_c_interface}\n"
            "  func.func @main() {\n" + "\n".join(body) +
            "\n    return\n  }\n"), outs


def run(cmd, stdin):
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"command failed: {' '.join(cmd)}\n{proc.stderr}")
    return proc.stdout


def check_config(cfg, args, rng, workdir):
    name, model, batch, features, attrs = cfg
    storage = STORAGE.get(name, {})
    steps = steps_of(name)
    n = batch * features
    values, per_neuron = resolve_params(model, attrs, features, rng)
    x = rng.normal(0.4, 0.8, size=(steps, n)).astype(F32)
    # A small layer can, by chance, draw an input under which no neuron (or
    # every neuron) fires, which would leave the reset paths untested: draw
    # again (still fresh random data) until the reference both fires and
    # stays silent somewhere; the coverage check below reports a layer for
    # which 50 draws never do.
    for _ in range(50):
        if model == "li":
            break
        S = forward(model, attrs, values, x.astype(np.float64))[0]
        if S.any() and not S.all():
            break
        x = rng.normal(0.4, 0.8, size=(steps, n)).astype(F32)
    gs = rng.normal(0.0, 1.0, size=(steps, n)).astype(F32)

    chain = None
    if storage.get("chain"):
        chain = random_chain(model, n, rng)
    module = layer_module(model, attrs, per_neuron, steps, batch, features,
                          bool(chain), private=True)
    kernels = run([args.snn_opt,
                   f"--snn-neuron-to-host={storage_options(name)}",
                   "--symbol-dce"], module)
    params = [(p, per_neuron[p]) for p in PARAM_ORDER if p in per_neuron]
    main, outs = build_main(f"snn_net_0_{model}", model, steps, n, x, gs,
                            params, storage, chain)
    program = kernels.rstrip()
    assert program.endswith("}"), "unexpected snn-opt output"
    program = program[:-1] + main + "}\n"
    with open(os.path.join(workdir, f"{name}.mlir"), "w") as f:
        f.write(program)
    llvm = run([args.snn_opt, "--convert-scf-to-cf", "--convert-vector-to-llvm",
                "--convert-math-to-llvm", "--expand-strided-metadata",
                "--finalize-memref-to-llvm", "--convert-arith-to-llvm",
                "--convert-cf-to-llvm", "--convert-func-to-llvm",
                "--reconcile-unrealized-casts"], program)
    out = run([args.runner, "-e", "main", "-entry-point-result=void",
               "-shared-libs=" + ",".join(args.shared_libs)], llvm)
    dumps = re.findall(r"data =\s*\[([^\]]*)\]", out)
    if len(dumps) != len(outs):
        sys.exit(f"{name}: expected {len(outs)} printed memrefs, got:\n{out}")
    got = {}
    packed = storage.get("spike_bits") and model != "li"
    for key, text in zip(outs, dumps):
        bits = np.array([int(v) for v in text.replace("\n", " ").split(",")],
                        dtype=np.int64).astype(np.uint32)
        if key == "s" and packed:
            got[key] = unpack_spikes(bits.reshape(-1, n), steps)
        elif key in ("vT", "iT", "gv0", "gi0"):
            got[key] = bits.view(np.float32).astype(np.float64)
        elif key == "ckpt":
            got[key] = bits.view(np.float32).astype(np.float64).reshape(-1, n)
        else:
            got[key] = bits.view(np.float32).astype(np.float64).reshape(steps, n)

    # The float64 reference resets where the float32 forward spiked: over
    # many steps a spike decided by rounding (H within 1 ulp of v_th) would
    # otherwise send the two runs apart for the rest of the sequence.
    init = {k: chain[k + "0"] for k in state_names(model)} if chain else None
    resets = forward(model, attrs, values, x, dtype=np.float32, init=init)[0]
    S, H, I = forward(model, attrs, values, x.astype(np.float64),
                      resets=resets, init=init)
    # The backward's surrogate is evaluated at the kernel's own (float32) H:
    # at a float64 H a kink of the surrogate (triangle, theta_grad) or the
    # spike decision may fall on the other side, which is rounding, not a
    # wrong kernel. The forward is checked bit-exact in float32 below.
    chunk = storage.get("recompute_chunk", 0)
    if chunk:
        # The backward recomputes H in float32 exactly as the forward did.
        got["h"] = forward(model, attrs, values, x, dtype=np.float32)[1] \
            .astype(np.float64)
    gfinal = {k: chain["g" + k + "T"] for k in state_names(model)} \
        if chain else None
    ginit = {}
    gX = backward(model, attrs, values, got["h"], gs.astype(np.float64),
                  gfinal=gfinal, ginit=ginit)
    failures = []
    # Spikes: equal to float64 except where H is within rounding of v_th.
    v_th = _layer(model, attrs, values, n, np.float64)[3]
    near = np.abs(H - v_th) < 1e-5 * np.maximum(1.0, np.abs(H))
    if model == "li":
        if not np.allclose(got["s"], S, rtol=1e-5, atol=1e-6):
            failures.append(("membrane", got["s"], S))
    elif not np.array_equal(got["s"][~near], S[~near]):
        failures.append(("spikes", got["s"], S))
    bf16 = storage.get("h_dtype") == "bf16"
    # bf16 keeps 8 significant bits: a relative error of at most 2^-9.
    if not np.allclose(got["h"], H, rtol=2.0**-8 if bf16 else 1e-5, atol=1e-6):
        failures.append(("h", got["h"], H))
    if model == "cuba_lif" and not np.allclose(got["i"], I, rtol=1e-5,
                                                atol=1e-6):
        failures.append(("i_saved", got["i"], I))
    # float32 rounding of the reverse scan (and of exp's approximation in the
    # surrogate) accumulates over the steps: the tolerance grows with T.
    rtol = max(1e-5, 2e-6 * steps)
    if not np.allclose(got["gx"], gX, rtol=rtol, atol=rtol / 10):
        failures.append(("gx", got["gx"], gX))
    # The kernels evaluate the formulas in their order without contraction:
    # the forward is bit-exact against the same formulas in float32.
    final32 = {}
    S32, H32, I32 = forward(model, attrs, values, x, dtype=np.float32,
                            init=init, final=final32)
    if bf16:
        H32 = round_bf16(H32)
    if not (np.array_equal(got["s"], S32) and np.array_equal(got["h"], H32)
            and (model != "cuba_lif" or np.array_equal(got["i"], I32))):
        failures.append(("forward not bit-exact in float32", got["h"], H32))
    if model != "li" and not (S.any() and not S.all()):
        failures.append(("input coverage: no spike or all spikes", S, S))
    if not np.any(gX):
        failures.append(("input coverage: zero gradient", gX, gX))
    band = (tuple(attrs.get("surrogate", ())) + (None,) * 4)[3]
    if band is not None:
        # The band must cut something and keep something, else it proves
        # nothing; where it cuts, the gradient of that step has no gs term.
        outside = np.abs(got["h"] - v_th) > band
        if not (outside.any() and (~outside).any()):
            failures.append(("input coverage: band keeps all or nothing",
                             got["h"], v_th))
    if bf16 and np.array_equal(got["h"], H):
        failures.append(("bf16 H not rounded", got["h"], H))
    if chunk:
        # Checkpoint j is the membrane before step (j + 1) C: H after reset.
        v_th32, v_reset32 = (_layer(model, attrs, values, n, np.float32)[i]
                             for i in (3, 4))
        starts = list(range(chunk, steps, chunk))
        want = [np.where(S32[t - 1] > 0,
                         H32[t - 1] - v_th32 if attrs.get("reset") == "soft"
                         else v_reset32, H32[t - 1]) for t in starts]
        if starts and not np.array_equal(got["ckpt"][:len(starts)],
                                         np.array(want, dtype=np.float64)):
            failures.append(("checkpoints", got["ckpt"], np.array(want)))
    for k in state_names(model) if chain else []:
        # The final state is bit-exact; the initial state's gradient is the
        # reverse scan carried past step 0.
        if not np.array_equal(got[k + "T"], final32[k].astype(np.float64)):
            failures.append((f"final state {k}", got[k + "T"], final32[k]))
        if not np.allclose(got["g" + k + "0"], ginit[k], rtol=rtol,
                           atol=rtol / 10):
            failures.append((f"initial state gradient {k}",
                             got["g" + k + "0"], ginit[k]))
        if not np.any(ginit[k]):
            failures.append(("input coverage: zero state gradient",
                             ginit[k], ginit[k]))
    for what, a, b in failures:
        print(f"FAIL {name}: {what}\n kernel:\n{a}\n reference:\n{b}")
    if not failures:
        print(f"PASS {name}")
    return not failures


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--snn-opt", required=True)
    parser.add_argument("--runner", required=True)
    parser.add_argument("--shared-libs", nargs="+",
                        help="runner utility libraries (default: those next "
                        "to mlir-runner)")
    parser.add_argument("--seed", type=int, default=None,
                        help="random seed (default: fresh)")
    parser.add_argument("--workdir", default=None,
                        help="keep the generated programs here")
    args = parser.parse_args()
    if not args.shared_libs:
        runner = shutil.which(args.runner) or args.runner
        libdir = os.path.join(os.path.dirname(os.path.dirname(
            os.path.realpath(runner))), "lib")
        args.shared_libs = [os.path.join(libdir, f"libmlir_{name}.so")
                            for name in ("c_runner_utils", "runner_utils")]
    seed = args.seed if args.seed is not None else \
        int.from_bytes(os.urandom(4), "little")
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    workdir = args.workdir or tempfile.mkdtemp(prefix="snn-host-kernels-")
    os.makedirs(workdir, exist_ok=True)
    ok = all([check_config(cfg, args, rng, workdir) for cfg in CONFIGS])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
