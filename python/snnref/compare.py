"""Compare a runtime's output with the float64 reference.

    python3 -m snnref.compare MODULE.snnmod --input x.npy --output out.npy \
        [--weights w.safetensors] [--rtol 1e-6] [--limit N] [--program infer]

x.npy is what `snn-run --data` took: [N, sample...] (the same input at every
step, the direct encoder) or pre-encoded [T, N, sample...]; out.npy is what
`snn-run --output` wrote, [T, N, ...]. Parameters come from --weights (a
snn-run checkpoint or any safetensors with the module's tensor names) and
init.safetensors; randomly initialized tensors must be given.

Spikes must be equal, except where the reference's membrane is within
1e-5 * max(1, |v_th|) of the threshold: there an fp32 rounding decides, and
such flips are reported apart (they do not fail). Membrane / real-valued
outputs must satisfy |out - ref| <= rtol |ref| + atol, atol = rtol * max |ref|.
Exit status: 0 match, 1 mismatch, 2 bad input.

With --traces REC.safetensors (what `snn-run --record ... --record-output`
wrote), each recorded trace "<layer>.<s|v|h>" [T, N, ...] is compared too:
spikes equal, membranes within --trace-atol (default 1e-5) absolute.
"""

import argparse
import sys

import numpy as np

from .errors import RefError
from .manifest import Module
from .tensorio import read_npy, read_safetensors

NEAR = 1e-5


def encode_batches(mod, x):
    """The runtime's batching: yields [T, B, sample...] float64 batches (the
    last one zero-padded) and the sample count."""
    T, B = int(mod.m["time_steps"]), int(mod.m["batch"])
    in_shape = mod.info(int(mod.m["input"]))["shape"]
    sample = int(np.prod(in_shape[2:], dtype=np.int64))
    x = np.asarray(x, dtype=np.float32).astype(np.float64)
    if x.ndim >= 3 and x.shape[0] == T and x.size // (x.shape[0] * x.shape[1]) == sample:
        seq = x.reshape(T, x.shape[1], *in_shape[2:])
    else:
        if x.ndim == 0 or x.shape[0] == 0 or x.size // x.shape[0] != sample:
            raise RefError(f"the input {list(x.shape)} does not hold samples of "
                           f"{sample} values ({in_shape[2:]}) nor [T={T}, N, ...]")
        seq = np.broadcast_to(x.reshape(1, x.shape[0], *in_shape[2:]),
                              (T, x.shape[0]) + tuple(in_shape[2:]))
    n = seq.shape[1]
    batches = []
    for start in range(0, n, B):
        part = seq[:, start:start + B]
        if part.shape[1] < B:
            pad = np.zeros((T, B - part.shape[1]) + part.shape[2:])
            part = np.concatenate([part, pad], axis=1)
        batches.append(part)
    return batches, n


def producer(mod, program, tid):
    """The last op of `program` that writes tensor tid (or its alias root)."""
    root = mod.root(tid)
    for op in reversed(mod.programs[program]):
        if any(mod.root(int(o)) == root for o in op.get("out", [])):
            return op
    return None


def run_reference(mod, x, program="infer", traces=None):
    """Returns (output [T, N, ...], {neuron op index: (H, v_th)} per batch
    concatenated along N). `traces`, a dict, receives every layer trace
    "<layer>.<s|v|h>" [T, N, ...]."""
    batches, n = encode_batches(mod, x)
    out_id = int(mod.m["output"])
    neurons = [(i, op) for i, op in enumerate(mod.programs[program])
               if op.get("op") == "neuron" and op.get("model") != "li"]
    outs, hs = [], {i: [] for i, _ in neurons}
    parts = {}
    for xb in batches:
        mod.set(int(mod.m["input"]), xb)
        mod.run(program)
        outs.append(mod.get(out_id))
        for name, value in mod.layer_traces().items():
            parts.setdefault(name, []).append(value)
        for i, op in neurons:
            nrn = mod.neuron_of(op)
            _, h, _ = nrn.forward(mod.get(int(op["in"][0])))
            hs[i].append((h.reshape(h.shape[0], h.shape[1], -1), nrn.v_th))
    out = np.concatenate(outs, axis=1)[:, :n]
    if traces is not None:
        for name, values in parts.items():
            traces[name] = np.concatenate(values, axis=1)[:, :n]
    layers = {}
    for i, parts in hs.items():
        h = np.concatenate([p[0] for p in parts], axis=1)[:, :n]
        layers[i] = (h, parts[0][1])
    return out, layers


def near_threshold(h, v_th):
    """Mask of H within NEAR * max(1, |v_th|) of v_th (h: [T, N, F])."""
    return np.abs(h - v_th) < NEAR * np.maximum(1.0, np.abs(v_th))


def compare(mod, x, got, rtol=1e-6, program="infer"):
    """Returns (ok, report lines)."""
    ref, layers = run_reference(mod, x, program)
    got = np.asarray(got, dtype=np.float64)
    lines = []
    if got.size != ref.size:
        raise RefError(f"the runtime output has shape {list(got.shape)} but the "
                       f"reference computes {list(ref.shape)} ([T, N, ...]; "
                       "pass --limit if snn-run used one)")
    got = got.reshape(ref.shape)
    op = producer(mod, program, int(mod.m["output"]))
    spiking = op is not None and op.get("op") == "neuron" and op.get("model") != "li"
    T, N = ref.shape[:2]
    flat_ref, flat_got = ref.reshape(T, N, -1), got.reshape(T, N, -1)
    lines.append(f"output {list(ref.shape)}: "
                 + ("spikes" if spiking else "real values"))
    if spiking:
        index = next(i for i, o in enumerate(mod.programs[program]) if o is op)
        h, v_th = layers[index]
        diff = flat_ref != flat_got
        near = near_threshold(h, v_th)
        flips, bad = diff & near, diff & ~near
        upstream = sum(int(near_threshold(*layers[i]).sum()) for i in layers
                       if i != index)
        lines.append(f"spikes: {int(diff.sum())} of {diff.size} differ; "
                     f"{int(flips.sum())} near-threshold flips "
                     f"(|H - v_th| < {NEAR:g}*max(1,|v_th|), fp32 rounding), "
                     f"{int(bad.sum())} real mismatches")
        if bad.any():
            lines.append(f"reference elements near threshold in earlier layers: "
                         f"{upstream} (a flip there can change later spikes)")
            for t, b, f in list(zip(*np.nonzero(bad)))[:10]:
                vth = np.broadcast_to(v_th, h.shape[2:])[f]
                lines.append(f"  t={t} sample={b} neuron={f}: runtime "
                             f"{flat_got[t, b, f]:g}, reference "
                             f"{flat_ref[t, b, f]:g} (H = {h[t, b, f]:.9g}, "
                             f"v_th = {vth:g})")
        ok = not bad.any()
    else:
        atol = rtol * float(np.max(np.abs(ref), initial=0.0))
        err = np.abs(flat_got - flat_ref)
        bad = err > rtol * np.abs(flat_ref) + atol
        lines.append(f"values: max |diff| {float(err.max(initial=0)):.3g}, "
                     f"{int(bad.sum())} of {bad.size} outside rtol {rtol:g} "
                     f"(atol {atol:.3g})")
        for t, b, f in list(zip(*np.nonzero(bad)))[:10]:
            lines.append(f"  t={t} sample={b} index={f}: runtime "
                         f"{flat_got[t, b, f]:.9g}, reference {flat_ref[t, b, f]:.9g}")
        ok = not bad.any()
    lines.append("MATCH" if ok else "MISMATCH")
    return ok, lines


def compare_traces(mod, x, got, atol=1e-5):
    """Compares recorded traces {name: [T, N, ...]} with the reference's.
    Returns (ok, report lines)."""
    ref = {}
    run_reference(mod, x, traces=ref)
    lines, ok = [], True
    for name in sorted(got):
        if name not in ref:
            raise RefError(f"the recording has a trace '{name}' that no layer "
                           f"of the module gives (it has: {', '.join(sorted(ref))})")
        r, g = ref[name], np.asarray(got[name], dtype=np.float64)
        if r.size != g.size:
            raise RefError(f"trace '{name}' has shape {list(g.shape)}; the "
                           f"reference computes {list(r.shape)}")
        g = g.reshape(r.shape)
        if name.endswith(".s"):
            bad = int(np.sum(r != g))
            lines.append(f"trace {name} {list(r.shape)}: {int(r.sum())} "
                         f"reference spikes, {bad} differences")
        else:
            err = np.abs(r - g)
            bad = int(np.sum(err > atol))
            lines.append(f"trace {name} {list(r.shape)}: max |diff| "
                         f"{float(err.max(initial=0)):.3g}, {bad} beyond {atol:g}")
        ok = ok and bad == 0
    lines.append("TRACES MATCH" if ok else "TRACES MISMATCH")
    return ok, lines


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m snnref.compare",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("module", help="the compiled module directory (.snnmod)")
    ap.add_argument("--input", required=True, help="x.npy as given to snn-run --data")
    ap.add_argument("--output", required=True, help="out.npy from snn-run --output")
    ap.add_argument("--weights", help="safetensors with the module's parameters")
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--limit", type=int, help="the first N samples (snn-run --limit)")
    ap.add_argument("--program", default="infer", choices=["infer", "train_forward"])
    ap.add_argument("--traces", help="the safetensors of snn-run --record-output")
    ap.add_argument("--trace-atol", type=float, default=1e-5)
    args = ap.parse_args(argv)
    try:
        mod = Module(args.module)
        weights = read_safetensors(args.weights)[0] if args.weights else None
        mod.initialize(weights, require_given=True)
        x = read_npy(args.input)
        if args.limit is not None:
            T = int(mod.m["time_steps"])
            time_major = x.ndim >= 3 and x.shape[0] == T and \
                x.size // (x.shape[0] * x.shape[1]) == \
                int(np.prod(mod.info(int(mod.m["input"]))["shape"][2:]))
            x = x[:, :args.limit] if time_major else x[:args.limit]
        ok, lines = compare(mod, x, read_npy(args.output), args.rtol, args.program)
        if args.traces:
            ok_traces, more = compare_traces(mod, x,
                                             read_safetensors(args.traces)[0],
                                             args.trace_atol)
            ok, lines = ok and ok_traces, lines + more
    except RefError as e:
        print(f"snnref.compare: error: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
