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

That layer-level pipeline is a lower bound of the speedup: only a layer's
neuron scan waits for the neighbouring rank, its GEMMs run over the rank's
own steps as soon as the layer below is done. `wavefront_step` simulates the
schedule op by op with the scans' share of one device's step taken from
`snn-run bench --profile` (`--parse-profile`); the report shows both.

    python3 bench/split_cost_model.py                 # the table in docs
    python3 bench/split_cost_model.py --measured RESULTS.json   # check it
    python3 bench/split_cost_model.py --report split-scale.jsonl \
        [--profile split-profile.jsonl]  # measured vs ideal, model, targets

--measured reads the JSON lines of bench/gpu-split.sh (step ms per P) and
prints the measured next to the predicted speedups.
"""

import argparse
import json
import re
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


def wavefront_step(scan_f, rest_f, scan_b, rest_b, state_bytes, grad_bytes,
                   steps, parts, link):
    """Seconds of one training step on `parts` ranks, op by op: each rank
    runs its layers in program order on one stream, and only a neuron scan
    waits for its neighbour (the state of the same layer from rank p - 1 in
    the forward, its gradient from rank p + 1 in the backward); the GEMMs
    and the rest of a layer (rest_*) run on the rank's own steps at once.
    scan_* / rest_*: per layer, seconds per time step on one device. The
    loss's sum over the ranks ends the forward on every rank; the weight
    gradients' all-reduce ends the backward."""
    bw, alpha = LINKS[link]
    comm = parts > 1
    layers = len(scan_f)
    bounds = [steps * p // parts for p in range(parts + 1)]
    n = [bounds[p + 1] - bounds[p] for p in range(parts)]
    hop = [comm * (alpha + b / bw) for b in state_bytes]
    # Forward: layer l on rank p: its GEMM after its own layer l - 1, its
    # scan after that and after rank p - 1's scan of layer l has arrived.
    done = [[0.0] * layers for _ in range(parts)]
    for p in range(parts):
        t = 0.0
        for l in range(layers):
            t += rest_f[l] * n[p]
            if p:
                t = max(t, done[p - 1][l] + hop[l])
            t += scan_f[l] * n[p]
            done[p][l] = t
    forward = max(done[p][-1] for p in range(parts))
    forward += comm * 2 * (parts - 1) * alpha  # the loss's all-reduce
    # Backward: layers in reverse, the scan after rank p + 1's gradient of
    # the layer's final state, then the layer's GEMMs (gx and gw).
    done = [[0.0] * layers for _ in range(parts)]
    for p in reversed(range(parts)):
        t = 0.0
        for l in reversed(range(layers)):
            if p + 1 < parts:
                t = max(t, done[p + 1][l] + hop[l])
            t += scan_b[l] * n[p]
            done[p][l] = t
            t += rest_b[l] * n[p]
        done[p].append(t)
    backward = max(done[p][-1] for p in range(parts))
    allreduce = 0.0
    if comm:
        allreduce = (2 * (parts - 1) / parts * grad_bytes / bw
                     + 2 * (parts - 1) * alpha)
    return forward + backward + allreduce


PROFILE_LINE = re.compile(r"^\s+(.+?)\s+([\d.]+) ms\s+[\d.]+%\s+\d+ calls")
PROGRAM_LINE = re.compile(r"^snnrt profile \([^)]*\) (\w+): ")


def parse_profile(path, model, steps):
    """The shares of one training step (train_forward + backward + update)
    in neuron scans and in the rest, forward and backward, from the stderr
    of `snn-run bench --profile`."""
    ms = {}
    program = None
    with open(path) as f:
        for line in f:
            head = PROGRAM_LINE.match(line)
            if head:
                program = head.group(1)
                continue
            row = PROFILE_LINE.match(line)
            if row and program:
                ms.setdefault(program, {})[row.group(1)] = float(row.group(2))
    fwd, bwd, upd = (ms.get(k, {}) for k in ("train_forward", "backward", "update"))
    total = sum(fwd.values()) + sum(bwd.values()) + sum(upd.values())
    if not total:
        raise SystemExit(f"{path}: no train_forward/backward profile found")
    scan_f = sum(v for k, v in fwd.items() if k.split()[0] == "neuron")
    scan_b = sum(v for k, v in bwd.items() if k.split()[0] == "neuron_bwd")
    return {"model": model, "T": steps,
            "scan_fwd": scan_f / total,
            "rest_fwd": (sum(fwd.values()) - scan_f) / total,
            "scan_bwd": scan_b / total,
            "rest_bwd": (sum(bwd.values()) - scan_b + sum(upd.values())) / total,
            "ops_ms": ms}


def profiled_speedup(spec, shares, t1_ms, steps, parts):
    """wavefront_step's speedup with one device's step t1_ms divided between
    scans and the rest as profiled (equal layers)."""
    layers = spec["layers"]
    per = lambda share: [share * t1_ms * 1e-3 / layers / steps] * layers
    args = (per(shares["scan_fwd"]), per(shares["rest_fwd"]),
            per(shares["scan_bwd"]), per(shares["rest_bwd"]),
            spec["state"], spec["grads"], steps)
    return (wavefront_step(*args, 1, "nvlink")
            / wavefront_step(*args, parts, "nvlink"))


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


def calibrated_speedup(spec, t1_ms, steps, parts, calib_ms, calib_steps):
    """The model's speedup on `parts` ranks at `steps` against the measured
    one-device step t1_ms, with equal layers whose per-step compute makes one
    device take calib_ms at calib_steps steps."""
    layers = spec["layers"]
    unit = step_time([1.0] * layers, spec["state"], spec["grads"], calib_steps,
                     1, "nvlink")
    per_step = [calib_ms * 1e-3 / unit] * layers
    return t1_ms * 1e-3 / step_time(per_step, spec["state"], spec["grads"],
                                    steps, parts, "nvlink")


def report(path, profile_path=None):
    """Markdown: each measured split step against one device, the ideal
    wavefront, the targets, and the cost model with its compute calibrated
    two ways: by the measured one-device step at T (compute linear in T), and
    by one device's step at T/P, a rank's chunk (what a short scan really
    costs: at these batches a scan over fewer steps does not get faster in
    proportion, the GPU being underfilled either way)."""
    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    shares = {}
    if profile_path:
        with open(profile_path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    shares[r["model"]] = r
    base = {(r["model"], r["T"]): r["step_ms"] for r in records if r["P"] == 1}
    split_T = {(r["model"], r["T"]) for r in records if r["P"] > 1}
    gpu = records[0]["gpu"] if records else "?"
    print(f"# Time split, measured on {gpu} x {records[0]['gpus'] if records else 0}\n")
    print("threads: the P ranks are virtual devices on streams of one GPU "
          "(they share its SMs: a check of the schedule, not a speedup); "
          "nccl: one rank per GPU. Cost model at T: compute calibrated by the "
          "one-device step at T; at T/P: by one device's step over a rank's "
          "T/P steps.\n")
    print("| model | T | P | ranks | step ms | speedup | ideal L*P/(L+P-1) "
          "| cost model at T | cost model at T/P | wavefront of scans | target |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    fmt = lambda v: "-" if v is None else f"{v:.2f}"
    for r in records:
        key = (r["model"], r["T"])
        if r["P"] == 1 and key not in split_T:
            continue  # a chunk length: in the table below
        spec = BENCH_MODELS.get(r["model"])
        t1 = base.get(key)
        speed = t1 / r["step_ms"] if t1 and r["step_ms"] > 0 else None
        layers = spec["layers"] if spec else 0
        ideal = ideal_speedup(layers, r["P"]) if layers else None
        model_T = model_chunk = model_scan = None
        if spec and t1 and r["P"] > 1 and r.get("way") == "nccl":
            model_T = calibrated_speedup(spec, t1, r["T"], r["P"], t1, r["T"])
            chunk = base.get((r["model"], r["T"] // r["P"]))
            if chunk and r["T"] % r["P"] == 0:
                model_chunk = calibrated_speedup(spec, t1, r["T"], r["P"], chunk,
                                                 r["T"] // r["P"])
            if r["model"] in shares:
                model_scan = profiled_speedup(spec, shares[r["model"]], t1,
                                              r["T"], r["P"])
        target = TARGETS.get((r["P"], r["T"])) if r.get("way") == "nccl" else None
        print(f"| {r['model']} | {r['T']} | {r['P']} | {r.get('way', 'one')} | "
              f"{r['step_ms']:.3f} | {fmt(speed)} | {fmt(ideal)} | "
              f"{fmt(model_T)} | {fmt(model_chunk)} | {fmt(model_scan)} | "
              f"{fmt(target)} |")
    chunks = sorted(k for k in base if k not in split_T)
    if chunks:
        print("\nOne device at a rank's chunk length (the unsplit model at T/P "
              "steps): step ms, and its ratio to the step at the next larger T "
              "(2.00 = linear in T).\n")
        print("| model | T | step ms | vs 2T |")
        print("|---|---|---|---|")
        for k in sorted(base):
            twice = base.get((k[0], 2 * k[1]))
            print(f"| {k[0]} | {k[1]} | {base[k]:.3f} | "
                  f"{fmt(twice / base[k] if twice else None)} |")


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
    ap.add_argument("--profile", help="with --report: JSON lines of "
                    "--parse-profile (the scans' share of one device's step)")
    ap.add_argument("--parse-profile", metavar="STDERR",
                    help="the stderr of snn-run bench --profile: print the "
                         "scans' and the rest's shares of the step as JSON "
                         "(with --model and the first --steps)")
    ap.add_argument("--model", default="mlp")
    args = ap.parse_args(argv)
    if args.parse_profile:
        print(json.dumps(parse_profile(args.parse_profile, args.model,
                                       args.steps[0])))
        return 0
    if args.report:
        report(args.report, args.profile)
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
