#!/usr/bin/env python3
"""The layer table and plot of `bench/gpu-sparse.sh layers`: per layer size
N, the forward, the weight gradient (gw) and the input gradient (gx) of a
spike-input linear layer [4096, N] x W[N, N], event-driven vs our dense path
vs dense torch and torch.sparse, against density.

Ours come from `snn-run calibrate` of the layertrainN modules (CUDA graphs,
each path forced, best of 3 rounds): fc1's forward (input density d), fc1's
backward, which is its weight gradient alone (its input is the network's:
no gx), and fc2's backward (gx and gw, the same shapes as fc1); gx is fc2's
backward minus fc1's. The backward's density is that of the banded output
gradient gy, the one the event-driven backward skips zeros of; torch.sparse
makes the spike input sparse instead (sparse_torch.py).
Usage: sparse_layers.py CALIBRATION_DIR TORCH.json OUTDIR"""
import csv
import json
import os
import sys


def ours(path):
    entry = next(iter(json.load(open(path))["entries"].values()))
    layers = entry["layers"]
    rows = []
    for i, d in enumerate(entry["densities"]):
        fwd, gw, both = (layers["fc1"]["forward"], layers["fc1"]["backward"],
                         layers["fc2"]["backward"])
        rows.append({"density": d,
                     "event_fwd_ms": fwd["event_ms"][i], "dense_fwd_ms": fwd["dense_ms"][i],
                     "event_gw_ms": gw["event_ms"][i], "dense_gw_ms": gw["dense_ms"][i],
                     "event_gx_ms": both["event_ms"][i] - gw["event_ms"][i],
                     "dense_gx_ms": both["dense_ms"][i] - gw["dense_ms"][i]})
    return entry["device"], rows


def main():
    cal_dir, torch_json, out = sys.argv[1:4]
    peers = json.load(open(torch_json)) if torch_json != "-" else {"rows": []}
    table, device = [], None
    for n in (1024, 2048, 4096):
        path = os.path.join(cal_dir, f"layertrain{n}.calibration.json")
        if not os.path.exists(path):
            continue
        device, rows = ours(path)
        for r in rows:
            peer = next((p for p in peers["rows"]
                         if p["n"] == n and abs(p["density"] - r["density"]) < 1e-9), {})
            r.update({"n": n}, **{k: v for k, v in peer.items() if k.startswith("torch_")})
            table.append(r)
    if not table:
        sys.exit("sparse_layers.py: no layertrainN.calibration.json in " + cal_dir)
    keys = ["n", "density"] + [k for k in table[0] if k not in ("n", "density")]
    with open(os.path.join(out, "sparse-layers.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        w.writerows(table)
    with open(os.path.join(out, "sparse-layers.md"), "w") as f:
        f.write(f"Spike-input linear layer [4096, N] x W[N, N], {device}; "
                f"torch {peers.get('torch', '?')} on {peers.get('device', '?')}. "
                "ms; speedup = our dense / our event-driven.\n\n")
        f.write("| N | density | fwd event | fwd dense | x | gw event | gw dense | x "
                "| gx event | gx dense | x | torch fwd dense / sparse | torch gw dense / sparse |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for r in table:
            def x(a, b):
                return f"{r[b] / r[a]:.2f}x" if r[a] > 0 and r[b] > 0 else "-"
            tf = (f"{r['torch_dense_fwd_ms']:.3f} / {r['torch_sparse_fwd_ms']:.3f}"
                  if "torch_dense_fwd_ms" in r else "-")
            tg = (f"{r['torch_dense_gw_ms']:.3f} / {r['torch_sparse_gw_ms']:.3f}"
                  if "torch_dense_gw_ms" in r else "-")
            f.write(f"| {r['n']} | {r['density']:g} | {r['event_fwd_ms']:.3f} | {r['dense_fwd_ms']:.3f} | "
                    f"{x('event_fwd_ms', 'dense_fwd_ms')} | {r['event_gw_ms']:.3f} | {r['dense_gw_ms']:.3f} | "
                    f"{x('event_gw_ms', 'dense_gw_ms')} | {r['event_gx_ms']:.3f} | {r['dense_gx_ms']:.3f} | "
                    f"{x('event_gx_ms', 'dense_gx_ms')} | {tf} | {tg} |\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("sparse_layers.py: matplotlib missing, no plot", file=sys.stderr)
        return
    sizes = sorted({r["n"] for r in table})
    fig, axes = plt.subplots(len(sizes), 3, figsize=(15, 4 * len(sizes)), squeeze=False)
    for i, n in enumerate(sizes):
        rows = [r for r in table if r["n"] == n]
        d = [r["density"] * 100 for r in rows]
        for j, (part, title) in enumerate((("fwd", "forward"), ("gw", "weight gradient"),
                                           ("gx", "input gradient"))):
            ax = axes[i][j]
            ax.plot(d, [r[f"event_{part}_ms"] for r in rows], "o-", label="ours, event-driven")
            ax.plot(d, [r[f"dense_{part}_ms"] for r in rows], "s-", label="ours, dense (cuBLAS)")
            if f"torch_dense_{part}_ms" in rows[0]:
                ax.plot(d, [r[f"torch_dense_{part}_ms"] for r in rows], "^--", label="torch dense")
            if f"torch_sparse_{part}_ms" in rows[0]:
                ax.plot(d, [r[f"torch_sparse_{part}_ms"] for r in rows], "v--",
                        label="torch.sparse (CSR of the spikes)")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("density % (forward: input spikes; backward: output gradient)")
            ax.set_ylabel("ms")
            ax.set_title(f"N = {n}: {title}")
            ax.grid(True, which="both", alpha=0.3)
            if i == 0 and j == 0:
                ax.legend(fontsize=8)
    fig.suptitle(f"Spike-input linear layer [4096, N] x W[N, N], {device}")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "sparse-layers.png"), dpi=90)


if __name__ == "__main__":
    main()
