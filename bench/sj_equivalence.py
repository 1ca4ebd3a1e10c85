#!/usr/bin/env python3
"""Golden training-step data from SpikingJelly, for test/Runtime/sj-equivalence.test.

    python3 bench/sj_equivalence.py OUT [--device cpu|cuda] [--peers-dir .peers]

Builds two multi-step networks with SpikingJelly (LIFNode tau=2, decay_input,
v_th=1, hard reset to 0, sigmoid surrogate alpha=4, detach_reset=False,
backend torch) with seeded weights and time-varying random input, runs one
training step (CE of softmax(mean_t output), mean over the batch) and writes
for each of OUT/mlp and OUT/conv:

    weights.safetensors  parameters and BN buffers by name (float32)
    x.npy [T,B,...]      the input, labels.npy [B] (int32)
    spikes.safetensors   every LIF layer's output spikes [T,B,...]
    loss.npy []          the loss
    grads.safetensors    "grad:<name>" of every parameter
    meta.json            sizes, spike rates, versions, device

mlp:  784-128-10 (Linear+LIF, Linear+LIF)
conv: conv3x3(1->8)+BN+LIF, maxpool2, conv3x3(8->16)+BN+LIF, maxpool2,
      flatten, linear(784->10)+LIF; BN in training mode (statistics over T*B).

The same networks in MLIR are test/Runtime/Inputs/sj/{mlp,conv}.mlir; the
test compiles them with --snn-autodiff and compares `snn-run grads` with these
files. TF32 is off: the golden data is plain fp32.
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

from snnref.tensorio import write_npy, write_safetensors  # noqa: E402

T, B, HIDDEN, SEED = 4, 8, 128, 1234
TAU, V_TH, ALPHA = 2.0, 1.0, 4.0


def build(kind):
    import torch.nn as nn
    from spikingjelly.activation_based import layer, neuron, surrogate

    def lif():
        return neuron.LIFNode(tau=TAU, decay_input=True, v_threshold=V_TH, v_reset=0.0,
                              surrogate_function=surrogate.Sigmoid(alpha=ALPHA),
                              detach_reset=False, step_mode="m", backend="torch")
    if kind == "mlp":
        net = nn.ModuleDict(dict(fc1=layer.Linear(784, HIDDEN, step_mode="m"), lif1=lif(),
                                 fc2=layer.Linear(HIDDEN, 10, step_mode="m"), lif2=lif()))
        gains = {"fc1": 4.0, "fc2": 3.0}
    else:
        net = nn.ModuleDict(dict(
            conv1=layer.Conv2d(1, 8, 3, padding=1, bias=False, step_mode="m"),
            bn1=layer.BatchNorm2d(8, step_mode="m"), lif1=lif(),
            pool1=layer.MaxPool2d(2, 2, step_mode="m"),
            conv2=layer.Conv2d(8, 16, 3, padding=1, bias=False, step_mode="m"),
            bn2=layer.BatchNorm2d(16, step_mode="m"), lif2=lif(),
            pool2=layer.MaxPool2d(2, 2, step_mode="m"),
            flatten=layer.Flatten(step_mode="m"),
            fc=layer.Linear(16 * 7 * 7, 10, step_mode="m"), lif3=lif()))
        gains = {"fc": 3.0}
    return net, gains


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--peers-dir", default=".peers",
                    help="folder holding SpikingJelly's source")
    args = ap.parse_args()
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, os.path.abspath(args.peers_dir))
    try:
        import spikingjelly
    except ImportError as e:
        sys.exit(f"error: SpikingJelly does not import from {args.peers_dir} ({e})")
    dev = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for kind in ("mlp", "conv"):
        torch.manual_seed(SEED)
        net, gains = build(kind)
        with torch.no_grad():
            for name, g in gains.items():
                net[name].weight.mul_(g)  # enough spikes in every layer
        net = net.to(dev).train()
        weights = {n: p.detach().float().cpu().numpy().copy()
                   for n, p in net.named_parameters()}
        for n, b in net.named_buffers():
            if "running" in n:  # before the step: what the module starts from
                weights[n] = b.detach().float().cpu().numpy().copy()
        shape = (T, B, 784) if kind == "mlp" else (T, B, 1, 28, 28)
        x = torch.rand(shape, device=dev)
        labels = torch.randint(0, 10, (B,), device=dev)
        y, spikes = x, {}
        for name, m in net.items():
            y = m(y)
            if name.startswith("lif"):
                spikes[name] = y
        loss = F.cross_entropy(y.mean(0), labels)
        loss.backward()
        d = os.path.join(args.out, kind)
        os.makedirs(d, exist_ok=True)
        cpu = lambda t: t.detach().float().cpu().numpy()
        write_safetensors(os.path.join(d, "weights.safetensors"), weights)
        write_safetensors(os.path.join(d, "grads.safetensors"),
                          {f"grad:{n}": cpu(p.grad) for n, p in net.named_parameters()})
        write_safetensors(os.path.join(d, "spikes.safetensors"),
                          {n: cpu(s) for n, s in spikes.items()})
        write_npy(os.path.join(d, "x.npy"), cpu(x))
        write_npy(os.path.join(d, "labels.npy"), labels.cpu().numpy().astype(np.int32))
        write_npy(os.path.join(d, "loss.npy"), np.array(loss.item(), dtype=np.float32))
        rates = {n: float(s.mean()) for n, s in spikes.items()}
        meta = dict(kind=kind, T=T, B=B, hidden=HIDDEN, seed=SEED, gains=gains,
                    rates=rates, device=str(dev), torch=torch.__version__,
                    spikingjelly=getattr(spikingjelly, "__version__", "source"))
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        print(f"{kind} ({dev}): loss {loss.item():.6f}, spike rates "
              + ", ".join(f"{n} {r:.3f}" for n, r in rates.items()) + f" -> {d}")


if __name__ == "__main__":
    main()
