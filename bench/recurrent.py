#!/usr/bin/env python3
"""The recurrent SHD-sized network of examples/recurrent.mlir (T = 100, batch
32, 700 inputs, 128 recurrent LIF neurons, a 20-class leaky-integrator
readout): snn-run against PyTorch in the same process, forward and (with
--train-module, the example compiled with --snn-autodiff) training.

1. Correctness on the device: the same weights (a safetensors file) and input
   go to `snn-run MODULE infer --device cuda` and to the PyTorch model in
   float32 (TF32 off); prints how many readout values agree and the largest
   difference (a spike flipped by rounding near the threshold feeds back
   through the recurrence, so equality is reported, not assumed).
2. Time per forward: PyTorch eager, torch.compile (default and
   reduce-overhead, i.e. CUDA graphs), and ours (`snn-run MODULE bench`).
   The work is 100 dependent steps of a 32x128x128 GEMM and an elementwise
   LIF step: latency-bound, so the floor is reported as time per step.

3. Training (--train-module): one SGD step (momentum 0.9) on the
   cross-entropy of the time-mean readout membrane, BPTT through the
   recurrence with the sigmoid surrogate (alpha 4), in PyTorch and with
   `snn-run grads` on the same weights, input and labels: the loss and every
   gradient are compared (normwise relative error), then the step is timed
   (torch eager, torch.compile, ours from `snn-run bench`) with peak memory.

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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from snnref.tensorio import read_safetensors, write_safetensors  # noqa: E402

T, B, IN, H, OUT = 100, 32, 700, 128, 20
K, C, V_TH, K_OUT = 0.05, 1.0, 1.0, 0.1  # examples/recurrent.mlir


def spike(h):
    """S = H >= v_th; in backward the sigmoid surrogate (alpha 4), written
    straight-through so that torch.compile traces it."""
    u = h - V_TH
    sg = torch.sigmoid(4.0 * u)
    return (u >= 0).to(h.dtype).detach() + sg - sg.detach()


def forward(x, w_in, w_rec, w_out):
    """x [T, B, IN] -> readout membranes [T, B, OUT] (soft reset, S = H >= 1)."""
    i_in = x @ w_in.t()
    v = torch.zeros(x.shape[1], H, device=x.device, dtype=x.dtype)
    s = torch.zeros_like(v)
    spikes = []
    for t in range(x.shape[0]):
        h = v + K * (0.0 - v) + C * (i_in[t] + s @ w_rec.t())
        s = spike(h)
        v = h - V_TH * s
        spikes.append(s)
    y = torch.stack(spikes) @ w_out.t()
    m = torch.zeros(x.shape[1], OUT, device=x.device, dtype=x.dtype)
    out = []
    for t in range(x.shape[0]):
        m = m + K_OUT * (0.0 - m) + y[t]
        out.append(m)
    return torch.stack(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.add_common_args(ap)
    ap.add_argument("--run", required=True, help="the snn-run binary")
    ap.add_argument("--module", required=True, help="examples/recurrent.mlir compiled")
    ap.add_argument("--train-module",
                    help="examples/recurrent.mlir compiled with --snn-autodiff="
                         "\"optimizer=sgd lr=0.01 momentum=0.9\"")
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
    write_safetensors(wfile, {"rec.input.weight": w_in.numpy().astype(np.float32),
                              "rec.recurrent.weight": w_rec.numpy().astype(np.float32),
                              "readout.weight": w_out.numpy().astype(np.float32)})
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
    payload = {"peers_ms": rows, "ours_ms": ms, "correctness": agree, "T": T, "B": B}
    if args.train_module:
        train_md, payload["train"] = train(args, dev, dev_arg, repeat, work, x,
                                           (w_in, w_rec, w_out))
        md += "\n" + train_md
    print(md)
    common.write_results(args.out, "recurrent", name, payload, md)


def train(args, dev, dev_arg, repeat, work, x, weights):
    """Gradients against PyTorch's, then the training step's time and memory."""
    g = torch.Generator().manual_seed(1)
    labels = torch.randint(0, OUT, (B,), generator=g)
    lfile, gfile = os.path.join(work, "y.npy"), os.path.join(work, "g.safetensors")
    np.save(lfile, labels.numpy())
    wfile, xfile = os.path.join(work, "w.safetensors"), os.path.join(work, "x.npy")
    subprocess.run([args.run, args.train_module, "grads", "--device", dev_arg,
                    "--weights", wfile, "--data", xfile, "--labels", lfile,
                    "--output", gfile], check=True, stdout=subprocess.DEVNULL)
    ours = read_safetensors(gfile)[0]
    names = ("rec.input.weight", "rec.recurrent.weight", "readout.weight")
    ws = [w.to(dev).clone().requires_grad_(True) for w in weights]
    xd, yd = x.to(dev), labels.to(dev)

    def loss_of(ws):
        m = forward(xd, *ws).mean(0)
        return torch.nn.functional.cross_entropy(m, yd)

    loss = loss_of(ws)
    loss.backward()
    rel = {"loss": abs(float(ours["loss"].reshape(())) - float(loss)) / abs(float(loss))}
    for n, w in zip(names, ws):
        ref = w.grad.cpu().numpy()
        rel[n] = float(np.linalg.norm(ours["grad:" + n].reshape(ref.shape) - ref)
                       / max(np.linalg.norm(ref), 1e-30))
    print("train correctness (relative to PyTorch):", json.dumps(rel))

    params = [w.detach().clone().requires_grad_(True) for w in weights]
    params = [p.to(dev).detach().requires_grad_(True) for p in params]
    opt = torch.optim.SGD(params, lr=1e-6, momentum=0.9)

    def step(fn):
        def run():
            opt.zero_grad(set_to_none=True)
            fn(params).backward()
            opt.step()
        return run

    rows, mem = {}, {}
    common.reset_peak(dev)
    rows["torch eager"] = common.time_ms(step(loss_of), dev, repeat)
    mem["torch eager"] = common.peak_mb(dev)
    try:
        compiled = torch.compile(loss_of)
        common.reset_peak(dev)
        rows["torch.compile (default)"] = common.time_ms(step(compiled), dev, repeat, warmup=5)
        mem["torch.compile (default)"] = common.peak_mb(dev)
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"torch.compile training: {e!r}"[:300])
    o = common.run_ours(f"{args.run} {args.train_module} bench --device {dev_arg} "
                        f"--weights {wfile} --iterations {repeat}")[-1]
    ms = o["step_ms"]
    table = [[k, common.fmt(v), common.fmt(v / ms, 2) + "x", common.fmt(mem[k], 0)]
             for k, v in rows.items()]
    table.append(["snn-mlir (snn-run)", common.fmt(ms), "1.00x", common.fmt(o["mem_mb"], 0)])
    md = "Training step (forward, loss, BPTT, SGD):\n\n" + common.markdown_table(
        ["variant", "ms / step", "peer time / ours", "peak MB"], table)
    md += f"\n\nGradients vs PyTorch (relative): {json.dumps(rel)}\n"
    return md, {"peers_ms": rows, "peers_mb": mem, "ours_ms": ms,
                "ours_mb": o["mem_mb"], "rel_vs_torch": rel}


if __name__ == "__main__":
    main()
