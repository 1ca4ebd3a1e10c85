#!/usr/bin/env python3
"""Cost model of --snn-split-time: step time of a time split over P devices.

The split runs each layer as a wavefront over (layer, time range): rank p
starts neuron layer l once rank p - 1 has handed it the layer's final state.
With L neuron layers (each with the stateless layers in front of it) of
per-step compute time c_l, a chunk of T/P steps takes c_l T / P on a rank
plus one state transfer of `state_bytes_l` over the link. The forward is a
pipeline of L stages and P ranks, the backward the same pipeline in reverse,
and the weight gradients are summed over the ranks once (ring all-reduce):

    chunk_l   = c_l * T / P + alpha + state_bytes_l / bw
    forward   = sum_l chunk_l + (P - 1) * max_l chunk_l
    backward  = the same with the backward's c_l (about 2x the forward's)
    allreduce = 2 (P - 1) / P * grad_bytes / bw_allreduce + 2 (P - 1) alpha
    step(P)   = forward + backward + allreduce

For equal layers and free transfers the speedup step(1) / step(P) is the
ideal L P / (L + P - 1): 2.29x for L = 4 on 4 ranks, so 3.6x on 4 needs
L >= 41 or more independent work in flight. Splitting the batch into m
micro-batches that follow each other through the wavefront (GPipe-style;
each has its own state chain) makes it L m P / (L m + P - 1): 3.6x on 4 with
L = 4 and m = 10. `--micro-batches` models that (not implemented yet). The per-step compute c_l comes from a measured
one-device profile (snn-run --profile) or from the sizes given here; GEMM
efficiency at fewer rows (T B / P) is not modelled.

    python3 bench/split_cost_model.py                 # the table in docs
    python3 bench/split_cost_model.py --measured RESULTS.json   # check it
    python3 bench/split_cost_model.py --report split-scale.jsonl
                                       # measured vs ideal, model, targets

--measured reads the JSON lines of bench/gpu-split.sh (step ms per P) and
prints the measured next to the predicted speedups.
"""

import argparse
import json
import sys

# Links (bytes/s, latency s): NVLink 4 per direction on H100 SXM, and a
# 400 Gb/s InfiniBand NIC per GPU across nodes.
LINKS = {
    "nvlink": (450e9, 5e-6),
    "ib400": (50e9, 10e-6),
    "streams": (1.5e12, 3e-6),  # device-to-device copy within one GPU
}


def ideal_speedup(layers, parts, micro=1):
    return layers * micro * parts / (layers * micro + parts - 1)


def step_time(fwd_per_step, state_bytes, grad_bytes, steps, parts, link,
              bwd_factor=2.0, allreduce_link=None, micro=1):
    """Seconds of one training step on `parts` ranks. fwd_per_step: the
    forward compute of each neuron layer (with its stateless layers) per time
    step; state_bytes: bytes of each layer's state handed to the next rank."""
    bw, alpha = LINKS[link]
    ar_bw, ar_alpha = LINKS[allreduce_link or link]
    comm = parts > 1
    # One stage per layer and micro-batch: 1/m of the batch, state bytes / m.
    chunks_f = [c * steps / parts / micro + comm * (alpha + b / micro / bw)
                for c, b in zip(fwd_per_step, state_bytes)] * micro
    chunks_b = [bwd_factor * c * steps / parts / micro
                + comm * (alpha + b / micro / bw)
                for c, b in zip(fwd_per_step, state_bytes)] * micro
    forward = sum(chunks_f) + (parts - 1) * max(chunks_f)
    backward = sum(chunks_b) + (parts - 1) * max(chunks_b)
    allreduce = 0.0
    if comm:
        allreduce = (2 * (parts - 1) / parts * grad_bytes / ar_bw
                     + 2 * (parts - 1) * ar_alpha)
    return forward + backward + allreduce


def mlp_layers(batch, width, layers, flops_per_s=400e12, bytes_per_s=3.0e12):
    """An MLP of `layers` LIF layers of `width` neurons: per-step forward time
    of a layer (its GEMM at flops_per_s, its neuron scan at bytes_per_s with
    12 bytes per neuron-step), state bytes, gradient bytes."""
    gemm = 2.0 * batch * width * width / flops_per_s
    scan = 12.0 * batch * width / bytes_per_s
    per_step = [gemm + scan] * layers
    state = [4.0 * batch * width] * layers
    grads = 4.0 * width * width * layers
    return per_step, state, grads


def predict(args):
    per_step, state, grads = mlp_layers(args.batch, args.width, args.layers)
    if args.calibrate_ms:
        # Scale the compute so that one device takes the measured step.
        steps = args.steps[0]
        scale = (args.calibrate_ms * 1e-3
                 / step_time(per_step, state, grads, steps, 1, args.link))
        per_step = [c * scale for c in per_step]
    rows = []
    for steps in args.steps:
        base = step_time(per_step, state, grads, steps, 1, args.link)
        for parts in args.parts:
            if parts > steps:
                continue
            link = args.link if parts <= args.gpus_per_node else "ib400"
            t = step_time(per_step, state, grads, steps, parts, link,
                          micro=args.micro_batches)
            rows.append({"T": steps, "P": parts, "link": link,
                         "step_ms": round(t * 1e3, 3),
                         "speedup": round(base / t, 2),
                         "ideal": round(ideal_speedup(
                             args.layers, parts, args.micro_batches), 2)})
    return rows


def check_measured(path, args):
    per_step, state, grads = mlp_layers(args.batch, args.width, args.layers)
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    base = {(r["model"], r["T"]): r["step_ms"] for r in records if r["P"] == 1}
    for r in records:
        key = (r["model"], r["T"])
        if r["P"] == 1 or key not in base:
            continue
        t1 = step_time(per_step, state, grads, r["T"], 1, args.link)
        tp = step_time(per_step, state, grads, r["T"], r["P"], args.link)
        print(f"{r['model']:8} T={r['T']:5} P={r['P']}: measured "
              f"{base[key] / r['step_ms']:.2f}x, model {t1 / tp:.2f}x, "
              f"ideal {ideal_speedup(args.layers, r['P']):.2f}x")


# The benchmark models of bench/split_models.py: 5 neuron layers; the state
# one layer hands on (batch x neurons per step, f32) and the gradient bytes.
BENCH_MODELS = {
    "mlp": {"layers": 5, "state": [4.0 * 16 * 1024] * 4 + [4.0 * 16 * 10],
            "grads": 4.0 * (256 * 1024 + 3 * 1024 * 1024 + 1024 * 10)},
    "conv": {"layers": 5, "state": [4.0 * 4 * 16 * 16 * 16] * 4 + [4.0 * 4 * 10],
             "grads": 4.0 * (16 * 2 * 9 + 3 * 16 * 16 * 9 + 10 * 16 * 256)},
}
# The targets (speedup on P GPUs at T), and the paper's 4-GPU point.
TARGETS = {(2, 1024): 1.9, (4, 1024): 3.6, (4, 4096): 3.65}


def report(path):
    """Markdown: each measured split step against one device, the ideal
    wavefront, the targets, and the cost model with its compute calibrated
    by the measured one-device step (equal layers)."""
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    base = {(r["model"], r["T"]): r["step_ms"] for r in records if r["P"] == 1}
    gpu = records[0]["gpu"] if records else "?"
    print(f"# Time split, measured on {gpu} x {records[0]['gpus'] if records else 0}\n")
    print("threads: the P ranks are virtual devices on streams of one GPU "
          "(they share its SMs: a check of the schedule, not a speedup); "
          "nccl: one rank per GPU.\n")
    print("| model | T | P | ranks | step ms | speedup | ideal L*P/(L+P-1) "
          "| cost model (nvlink) | target |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in records:
        key = (r["model"], r["T"])
        spec = BENCH_MODELS.get(r["model"])
        t1 = base.get(key)
        speed = t1 / r["step_ms"] if t1 and r["step_ms"] > 0 else None
        layers = spec["layers"] if spec else 0
        ideal = ideal_speedup(layers, r["P"]) if layers else None
        model = None
        if spec and t1 and r["P"] > 1:
            per_step = [1.0] * layers
            unit = step_time(per_step, spec["state"], spec["grads"], r["T"], 1,
                             "nvlink")
            per_step = [t1 * 1e-3 / unit] * layers
            model = (step_time(per_step, spec["state"], spec["grads"], r["T"], 1,
                               "nvlink")
                     / step_time(per_step, spec["state"], spec["grads"], r["T"],
                                 r["P"], "nvlink"))
        target = TARGETS.get((r["P"], r["T"])) if r.get("way") == "nccl" else None
        fmt = lambda v: "-" if v is None else f"{v:.2f}"
        print(f"| {r['model']} | {r['T']} | {r['P']} | {r.get('way', 'one')} | "
              f"{r['step_ms']:.3f} | {fmt(speed)} | {fmt(ideal)} | "
              f"{fmt(model) if r.get('way') == 'nccl' else '-'} | "
              f"{fmt(target)} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--layers", type=int, default=4, help="neuron layers L")
    ap.add_argument("--width", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, nargs="+", default=[1024, 4096])
    ap.add_argument("--parts", type=int, nargs="+",
                    default=[1, 2, 4, 8, 16, 32, 64])
    ap.add_argument("--link", default="nvlink", choices=sorted(LINKS))
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--micro-batches", type=int, default=1,
                    help="micro-batches in flight through the wavefront")
    ap.add_argument("--measured", help="JSON lines of bench/gpu-split.sh")
    ap.add_argument("--report", help="JSON lines of bench/gpu-split.sh scale: "
                                     "a markdown table of the measured speedups")
    ap.add_argument("--calibrate-ms", type=float, default=None,
                    help="measured one-device step (ms) at the first --steps: "
                         "scales the modelled compute to it")
    args = ap.parse_args(argv)
    if args.report:
        report(args.report)
        return 0
    if args.measured:
        check_measured(args.measured, args)
        return 0
    print(f"L = {args.layers} layers of {args.width} neurons, batch "
          f"{args.batch}, m = {args.micro_batches} micro-batches\n")
    print("| T | P | link | step ms | speedup | ideal L*m*P/(L*m+P-1) |")
    print("|---|---|---|---|---|---|")
    for r in predict(args):
        print(f"| {r['T']} | {r['P']} | {r['link']} | {r['step_ms']} | "
              f"{r['speedup']} | {r['ideal']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
