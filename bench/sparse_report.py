#!/usr/bin/env python3
"""A table (CSV), a summary (speedups over our dense path, the measured
crossover per layer size) and a time-vs-density plot (CUDA-graph times) from
bench/gpu-sparse.sh's raw output.
Usage: sparse_report.py RAW TORCH.json|- OUTDIR [PREFIX]
(files PREFIX-results.csv, PREFIX-summary.txt, PREFIX-layer.png; default
PREFIX sparse)

RAW holds blocks "== [graphs ]MODULE density=D" followed by `snn-run bench`
output: its JSON line (fwd_ms, step_ms) and, with --profile, per-op lines
"  KIND  ms  %  calls  us/call" per program."""
import json
import re
import sys
from collections import defaultdict


def parse(raw):
    rows, cur = [], None
    program = None
    for line in open(raw):
        m = re.match(r"== (graphs )?(\S+) density=(\S+)", line)
        if m:
            cur = {"module": m.group(2), "density": float(m.group(3)),
                   "graphs": bool(m.group(1)), "ops_us": defaultdict(float)}
            rows.append(cur)
            continue
        if cur is None:
            continue
        if line.startswith("{"):
            try:
                cur.update(json.loads(line))
            except ValueError:
                pass
            continue
        m = re.match(r"snnrt profile \((\S+)\) (\S+):", line)
        if m:
            program = m.group(2)
            continue
        m = re.match(r"\s+(.+?)\s+([\d.]+) ms\s+[\d.]+%\s+(\d+) calls\s+([\d.]+) us/call", line)
        if m and program:
            kind = re.sub(r"snn_op\d+_", "", m.group(1))
            cur["ops_us"][f"{program}:{kind}"] += float(m.group(4)) * int(m.group(3))
            cur.setdefault("calls", {})[f"{program}:{kind}"] = int(m.group(3))
    return rows


def main():
    raw, torch_json, outdir = sys.argv[1:4]
    prefix = sys.argv[4] if len(sys.argv) > 4 else "sparse"
    rows = parse(raw)
    table = []
    for r in rows:
        entry = {"module": r["module"], "density": r["density"], "graphs": r["graphs"],
                 "fwd_ms": r.get("fwd_ms"), "step_ms": r.get("step_ms"),
                 "device": r.get("device")}
        if not r["graphs"]:
            # Per call of the infer program: the dense GEMM and the
            # event-driven kernels (density + transpose + event_linear).
            calls = max([c for k, c in r.get("calls", {}).items() if k.startswith("infer:")] or [1])
            ops = {k: v / calls for k, v in r["ops_us"].items() if k.startswith("infer:")}
            entry["dense_gemm_us"] = ops.get("infer:linear")
            ev = [ops.get(f"infer:kernel {k}") for k in ("spike_density", "transpose_weight", "event_linear")]
            entry["event_path_us"] = sum(v for v in ev if v) if any(ev) else None
            entry["event_parts_us"] = ev
        table.append(entry)
    for e in table:  # density, transpose, event_linear in us, ";"-separated
        parts = e.pop("event_parts_us", None)
        e["event_parts_us"] = ";".join("" if v is None else f"{v:.1f}" for v in parts) if parts and any(parts) else None
    keys = ["module", "density", "graphs", "fwd_ms", "step_ms", "dense_gemm_us", "event_path_us",
            "event_parts_us"]
    with open(f"{outdir}/{prefix}-results.csv", "w") as f:
        f.write(",".join(keys) + "\n")
        for e in table:
            f.write(",".join("" if e.get(k) is None else str(e.get(k)) for k in keys) + "\n")
    for e in table:
        print(" ".join(f"{k}={e.get(k)}" for k in keys))
    torch_rows = json.load(open(torch_json))["rows"] if torch_json != "-" else []
    summary = summarize(table)
    with open(f"{outdir}/{prefix}-summary.txt", "w") as f:
        f.write("\n".join(summary) + "\n")
    print("\n".join(summary))
    plot(table, torch_rows, f"{outdir}/{prefix}-layer.png")


def graph_times(table, key):
    """{(module, density): key} of the CUDA-graph runs."""
    return {(e["module"], e["density"]): e[key] for e in table
            if e["graphs"] and e.get(key) is not None and e[key] >= 0}


def summarize(table):
    """Speedups over our dense path, per network and density, and the
    measured crossover of each layer size (the largest density at which the
    event-driven layer is faster than the dense one)."""
    lines = []
    steps = graph_times(table, "step_ms")
    fwds = graph_times(table, "fwd_ms")
    nets = sorted({m.rsplit("-", 1)[0] for m, _ in steps})
    for net in nets:
        for d in sorted({d for m, d in steps if m.startswith(net + "-")}):
            dense = steps.get((f"{net}-dense", d))
            parts = [f"{net} density={d:g} step_ms dense={dense}"]
            for v in ("dispatch", "event"):
                t = steps.get((f"{net}-{v}", d))
                if t is not None:
                    ratio = f" ({dense / t:.2f}x)" if dense else ""
                    parts.append(f"{v}={t}{ratio}")
            fd = fwds.get((f"{net}-dense", d))
            for v in ("dispatch", "event"):
                t = fwds.get((f"{net}-{v}", d))
                if t is not None and fd:
                    parts.append(f"fwd {v} {fd / t:.2f}x")
            lines.append(" ".join(parts))
    layers = sorted({m.split("-")[0] for m, _ in fwds if m.startswith("layer")},
                    key=lambda m: int(re.search(r"\d+", m).group()))
    for layer in layers:
        faster = [d for (m, d), t in fwds.items() if m == f"{layer}-event"
                  and fwds.get((f"{layer}-dense", d)) and t < fwds[(f"{layer}-dense", d)]]
        row = [f"{layer} fwd_ms"]
        for d in sorted({d for m, d in fwds if m.startswith(layer + "-")}):
            row.append(f"d={d:g}: " + "/".join(
                f"{fwds.get((f'{layer}-{v}', d), float('nan')):.3f}"
                for v in ("dense", "event", "dispatch", "dispatch-nocond")))
        lines.append(" ".join(row) + "  (dense/event/dispatch/dispatch without "
                     "the conditional node; nan: not run)")
        lines.append(f"{layer} measured crossover: event faster than dense up to density "
                     f"{max(faster):g}" if faster else f"{layer}: event never faster than dense")
    return lines


def plot(table, torch_rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib absent: no plot (the CSV has the numbers)")
        return
    fwds = graph_times(table, "fwd_ms")
    sizes = sorted({int(re.search(r"\d+", m).group()) for m, _ in fwds if m.startswith("layer")})
    if not sizes:
        return
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 4), squeeze=False)
    for ax, n in zip(axes[0], sizes):
        for v, style, label in (("dense", "s--", "ours dense (cuBLAS)"),
                                ("event", "o-", "ours event-driven"),
                                ("dispatch", "d-.", "ours dispatch")):
            pts = sorted((d, t) for (m, d), t in fwds.items() if m == f"layer{n}-{v}")
            if pts:
                ax.plot(*zip(*pts), style, label=label)
        for key, style, label in (("torch_dense_fwd_ms", "x:", "torch dense"),
                                  ("torch_sparse_fwd_ms", "^:", "torch.sparse CSR")):
            pts = sorted((t["density"], t[key]) for t in torch_rows if t["n"] == n)
            if pts:
                ax.plot(*zip(*pts), style, label=label)
        ax.set_xscale("log"), ax.set_yscale("log")
        ax.set_xlabel("input density"), ax.set_ylabel("forward ms (CUDA graphs)")
        ax.set_title(f"spikes [4096, {n}] x W[{n}, {n}]^T")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
