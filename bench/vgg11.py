#!/usr/bin/env python3
"""Spiking VGG-11 on 32x32 input (CIFAR size), T = 4, batch 64, fp32 with TF32
allowed: ms per training step (forward, cross-entropy on the time-mean output,
backward, SGD update) and per forward (eval mode, no grad), peak memory.

Every variant runs the same stateless layers (conv3x3+BN over T*B samples,
2x2 average pooling, a linear classifier); they differ in the LIF layer:
PyTorch eager loop, torch.compile of the whole model, SpikingJelly's
LIFNode(step_mode='m') with the cupy or triton backend. Ours: --ours CMD
printing {"fwd_ms": .., "step_ms": .., "peak_mb": ..} (one JSON line).
"""

import argparse
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import common
from lif_layer import ALPHA, TAU, V_TH, lif_loop_compilable

CFG = [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"]


class TorchLIF(nn.Module):
    """Multi-step LIF over [T, B, ...] (straight-through sigmoid surrogate)."""

    def forward(self, x):
        return lif_loop_compilable(x)


class SpikingVGG11(nn.Module):
    def __init__(self, make_lif, T, num_classes=10, quick=False):
        super().__init__()
        self.T = T
        cfg = [16, "M", 32, "M", "M", "M", "M"] if quick else CFG
        layers, c = [], 3
        self.lifs = nn.ModuleList()
        for v in cfg:
            if v == "M":
                layers.append(("pool", nn.AvgPool2d(2)))
            else:
                lif = make_lif()
                self.lifs.append(lif)
                layers += [("conv", nn.Conv2d(c, v, 3, padding=1, bias=False)),
                           ("bn", nn.BatchNorm2d(v)), ("lif", lif)]
                c = v
        self.layers = nn.ModuleList(m for _, m in layers)
        self.kinds = [k for k, _ in layers]
        self.fc = nn.Linear(c, num_classes)

    def forward(self, x):  # x: [T, B, 3, 32, 32]
        T, B = x.shape[:2]
        y = x.flatten(0, 1)
        for kind, m in zip(self.kinds, self.layers):
            if kind == "lif":
                y = m(y.unflatten(0, (T, B))).flatten(0, 1)
            else:
                y = m(y)
        return self.fc(y.flatten(1)).unflatten(0, (T, B))


def sj_lif(sj, backend, dev):
    neuron, surrogate, _ = sj
    return lambda: neuron.LIFNode(tau=TAU, decay_input=True, v_threshold=V_TH,
                                  v_reset=0.0, surrogate_function=surrogate.Sigmoid(alpha=ALPHA),
                                  detach_reset=False, step_mode="m", backend=backend)


def variants(dev, peers_dir):
    out = {"torch eager": (lambda: TorchLIF(), False),
           "torch.compile": (lambda: TorchLIF(), True)}
    missing = {}
    sj, why = common.import_spikingjelly(peers_dir)
    for backend in ("cupy", "triton"):
        if sj is None:
            missing[f"SJ {backend}"] = why
        elif dev.type != "cuda":
            missing[f"SJ {backend}"] = "needs a CUDA device"
        else:
            out[f"SJ {backend}"] = (sj_lif(sj, backend, dev), False)
    return out, missing


def measure(make_lif, compiled, dev, T, B, quick, repeat, x, labels):
    torch.manual_seed(0)
    model = SpikingVGG11(make_lif, T, quick=quick).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    fwd = torch.compile(model) if compiled else model

    def reset():
        for lif in model.lifs:
            if hasattr(lif, "reset"):
                lif.reset()

    def step():
        reset()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(fwd(x).mean(0), labels)
        loss.backward()
        opt.step()
        return loss

    def infer():
        reset()
        with torch.no_grad():
            return fwd(x)

    row = {}
    model.train()
    common.reset_peak(dev)
    row["step_ms"] = common.time_ms(step, dev, repeat)
    row["step_peak_mb"] = common.peak_mb(dev)
    row["loss"] = float(step())
    model.eval()
    common.reset_peak(dev)
    row["fwd_ms"] = common.time_ms(infer, dev, repeat)
    row["fwd_peak_mb"] = common.peak_mb(dev)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_common_args(ap)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--only", metavar="PEERS",
                    help="comma-separated peers to run (e.g. 'torch.compile'); "
                         "default all")
    ap.add_argument("--tf32", choices=["on", "off"], default="on",
                    help="TF32 tensor cores for convolutions and GEMMs, for the "
                         "peers (PyTorch flags) and ours (SNNRT_CUDA_TF32)")
    args = ap.parse_args()
    tf32 = args.tf32 == "on"
    os.environ["SNNRT_CUDA_TF32"] = "1" if tf32 else "0"
    dev = common.setup_device(args.device, tf32)
    T, B = (2, 4) if args.quick else (args.steps, args.batch)
    repeat = args.repeat or (2 if args.quick else 20)
    name = common.device_name(dev)
    torch.manual_seed(0)
    x = torch.rand(T, B, 3, 32, 32, device=dev)
    labels = torch.randint(0, 10, (B,), device=dev)

    impls, missing = variants(dev, args.peers_dir)
    if args.only:
        wanted = [p.strip() for p in args.only.split(",")]
        impls = {p: v for p, v in impls.items() if p in wanted}
        missing = {p: why for p, why in missing.items() if p in wanted}
    for p, why in missing.items():
        print(f"{p}: skipped ({why})", file=sys.stderr)
    results = {}
    if args.ours:
        try:
            o = common.run_ours(args.ours, T=T, B=B)[-1]
            results["ours"] = {"step_ms": o.get("step_ms"), "fwd_ms": o.get("fwd_ms"),
                               "step_peak_mb": o.get("mem_mb")}
        except RuntimeError as e:
            results["ours"] = {"error": str(e)[:300]}
    for p, (make_lif, compiled) in impls.items():
        try:
            results[p] = measure(make_lif, compiled, dev, T, B, args.quick, repeat, x, labels)
        except Exception as e:  # noqa: BLE001 - report and go on
            results[p] = {"error": repr(e)[:300]}
        print(p, json.dumps(results[p]), flush=True)

    order = ["ours"] + list(impls)
    ours = results.get("ours", {})
    body = []
    for p in order:
        r = results.get(p, {})
        ratio = lambda k: (f"{ours[k] / r[k]:.2f}" if ours.get(k) and r.get(k) and p != "ours"
                           else "-")
        body.append([p, common.fmt(r.get("step_ms")), common.fmt(r.get("fwd_ms")),
                     common.fmt(r.get("step_peak_mb"), 0), common.fmt(r.get("fwd_peak_mb"), 0),
                     ratio("step_ms"), ratio("fwd_ms"), r.get("error", "")])
    date = __import__("datetime").date.today().isoformat()
    md = "\n".join([
        f"# Spiking VGG-11, 32x32, T={T}, batch {B}, TF32 {args.tf32} — {name}, {date}", "",
        f"`bench/vgg11.py`: training step = forward + CE(mean_t output) + backward + SGD "
        f"(momentum 0.9); forward = eval mode, no grad. Medians of {repeat} runs.", "",
        common.markdown_table(["impl", "step ms", "fwd ms", "step peak MB", "fwd peak MB",
                               "ours/peer step", "ours/peer fwd", "error"], body), ""])
    print(md)
    stem = common.write_results(args.out, f"vgg11-tf32-{args.tf32}", name,
                                dict(T=T, batch=B, repeat=repeat, results=results,
                                     skipped=missing), md)
    print(f"wrote {stem}.json and {stem}.md")


if __name__ == "__main__":
    main()
