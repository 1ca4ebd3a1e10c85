#!/usr/bin/env python3
"""Fashion-MNIST MLP training epoch with SpikingJelly (peers of `snn-run train`).

    python3 bench/fmnist_epoch.py DATA_DIR [--backend cupy torch triton] [--epochs 1]

The network and settings of examples/fmnist-mlp.mlir: 784-512-10, LIFNode
(tau = 2, decay_input, v_th = 1, hard reset to 0, Sigmoid(alpha = 4)), a
leaky-integrator readout (k = c = 0.5, the time-mean membrane is the class
score), T = 8 direct input, batch 64, Adam lr 1e-3, cross-entropy, seeded
shuffle. The whole training set is put on the GPU first (the peers pay no
host-side data cost; snn-run encodes each batch on the host). Prints one JSON
line per backend: epoch seconds (training only), samples/s, test accuracy.
"""

import argparse
import gzip
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

T, B = 8, 64


def read_idx(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(d, split):
    def find(kind):
        for ext in (".gz", ""):
            p = os.path.join(d, f"{split}-{kind}-idx{3 if kind == 'images' else 1}-ubyte{ext}")
            if os.path.exists(p):
                return p
        sys.exit(f"error: no {split} {kind} in {d}")
    x = read_idx(find("images")).reshape(-1, 784).astype(np.float32) / 255.0
    return x, read_idx(find("labels")).astype(np.int64)


class Readout(nn.Module):
    """Leaky integrator over [T, B, C]: H = V + k (0 - V) + c X."""

    def forward(self, x):
        v, out = torch.zeros_like(x[0]), []
        for t in range(x.shape[0]):
            v = v - 0.5 * v + 0.5 * x[t]
            out.append(v)
        return torch.stack(out)


def build(sj, backend):
    neuron, surrogate, layer = sj
    return nn.Sequential(
        layer.Linear(784, 512, step_mode="m"),
        neuron.LIFNode(tau=2.0, decay_input=True, v_threshold=1.0, v_reset=0.0,
                       surrogate_function=surrogate.Sigmoid(alpha=4.0),
                       detach_reset=False, step_mode="m", backend=backend),
        layer.Linear(512, 10, step_mode="m"), Readout())


def run(sj, backend, data, epochs, dev):
    from spikingjelly.activation_based import functional
    torch.manual_seed(0)
    net = build(sj, backend).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    xtr, ytr, xte, yte = data
    n = xtr.shape[0] // B * B
    seconds = []
    for epoch in range(epochs):
        net.train()
        order = torch.randperm(xtr.shape[0], device=dev)[:n]
        torch.cuda.synchronize()
        start = time.perf_counter()
        for i in range(0, n, B):
            idx = order[i:i + B]
            x = xtr[idx].unsqueeze(0).expand(T, -1, -1)
            functional.reset_net(net)
            loss = F.cross_entropy(net(x).mean(0), ytr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
    net.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, xte.shape[0], 1000):
            functional.reset_net(net)
            x = xte[i:i + 1000].unsqueeze(0).expand(T, -1, -1)
            correct += int((net(x).mean(0).argmax(1) == yte[i:i + 1000]).sum())
    return {"backend": backend, "epoch_s": min(seconds), "samples_per_s": n / min(seconds),
            "test_acc": correct / xte.shape[0], "epochs": epochs}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    ap.add_argument("--backend", nargs="+", default=["cupy", "torch"])
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--peers-dir", default=".peers")
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.peers_dir))
    from spikingjelly.activation_based import layer, neuron, surrogate
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    xtr, ytr = load(args.data, "train")
    xte, yte = load(args.data, "t10k")
    data = [torch.from_numpy(a).to(dev) for a in (xtr, ytr, xte, yte)]
    for backend in args.backend:
        try:
            r = run((neuron, surrogate, layer), backend, data, args.epochs, dev)
        except Exception as e:  # noqa: BLE001 - report and go on
            r = {"backend": backend, "error": repr(e)[:300]}
        r["device"] = torch.cuda.get_device_name(dev)
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
