#!/usr/bin/env python3
"""The recurrent SHD-sized network of examples/recurrent.mlir (T = 100, batch
32, 700 inputs, 128 recurrent LIF neurons, a 20-class leaky-integrator
readout), forward only: snn-run against PyTorch in the same process.

1. Correctness on the device: the same weights (a safetensors file) and input
   go to `snn-run MODULE infer --device cuda` and to the PyTorch model in
   float32 (TF32 off); prints how many readout values agree and the largest
   difference (a spike flipped by rounding near the threshold feeds back
   through the recurrence, so equality is reported, not assumed).
2. Time per forward: PyTorch eager, torch.compile (default and
   reduce-overhead, i.e. CUDA graphs), and ours (`snn-run MODULE bench`).
   The work is 100 dependent steps of a 32x128x128 GEMM and an elementwise
   LIF step: latency-bound, so the floor is reported as time per step.

SpikingJelly has no recurrent LIF layer with a recurrent weight; it is not a
peer here.
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

import common

T, B, IN, H, OUT = 100, 32, 700, 128, 20
K, C, V_TH, K_OUT = 0.05, 1.0, 1.0, 0.1  # examples/recurrent.mlir


def forward(x, w_in, w_rec, w_out):
    """x [T, B, IN] -> readout membranes [T, B, OUT] (soft reset, S = H >= 1)."""
    i_in = x @ w_in.t()
    v = torch.zeros(x.shape[1], H, device=x.device, dtype=x.dtype)
    s = torch.zeros_like(v)
    spikes = []
    for t in range(x.shape[0]):
        h = v + K * (0.0 - v) + C * (i_in[t] + s @ w_rec.t())
        s = (h >= V_TH).to(h.dtype)
        v = h - V_TH * s
        spikes.append(s)
    y = torch.stack(spikes) @ w_out.t()
    m = torch.zeros(x.shape[1], OUT, device=x.device, dtype=x.dtype)
    out = []
    for t in range(x.shape[0]):
        m = m + K_OUT * (0.0 - m) + y[t]
        out.append(m)
    return torch.stack(out)


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.add_common_args(ap)
    ap.add_argument("--run", required=True, help="the snn-run binary")
    ap.add_argument("--module", required=True, help="examples/recurrent.mlir compiled")
    args = ap.parse_args()
    dev = common.setup_device(args.device, tf32=False)
    name = common.device_name(dev)
    repeat = args.repeat or 50
    g = torch.Generator().manual_seed(0)
    w_in = (torch.rand(H, IN, generator=g) * 2 - 1) / IN ** 0.5 * 3
    w_rec = torch.randn(H, H, generator=g) * 0.05
    w_out = (torch.rand(OUT, H, generator=g) * 2 - 1) / H ** 0.5
    x = (torch.rand(T, B, IN, generator=g) < 0.1).float()  # sparse input spikes

    # 1. Same weights and input through snn-run on the device.
    work = tempfile.mkdtemp()
    wfile, xfile, yfile = (os.path.join(work, f) for f in ("w.safetensors", "x.npy", "y.npy"))
    write_safetensors(wfile, {"rec.input.weight": w_in.numpy(),
                              "rec.recurrent.weight": w_rec.numpy(),
                              "readout.weight": w_out.numpy()})
    np.save(xfile, x.numpy())
    dev_arg = "cuda:0" if dev.type == "cuda" else "cpu"
    subprocess.run([args.run, args.module, "infer", "--device", dev_arg, "--weights", wfile,
                    "--data", xfile, "--output", yfile], check=True, stdout=subprocess.DEVNULL)
    ours = np.load(yfile)
    wd = [w.to(dev) for w in (w_in, w_rec, w_out)]
    xd = x.to(dev)
    with torch.no_grad():
        ref = forward(xd, *wd).cpu().numpy()
        ref64 = forward(x.double(), *(w.double() for w in (w_in, w_rec, w_out))).numpy()
    close = np.isclose(ours, ref, rtol=1e-4, atol=1e-4)
    agree = {
        "torch_fp32_device_close_fraction": float(close.mean()),
        "max_abs_diff_vs_torch_fp32": float(np.max(np.abs(ours - ref))),
        "max_abs_diff_vs_torch_fp64_cpu": float(np.max(np.abs(ours - ref64))),
        "torch_fp32_vs_fp64_max_abs_diff": float(np.max(np.abs(ref - ref64))),
        "readout_range": float(np.max(np.abs(ref64))),
    }
    print("correctness:", json.dumps(agree))

    # 2. Timing.
    with torch.no_grad():
        rows = {"torch eager": common.time_ms(lambda: forward(xd, *wd), dev, repeat)}
        for mode in ("default", "reduce-overhead"):
            try:
                f = torch.compile(forward, mode=mode)
                rows[f"torch.compile ({mode})"] = common.time_ms(lambda: f(xd, *wd), dev, repeat,
                                                                 warmup=5)
            except Exception as e:  # noqa: BLE001 - report and go on
                print(f"torch.compile {mode}: {e!r}"[:300])
    o = common.run_ours(f"{args.run} {args.module} bench --device {dev_arg} "
                        f"--weights {wfile} --iterations {repeat}")[-1]
    ms = o["fwd_ms"]
    fastest = min(rows.values())
    table = [[k, common.fmt(v), common.fmt(v / ms, 2) + "x"] for k, v in rows.items()]
    table.append(["snn-mlir (snn-run)", common.fmt(ms), "1.00x"])
    md = common.markdown_table(["variant", "ms / forward", "peer time / ours"], table)
    md += (f"\n\nT = {T}, batch {B}: ours {1e3 * ms / T:.1f} us per step; "
           f"fastest peer {fastest:.3f} ms ({fastest / ms:.2f}x ours).\n"
           f"Correctness (same weights and input): {json.dumps(agree)}\n")
    print(md)
    common.write_results(args.out, "recurrent", name,
                         {"peers_ms": rows, "ours_ms": ms, "correctness": agree,
                          "T": T, "B": B}, md)


if __name__ == "__main__":
    main()
