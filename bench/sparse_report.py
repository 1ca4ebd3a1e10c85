#!/usr/bin/env python3
"""A table (CSV) and a time-vs-density plot from bench/gpu-sparse.sh's
raw output.  Usage: sparse_report.py RAW TORCH.json|- OUTDIR [PREFIX]
(files PREFIX-results.csv, PREFIX-layer.png; default PREFIX sparse)

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
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib absent: no plot (the CSV has the numbers)")
        return
    layer = [e for e in table if e["module"].startswith("layer") and not e["graphs"]]
    if not layer:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for n in sorted({int(re.search(r"\d+", e["module"]).group()) for e in layer}):
        ev = sorted((e["density"], e["event_path_us"] / 1e3) for e in layer
                    if e["module"] == f"layer{n}-event" and e["event_path_us"])
        de = sorted((e["density"], e["dense_gemm_us"] / 1e3) for e in layer
                    if e["module"] == f"layer{n}-dense" and e["dense_gemm_us"])
        if ev:
            ax.plot(*zip(*ev), "o-", label=f"ours event-driven N={n}")
        if de:
            ax.plot(*zip(*de), "s--", label=f"ours dense (cuBLAS) N={n}")
        ts = sorted((t["density"], t["torch_sparse_fwd_ms"]) for t in torch_rows if t["n"] == n)
        if ts:
            ax.plot(*zip(*ts), "^:", label=f"torch.sparse CSR N={n}")
    ax.set_xscale("log"), ax.set_yscale("log")
    ax.set_xlabel("input density"), ax.set_ylabel("forward time per call (ms)")
    ax.set_title("spike input [4096, N] x W[N, N]^T")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(f"{outdir}/{prefix}-layer.png", dpi=120)


if __name__ == "__main__":
    main()
