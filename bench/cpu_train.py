#!/usr/bin/env python3
"""CPU training step: snn-run on the CPU against PyTorch on the CPU.

    python3 bench/cpu_train.py --snn-run build/runtime/snn-run \
        --mlp MLP.snnmod --convnet CONV.snnmod [--threads 1 16] [--out DIR] \
        [--shd-dense SHD-DENSE.snnmod --shd-event SHD-EVENT.snnmod \
         --densities 0.01 0.05 0.1] [--device-name "2-core CPU"]

The modules are examples/fmnist-mlp.mlir and examples/fmnist-convnet.mlir
compiled with --snn-autodiff="optimizer=adam lr=0.001" (bench/prepare-gpu.sh
writes them to .gpu/mods). PyTorch runs the same networks (LIF tau = 2,
v_th = 1, hard reset, sigmoid surrogate alpha = 4 through a straight-through
form; leaky-integrator readout; cross-entropy on the time-mean membrane;
Adam) eagerly and, where it works, under torch.compile. Both sides get the
same number of threads (torch.set_num_threads; snn-run --threads, which sets
its generated kernels' threads and its GEMMs': OpenBLAS's, or tiles on its
own threads for an event-driven module; OPENBLAS_NUM_THREADS is unset for
it). One training step = forward + loss +
backward + update on one batch of random input already in memory (snn-run
bench: the median of its timed iterations). Prints a Markdown table with
ours/peer ratios and writes it with a JSON copy under --out.

With --shd-dense/--shd-event (bench/gpu-sparse.sh prepare compiles them: the
SHD-layout network 700 -> 1472 LIF -> 1472 LIF -> 20 LI, T = 100, Adam;
dense, and with every linear layer event-driven), also the forward and the
training step of both at each input density (`snn-run bench --density`) and
thread count, and the event-driven/dense ratios.
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

TAU, V_TH, ALPHA = 2.0, 1.0, 4.0


def lif(x):
    """Multi-step LIF over [T, B, ...], as bench/lif_layer.py's compilable form."""
    v, out = torch.zeros_like(x[0]), []
    for t in range(x.shape[0]):
        h = v + (x[t] - v) / TAU
        u = h - V_TH
        sg = torch.sigmoid(ALPHA * u)
        s = (u >= 0).to(x.dtype).detach() + sg - sg.detach()
        v = h * (1 - s)
        out.append(s)
    return torch.stack(out)


def readout(x):
    v, out = torch.zeros_like(x[0]), []
    for t in range(x.shape[0]):
        v = v + (x[t] - v) / TAU
        out.append(v)
    return torch.stack(out)


class MLP(nn.Module):
    T, B, shape = 8, 64, (784,)

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(784, 512), nn.Linear(512, 10)

    def forward(self, x):
        return readout(self.fc2(lif(self.fc1(x))))


class ConvNet(nn.Module):
    T, B, shape = 4, 64, (1, 28, 28)

    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.bn1, self.bn2 = nn.BatchNorm2d(32), nn.BatchNorm2d(32)
        self.fc = nn.Linear(32 * 7 * 7, 10)

    def forward(self, x):
        T, B = x.shape[:2]

        def block(x, conv, bn):
            y = bn(conv(x.flatten(0, 1)))
            s = lif(y.unflatten(0, (T, B)))
            return F.max_pool2d(s.flatten(0, 1), 2).unflatten(0, (T, B))
        x = block(block(x, self.c1, self.bn1), self.c2, self.bn2)
        return readout(self.fc(x.flatten(2)))


def torch_step_ms(cls, compiled, repeat):
    torch.manual_seed(0)
    model = cls()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.rand(cls.T, cls.B, *cls.shape)
    y = torch.randint(0, 10, (cls.B,))
    fwd = torch.compile(model) if compiled else model

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(fwd(x).mean(0), y).backward()
        opt.step()
    return common.time_ms(step, torch.device("cpu"), repeat=repeat, warmup=3)


def ours_bench(snn_run, module, threads, iterations, density=None):
    """snn-run bench's JSON line ({"fwd_ms", "step_ms", ...})."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    env.pop("OPENBLAS_NUM_THREADS", None)
    env.pop("SNN_NUM_THREADS", None)
    cmd = [snn_run, module, "bench", "--device", "cpu", "--threads", str(threads),
           "--iterations", str(iterations)]
    if density is not None:
        cmd += ["--density", str(density)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip())
    line = [l for l in p.stdout.splitlines() if l.startswith("{")][-1]
    return json.loads(line)


def ours_step_ms(snn_run, module, threads, iterations):
    return ours_bench(snn_run, module, threads, iterations)["step_ms"]


def shd_rows(a):
    """Dense vs event-driven SHD network per density and thread count."""
    rows = []
    for n in a.threads:
        for d in a.densities:
            row = {"threads": n, "density": d}
            for name, module in (("dense", a.shd_dense), ("event", a.shd_event)):
                r = ours_bench(a.snn_run, module, n, a.shd_iterations, d)
                row[f"{name}_fwd_ms"], row[f"{name}_step_ms"] = r["fwd_ms"], r["step_ms"]
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--snn-run", required=True)
    ap.add_argument("--mlp", required=True)
    ap.add_argument("--convnet", required=True)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count()])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--out", default=None)
    ap.add_argument("--shd-dense", default=None)
    ap.add_argument("--shd-event", default=None)
    ap.add_argument("--densities", type=float, nargs="+", default=[0.01, 0.05, 0.1])
    ap.add_argument("--shd-iterations", type=int, default=2)
    ap.add_argument("--skip-torch-models", action="store_true",
                    help="only the SHD network (no MLP/conv net comparison)")
    ap.add_argument("--device-name", default=None,
                    help="how the results name the machine (default: the CPU model)")
    a = ap.parse_args()
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    if a.device_name:
        cpu = f"{a.device_name} ({cpu})"
    rows = []
    models = (("MLP 784-512-10, T=8, B=64", MLP, a.mlp),
              ("conv net (2x conv-BN-LIF-pool), T=4, B=64", ConvNet, a.convnet))
    for name, cls, module in ([] if a.skip_torch_models else models):
        for n in a.threads:
            torch.set_num_threads(n)
            row = {"model": name, "threads": n,
                   "ours_ms": ours_step_ms(a.snn_run, module, n, a.repeat),
                   "torch_eager_ms": torch_step_ms(cls, False, a.repeat)}
            if not a.no_compile:
                try:
                    row["torch_compile_ms"] = torch_step_ms(cls, True, a.repeat)
                except Exception as e:  # noqa: BLE001 - report and go on
                    row["torch_compile_error"] = repr(e)[:200]
            rows.append(row)
            print(json.dumps(row), flush=True)
    date = datetime.date.today().isoformat()
    lines = [f"# CPU training step: snn-run vs PyTorch {torch.__version__} on the CPU — {cpu}, {date}", "",
             "`bench/cpu_train.py`: forward + CE + backward + Adam on one random batch; medians.", "",
             "| model | threads | ours ms | torch eager ms | torch.compile ms | ours/eager | ours/compile |",
             "|---|---|---|---|---|---|---|"]
    fmt = lambda v: f"{v:.2f}" if v else "-"  # noqa: E731
    for r in rows:
        c = r.get("torch_compile_ms")
        lines.append(f"| {r['model']} | {r['threads']} | {fmt(r['ours_ms'])} | "
                     f"{fmt(r['torch_eager_ms'])} | {fmt(c)} | "
                     f"{fmt(r['ours_ms'] / r['torch_eager_ms'])} | "
                     f"{fmt(c and r['ours_ms'] / c)} |")
    shd = shd_rows(a) if a.shd_dense and a.shd_event else []
    if shd:
        lines += ["", "SHD-layout network (700 -> 1472 LIF -> 1472 LIF -> 20 LI, T=100, Adam; "
                  "batch as compiled), input spikes at the given density (`snn-run bench "
                  "--density`); event = every linear layer event-driven (`--snn-sparsify "
                  "crossover=1`), its backward dense (OpenBLAS).", "",
                  "| threads | input density | dense fwd ms | event fwd ms | fwd speedup | "
                  "dense step ms | event step ms | step speedup |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in shd:
            lines.append(f"| {r['threads']} | {r['density']:g} | {r['dense_fwd_ms']:.1f} | "
                         f"{r['event_fwd_ms']:.1f} | {r['dense_fwd_ms'] / r['event_fwd_ms']:.2f}x | "
                         f"{r['dense_step_ms']:.1f} | {r['event_step_ms']:.1f} | "
                         f"{r['dense_step_ms'] / r['event_step_ms']:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        base = os.path.join(a.out, f"{date}-cpu-train")
        with open(base + ".md", "w") as f:
            f.write(text)
        with open(base + ".json", "w") as f:
            json.dump({"cpu": cpu, "torch": torch.__version__, "rows": rows, "shd": shd}, f,
                      indent=1)


if __name__ == "__main__":
    main()
