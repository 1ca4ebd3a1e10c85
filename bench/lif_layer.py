#!/usr/bin/env python3
"""One LIF layer, 2^27 neuron-steps, fp32: snn-mlir's compiled kernels against
PyTorch eager, torch.compile and SpikingJelly (torch, cupy, triton backends),
all in one process on one GPU.

Ours are the kernels that `snn-opt --snn-dump-neuron-kernels` generated from
MLIR (NVVM -> cubin), built beforehand with
`test/Conversion/NeuronToGPU/Inputs/neuron_kernels_gpu.py build DIR`; they are
loaded with CuPy and launched by name, as the runtime launches them.

LIF: tau = 2, decay_input (k = c = 1/2), v_th = 1, hard reset to 0, sigmoid
surrogate alpha = 4, detach_reset = False (SpikingJelly's defaults).

Floors (bytes that must move / measured device copy bandwidth):
  forward (inference): read X, write S             8 B per neuron-step
  forward + backward: X, S, H out; gS, H in; gX out 24 B per neuron-step

"ours reduced" are the same kernels generated with reduced storage
(`h-dtype=bf16 spike-bits=1`): H saved in bfloat16, spikes written as bits
packed over time (8/16/32-bit words). Its floors count the bytes it moves:
forward 4 B + the spike words, forward + backward 16 B + the spike words
per neuron-step (x, gs, gx in fp32; H written and read in bf16).
"ours recompute" (`recompute-chunk=8 spike-bits=1`) saves no H: the forward
writes the packed spikes and the membrane every 8 steps, the backward reads
X again and recomputes H chunk by chunk, so its gradients are exact fp32:
16 B + the spike words + 8/8 B of checkpoints per neuron-step.
"""

import argparse
import datetime
import json
import os
import sys

import numpy as np
import torch

NEURON_STEPS = 1 << 27
TAU, V_TH, ALPHA = 2.0, 1.0, 4.0


def time_ms(fn, repeat=20, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return float(np.median(times))


class SigmoidSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u):
        ctx.save_for_backward(u)
        return (u >= 0).to(u.dtype)

    @staticmethod
    def backward(ctx, g):
        (u,) = ctx.saved_tensors
        sg = torch.sigmoid(ALPHA * u)
        return g * ALPHA * sg * (1 - sg)


def lif_loop(x):
    v = torch.zeros_like(x[0])
    out = []
    for t in range(x.shape[0]):
        h = v + (x[t] - v) / TAU
        s = SigmoidSpike.apply(h - V_TH)
        v = h * (1 - s)
        out.append(s)
    return torch.stack(out)


def lif_loop_compilable(x):
    # torch.compile cannot trace a custom autograd.Function with saved tensors
    # everywhere; the straight-through form gives the same values and grads.
    v = torch.zeros_like(x[0])
    out = []
    for t in range(x.shape[0]):
        h = v + (x[t] - v) / TAU
        u = h - V_TH
        sg = torch.sigmoid(ALPHA * u)
        s = (u >= 0).to(x.dtype).detach() + sg - sg.detach()
        v = h * (1 - s)
        out.append(s)
    return torch.stack(out)


def peers(peers_dir):
    """name -> factory(T) returning a module-like callable over [T, N]."""
    import torch._dynamo
    # One compiled graph per T and grad mode; the default limit of 8 would fall
    # back to eager for the last sizes.
    torch._dynamo.config.recompile_limit = 64
    result = {"torch eager": lambda T: lif_loop,
              "torch.compile": lambda T: torch.compile(lif_loop_compilable)}
    if peers_dir:
        sys.path.insert(0, os.path.abspath(peers_dir))
    try:
        from spikingjelly.activation_based import neuron, surrogate

        def sj(backend):
            def make(T):
                node = neuron.LIFNode(tau=TAU, v_threshold=V_TH, v_reset=0.0,
                                      surrogate_function=surrogate.Sigmoid(alpha=ALPHA),
                                      step_mode="m", backend=backend).cuda()

                def run(x):
                    node.reset()
                    return node(x)
                return run
            return make
        for backend in ("torch", "cupy", "triton"):
            result[f"SJ {backend}"] = sj(backend)
    except Exception as e:  # noqa: BLE001 - report and go on without it
        print(f"SpikingJelly unavailable: {e!r}", file=sys.stderr)
    return result


class Ours:
    """The MLIR-generated kernels of one layer, launched through CuPy."""

    def __init__(self, kdir):
        import cupy as cp
        self.cp = cp
        meta = json.load(open(os.path.join(kdir, "kernels.json")))
        layer = meta["layers"][0]
        self.bf16 = layer.get("h_dtype") == "bf16"
        self.word_bits = layer.get("spike_word_bits", 0)
        self.chunk = layer.get("recompute_chunk", 0)
        chip = "sm_" + cp.cuda.Device().compute_capability
        path = os.path.join(kdir, meta["files"].get(chip, meta["files"]["ptx"]))
        self.loaded = os.path.basename(path)
        module = cp.RawModule(path=path)
        self.fwd = module.get_function(layer["fwd"])
        self.fwd_infer = module.get_function(layer["fwd_infer"])
        self.bwd = module.get_function(layer["bwd"])
        self.grid, self.block = (layer["grid"],), (layer["block"],)

    def buffers(self, x):
        """s, h, gx for input x: packed spike words and bf16 H when reduced."""
        T, n = x.shape
        if self.word_bits:
            dtype = {8: torch.int8, 16: torch.int16, 32: torch.int32}[self.word_bits]
            s = torch.empty(-(-T // self.word_bits), n, dtype=dtype, device=x.device)
        else:
            s = torch.empty_like(x)
        # bf16 H as raw 16-bit words (CuPy has no bfloat16 dtype); with
        # recompute, the membrane checkpoints instead of H.
        h = torch.empty(T, n, dtype=torch.int16 if self.bf16 else x.dtype,
                        device=x.device)
        if self.chunk:
            h = torch.empty(max(-(-T // self.chunk) - 1, 1), n, dtype=x.dtype,
                            device=x.device)
        return s, h, torch.empty_like(x)

    def spikes(self, s, T):
        """The spikes as [T, n] 0/1 floats."""
        if not self.word_bits:
            return s.clone()
        b = self.word_bits
        return torch.stack([(s[t // b] >> (t % b)) & 1 for t in range(T)]).float()

    def bind(self, x, s, h, gs, gx):
        """Wraps the torch buffers once, so timing measures the kernels and not
        Python-side argument conversion between the two launches."""
        x, s, h, gs, gx = (self.cp.from_dlpack(t.detach()) for t in (x, s, h, gs, gx))
        self.infer_args, self.fwd_args = (x, s), (x, s, h)
        self.bwd_args = (gs, x, h, gx) if self.chunk else (gs, h, gx)

    def infer(self):
        self.fwd_infer(self.grid, self.block, self.infer_args)

    def train(self):
        self.fwd(self.grid, self.block, self.fwd_args)
        self.bwd(self.grid, self.block, self.bwd_args)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kernels", required=True,
                    help="directory built by neuron_kernels_gpu.py build")
    ap.add_argument("--peers-dir", default=".peers")
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--steps", type=int, nargs="+", default=[4, 8, 16, 32, 64])
    ap.add_argument("--skip-peer", action="append", default=[],
                    help="leave a peer out (e.g. 'torch.compile', whose graphs "
                    "for large T take minutes to compile); the table says so")
    args = ap.parse_args()

    torch.manual_seed(0)
    dev = torch.cuda.get_device_name()
    # Device copy bandwidth: read + write of a 2 GiB buffer.
    a = torch.empty(1 << 29, device="cuda")
    b = torch.empty_like(a)
    copy_ms = time_ms(lambda: b.copy_(a))
    bandwidth = 2 * a.numel() * 4 / (copy_ms * 1e-3)
    del a, b
    print(f"device: {dev}; copy bandwidth {bandwidth / 1e12:.2f} TB/s")

    makers = {k: v for k, v in peers(args.peers_dir).items()
              if k not in args.skip_peer}
    rows = []
    for T in args.steps:
        n = NEURON_STEPS // T
        x = torch.rand(T, n, device="cuda") * 2.0   # about 40% spikes
        gs = torch.randn(T, n, device="cuda")
        row = {"T": T, "neurons": n}
        floor_f = 8 * T * n / bandwidth * 1e3
        floor_fb = 24 * T * n / bandwidth * 1e3
        row.update(floor_fwd_ms=floor_f, floor_fwdbwd_ms=floor_fb)

        ref_s = ref_gx = None
        results = {}
        for variant, suffix in (("ours", ""), ("ours reduced", "_reduced"),
                                ("ours recompute", "_recompute")):
            kdir = os.path.join(args.kernels, f"bench_lif_T{T}{suffix}")
            if not os.path.isdir(kdir):
                continue
            ours = Ours(kdir)
            s, h, gx = ours.buffers(x)
            ours.bind(x, s, h, gs, gx)
            row[f"{variant} fwd"] = time_ms(ours.infer)
            row[f"{variant} fwd+bwd"] = time_ms(ours.train)
            ours.train()
            torch.cuda.synchronize()
            results[variant] = (ours.spikes(s, T), gx.clone())
            moved_fwd = x.numel() * 4 + s.numel() * s.element_size()
            moved_fb = moved_fwd + h.numel() * h.element_size() * 2 + 2 * x.numel() * 4
            if ours.chunk:  # x read again, checkpoints only when T > chunk
                moved_fb = moved_fwd + 3 * x.numel() * 4 + \
                    2 * h.numel() * h.element_size() * (T > ours.chunk)
            row[f"{variant} floor_fwd_ms"] = moved_fwd / bandwidth * 1e3
            row[f"{variant} floor_fwdbwd_ms"] = moved_fb / bandwidth * 1e3
            del s, h, gx
        for name, make in makers.items():
            try:
                fn = make(T)
                with torch.no_grad():
                    row[f"{name} fwd"] = time_ms(lambda: fn(x), repeat=10)
                xg = x.clone().requires_grad_(True)

                def step():
                    xg.grad = None
                    fn(xg).backward(gs)
                torch.cuda.reset_peak_memory_stats()
                row[f"{name} fwd+bwd"] = time_ms(step, repeat=10)
                row[f"{name} peak MB"] = torch.cuda.max_memory_allocated() / 2**20
                if name == "SJ torch" or (ref_s is None and name == "torch eager"):
                    with torch.no_grad():
                        ref_s = fn(x)
                    step()
                    ref_gx = xg.grad.detach().clone()
                del xg
            except Exception as e:  # noqa: BLE001
                row[f"{name} error"] = repr(e)[:200]
            torch.cuda.empty_cache()
        if ref_s is not None:
            for variant, (ours_s, ours_gx) in results.items():
                row[f"{variant} spikes equal"] = float((ours_s == ref_s).float().mean())
                row[f"{variant} gx rel err"] = float((ours_gx - ref_gx).norm() /
                                                     ref_gx.norm())
        rows.append(row)
        print(json.dumps(row), flush=True)

    ours_names = ["ours", "ours reduced", "ours recompute"]
    names = ours_names + list(makers)
    date = datetime.date.today().isoformat()
    lines = [f"# LIF layer, 2^27 neuron-steps — {dev}, {date}", "",
             f"Copy bandwidth {bandwidth / 1e12:.2f} TB/s. Floors: fp32 forward 8 B, "
             "forward+backward 24 B per neuron-step; reduced (bf16 H, packed spikes) "
             "forward 4 B + spike words, forward+backward 16 B + spike words; "
             "recompute (no H, packed spikes, a membrane checkpoint every 8 steps) "
             "16 B + spike words + 1 B. Times are medians in ms.", ""]
    for mode in ("fwd", "fwd+bwd"):
        floor_key = "floor_fwd_ms" if mode == "fwd" else "floor_fwdbwd_ms"
        lines += [f"## {mode}", "",
                  "| T | floor fp32 | floor reduced | floor recompute | " +
                  " | ".join(names) +
                  " | fp32: speed-up over fastest peer | fp32: fraction of floor"
                  " | reduced: speed-up | reduced: fraction of floor"
                  " | recompute: speed-up | recompute: fraction of floor |",
                  "|---" * (len(names) + 10) + "|"]
        for r in rows:
            peer_times = [r.get(f"{p} {mode}") for p in names[len(ours_names):]]
            peer_times = [t for t in peer_times if t]
            cells = [f"{r.get(f'{p} {mode}', float('nan')):.3f}" for p in names]
            stats = []
            for variant in ours_names:
                t = r.get(f"{variant} {mode}")
                floor = r.get(f"{variant} {floor_key}")
                stats += [f"{min(peer_times) / t:.2f}x" if t and peer_times else "-",
                          f"{floor / t:.0%}" if t and floor else "-"]
            floors = [f"{r.get(f'{v} {floor_key}', float('nan')):.3f}" for v in ours_names]
            lines.append(f"| {r['T']} | " + " | ".join(floors + cells + stats) + " |")
        lines.append("")
    lines.append("Correctness: " + "; ".join(
        f"T={r['T']} " + ", ".join(
            f"{v}: spikes equal {r[f'{v} spikes equal']:.4%}, gx rel err "
            f"{r[f'{v} gx rel err']:.1e}" for v in ours_names
            if f"{v} spikes equal" in r) for r in rows))
    if args.skip_peer:
        lines.append("")
        lines.append("Peers left out of this run: " + ", ".join(args.skip_peer) + ".")
    table = "\n".join(lines)
    print(table)
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"{date}-{dev.replace(' ', '_')}-lif")
    with open(stem + ".json", "w") as f:
        json.dump(dict(device=dev, date=date, bandwidth=bandwidth, rows=rows), f, indent=1)
    with open(stem + ".md", "w") as f:
        f.write(table + "\n")


if __name__ == "__main__":
    main()
