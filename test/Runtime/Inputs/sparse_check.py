#!/usr/bin/env python3
"""Event-driven linear layers (--snn-sparsify) against the dense path and the
float64 reference, on fresh random spikes at given densities.

  sparse_check.py all SNN_OPT SNN_RUN DIR T B K N DENSITY...   (CPU, CI)
  sparse_check.py prepare SNN_OPT DIR T B K N DENSITY...       (target=all)
  sparse_check.py compare SNN_RUN DIR DEVICE DENSITY...        (e.g. cuda:0)
  sparse_check.py backward SNN_OPT SNN_RUN DIR T B K N BAND... (CPU, CI)
  (the CPU modes compile with target=cpu, or with $SPARSE_CHECK_TARGET,
  e.g. "all event-tiles=true": what follows output= in --snn-compile)
  sparse_check.py prepare-backward SNN_OPT DIR T B K N BAND... (target=all)
  sparse_check.py compare-backward SNN_RUN DIR DEVICE BAND...
  sparse_check.py backward-input ... (and prepare-/compare-backward-input)

A BAND may be B@D: the band B with spikes at density D (default 0.3).

Writes a model whose first layer is an IF neuron with threshold 1 on 0/1
input (so its spikes are the input: the event-driven layer sees exactly the
drawn density), then linear K -> N (+ bias), LIF, linear N -> 5, LIF, rate
loss. Compiles it dense, event-driven with the default crossover (the
dispatch picks a path per density) and with crossover=1 (always
event-driven). For each density: infer outputs equal to the dense module's
bit for bit (spikes), loss and every gradient within 1e-6 normwise relative
error of the dense module, the event-driven module's gradients against the
float64 reference (snnref) within 1e-4 (float32 vs float64), and the path
the dispatch took (the decision the reference computes) printed and compared
with what `snn-run infer` reports for the layer. A fourth module, the
dispatch with --snn-fuse after --snn-autodiff (the neuron kernels count the
event layers' inputs: no spike_density op), must give the dispatch's
outputs, gradients and per-layer event report bit for bit.

Every case's weights lie on a 2^-20 grid (on_grid), and a draw whose
float64 membranes come within 1e-5 of a threshold or band edge is drawn
again, up to 8 times (draw_well_conditioned): float32 cannot resolve such
a draw.

The backward modes train the same model with a surrogate band B
(`grad-threshold`) and --snn-sparsify after --snn-autodiff, so that both
linear_bwd ops are event-driven: per band, the loss and every gradient of the
dispatch and always-event-driven modules within 1e-6 of the dense module's
(or of float64, where the GEMM's own rounding is larger),
the event-driven module's against the float64 reference within 1e-4, and the
density of each event-driven backward's output gradient printed, and how
many of the event-driven weight gradients read their input as bits
(event_weight_grad_bits).

The -input modes leave out the IF layer: fc1 reads the network input, whose
nonzeros are 1, 2 or 0.5 (input-is-spikes is only a promise), so that its
event-driven weight gradient reads the input's occupancy bits and its values.
"""
import os
import re
import subprocess
import sys

import numpy as np

from grad_band_check import reference_after_forward
from snnref.manifest import Module
from snnref.tensorio import read_safetensors, write_safetensors

MODEL = """
func.func @forward(%x: tensor<{T}x{B}x{K}xf32>) -> tensor<{T}x{B}x5xf32> {{
  %s0 = snn.if %x {{snn.name = "in"}} : tensor<{T}x{B}x{K}xf32>
  %w1 = snn.param "fc1.weight" {{init = #snn.init<kaiming_uniform>}} : tensor<{N}x{K}xf32>
  %b1 = snn.param "fc1.bias" {{init = #snn.init<uniform>, init_scale = 0.1}} : tensor<{N}xf32>
  %h1 = snn.linear %s0, %w1, %b1 : tensor<{T}x{B}x{K}xf32>, tensor<{N}x{K}xf32>, tensor<{N}xf32> -> tensor<{T}x{B}x{N}xf32>
  %s1 = snn.lif %h1 {{k = 0.5, c = 0.5, snn.name = "lif1"}} : tensor<{T}x{B}x{N}xf32>
  %w2 = snn.param "fc2.weight" {{init = #snn.init<kaiming_uniform>}} : tensor<5x{N}xf32>
  %h2 = snn.linear %s1, %w2 : tensor<{T}x{B}x{N}xf32>, tensor<5x{N}xf32> -> tensor<{T}x{B}x5xf32>
  %s2 = snn.lif %h2 {{k = 0.5, c = 0.5, snn.name = "lif2"}} : tensor<{T}x{B}x5xf32>
  return %s2 : tensor<{T}x{B}x5xf32>
}}
"""


def run(*cmd, env=None):
    done = subprocess.run(cmd, capture_output=True, text=True,
                          env=dict(os.environ, **env) if env else None)
    if done.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{done.stdout}{done.stderr}")
    return done.stdout + done.stderr


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


VARIANTS = {"dense": [], "dispatch": ["--snn-sparsify=min-features=1"],
            "event": ["--snn-sparsify=min-features=1 crossover=1"],
            # The dispatch with the counts in the neuron kernels.
            "fused": ["--snn-sparsify=min-features=1"]}
# Passes after --snn-autodiff: --snn-fuse counts every event layer's input
# (spikes, the backward's gradients) in the neuron kernels that write it.
# Counts change no arithmetic (the fused module's gradients equal the
# dispatch's bit for bit); the thin readout's gx formed in the neuron
# backward sums in another order, so it is left out here
# (fuse-linear-grad.test checks it).
FUSE = "--snn-fuse=linear-grad=false"
AFTER = {"fused": [FUSE]}


def event_report(text):
    """snn-run's per-layer event lines (input density, path share)."""
    return [l.strip() for l in text.splitlines() if "event layer" in l]


def count_tiles(mod, program):
    """event_linear_tiles ops of a program (a Module)."""
    return sum(1 for o in mod.m["programs"][program] for op in o.get("of", [])
               if op["op"] == "event_linear_tiles")


def count_ops(d, name):
    """spike_density kernel ops and neuron ops with a fused count."""
    m = Module(f"{d}/{name}.snnmod").m["programs"]
    ops = [o for p in m.values() for o in p]
    return (sum(1 for o in ops for sub in o.get("of", []) if sub["op"] == "spike_density"),
            sum(1 for o in ops if "spike_count" in o))


def on_grid(weights):
    """The weights rounded to multiples of 2^-20: with 0/1 (or 1, 2, 0.5)
    inputs every product and partial sum below 16 of a linear layer is then
    exact in float32, so the dense GEMM and the event-driven sums give the
    same membranes in any summation order, and no membrane near the
    threshold flips a spike between two modules (which made a rare draw
    fail). The grid is fine enough that a membrane exactly at the threshold
    stays as rare as one within the narrowest band (1e-7) of it."""
    return {k: (np.round(v * 2.0**20) / 2.0**20).astype(np.float32)
            for k, v in weights.items()}


# How far (in H - v_th) every float64 reference membrane stays from a
# decision: float32 rounding moves a membrane by ~1e-6 at most here.
DECISION_MARGIN = 1e-5


def decision_margin(mod):
    """The smallest distance of a spiking layer's H in `mod`'s last
    train_forward from a decision: the threshold (a spike) and, with a
    surrogate band B, |H - v_th| = B (a surrogate entry). Closer than
    float32 rounding, a float32 module and the float64 reference can decide
    differently and differ by a whole spike or surrogate entry. An exact tie
    (distance 0) is exact arithmetic, e.g. an IF layer on 0/1 input, which
    float32 computes the same: it does not count."""
    margin, layers = np.inf, 0
    for op in (sub for o in mod.m["programs"]["train_forward"] for sub in o.get("of", [o])):
        if op.get("op") != "neuron" or op.get("model") == "li":
            continue
        if not op.get("save_h") or op.get("recompute_chunk"):
            sys.exit(f"{mod.where}: a training neuron op that does not save H")
        n = mod.neuron_of(op)
        h, v_th = mod.get(int(op["out"][1])), np.asarray(n.v_th)
        # A per-neuron threshold is one step's [features]: H as rows of it.
        u = np.abs(h.reshape(-1, v_th.size) - v_th if v_th.ndim else h - v_th)
        layers += 1
        u = u[u > 0]
        margin = min(margin, float(u.min(initial=np.inf)))
        if n.surrogate.grad_band is not None and np.isfinite(n.surrogate.grad_band):
            edge = np.abs(u - n.surrogate.grad_band)
            margin = min(margin, float(edge[edge > 0].min(initial=np.inf)))
    if not layers:
        sys.exit(f"{mod.where}: no spiking layer in train_forward")
    return margin


def draw_well_conditioned(draw, reference, tries=8):
    """Calls draw(rng) (a case's random data, with a fresh generator) until
    reference() (the float64 reference after its train_forward on that
    data) keeps every membrane DECISION_MARGIN from a decision: the data
    stays fresh and random, without the rare draw whose exact answer
    float32 cannot resolve. Over many neuron-steps (the GPU checks' 100 x
    128 rows) some membrane lies closer in every draw, but one flipped
    decision then moves a normwise error little: the draw of the widest
    margin of `tries` is kept."""
    seeds = np.random.SeedSequence().spawn(tries)  # fresh every run
    margins = []
    for seed in seeds:
        draw(np.random.default_rng(seed))
        margins.append(decision_margin(reference()))
        if margins[-1] > DECISION_MARGIN:
            return
    best = int(np.argmax(margins))
    print(f"no draw in {tries} kept its membranes {DECISION_MARGIN:g} from every "
          f"decision; keeping the widest, {margins[best]:.1e}", file=sys.stderr)
    draw(np.random.default_rng(seeds[best]))


def write_case(case, x, weights, labels):
    """A case's input, weights (on the grid) and labels, as snn-run reads them."""
    write_safetensors(f"{case}/w.safetensors", on_grid(weights))
    np.save(f"{case}/x.npy", x)
    np.save(f"{case}/y.npy", labels.astype(np.int64))


def prepare(snn_opt, d, T, B, K, N, densities, target):
    """The three modules and, per density, fresh spikes, weights, labels."""
    with open(f"{d}/model.mlir", "w") as f:
        f.write(MODEL.format(T=T, B=B, K=K, N=N))
    for name, passes in VARIANTS.items():
        run(snn_opt, f"{d}/model.mlir", *passes, "--snn-autodiff=optimizer=sgd",
            *AFTER.get(name, []),
            f"--snn-compile=output={d}/{name}.snnmod target={target}", "-o", "/dev/null")
    for density in densities:
        case = f"{d}/d{density:g}"
        os.makedirs(case, exist_ok=True)

        def draw(rng):
            x = (rng.random((T, B, K)) < density).astype(np.float32)
            weights = {"fc1.weight": rng.normal(0, 1.5 / np.sqrt(K), (N, K)),
                       "fc1.bias": rng.normal(0.3, 0.2, (N,)),
                       "fc2.weight": rng.normal(0, 2.0 / np.sqrt(N), (5, N))}
            write_case(case, x, weights, rng.integers(0, 5, B))
        draw_well_conditioned(draw, lambda: reference_after_forward(f"{d}/event.snnmod", case))


def compare(snn_run, d, densities, device):
    """Runs the modules on each prepared case; one line per density."""
    failures = 0
    for density in densities:
        case = f"{d}/d{density:g}"
        x = np.load(f"{case}/x.npy")
        # On a GPU, the same batch three times: the first run of a program
        # is eager, the second is captured into a CUDA graph (the dense GEMM
        # in a conditional node) and replayed, the third replays it.
        reps = 3 if device.startswith("cuda") else 1
        np.save(f"{case}/x_reps.npy", np.concatenate([x] * reps, axis=1))
        out, grads, reports = {}, {}, {}
        for name in VARIANTS:
            reports[name] = run(snn_run, f"{d}/{name}.snnmod", "infer", "--device", device,
                                "--weights", f"{case}/w.safetensors",
                                "--data", f"{case}/x_reps.npy",
                                "--output", f"{case}/{name}.out.npy")
            run(snn_run, f"{d}/{name}.snnmod", "grads", "--device", device,
                "--weights", f"{case}/w.safetensors", "--data", f"{case}/x.npy",
                "--labels", f"{case}/y.npy", "--output", f"{case}/{name}.grads.safetensors")
            out[name] = np.load(f"{case}/{name}.out.npy")
            grads[name] = read_safetensors(f"{case}/{name}.grads.safetensors")[0]
        problems = []
        # Counted in the neuron kernels: the same bits, the same decisions.
        if not np.array_equal(out["fused"], out["dispatch"]):
            problems.append("fused: output spikes differ from the dispatch's")
        for k in grads["dispatch"]:
            if not np.array_equal(grads["fused"][k], grads["dispatch"][k]):
                problems.append(f"fused: {k} differs from the dispatch's")
        if event_report(reports["fused"]) != event_report(reports["dispatch"]):
            problems.append(f"fused: reports {event_report(reports['fused'])}, the "
                            f"dispatch {event_report(reports['dispatch'])}")
        # The always event-driven module's input density: counted by its
        # spike_density op, or (tiles) by the compact_rows that lists it.
        densities = {n: re.findall(r"input density ([\d.]+)", reports[n])
                     for n in ("event", "dispatch")}
        if densities["event"] != densities["dispatch"]:
            problems.append(f"event: reports input densities {densities['event']}, "
                            f"the dispatch {densities['dispatch']}")
        if count_ops(d, "fused") != (0, 4):
            problems.append(f"fused: (spike_density ops, fused counts) = "
                            f"{count_ops(d, 'fused')}, expected (0, 4)")
        runs = np.split(out["dispatch"], reps, axis=1)
        if any(not np.array_equal(r, runs[0]) for r in runs[1:]):
            problems.append("dispatch: a replayed CUDA graph differs from the eager run")
        for name in ("dispatch", "event", "fused"):
            if not np.array_equal(out[name], out["dense"]):
                problems.append(f"{name}: output spikes differ in "
                                f"{int(np.sum(out[name] != out['dense']))} places")
            worst = max(rel(grads[name][k], grads["dense"][k]) if np.any(grads["dense"][k])
                        else float(np.abs(grads[name][k]).max())
                        for k in grads["dense"])
            if not worst <= 1e-6:
                problems.append(f"{name}: loss/gradients differ by {worst:.1e}")
        # The event-driven module against the float64 reference.
        mod = reference_after_forward(f"{d}/event.snnmod", case)
        mod.run("backward")
        ref_worst = max(rel(grads["event"][t["name"]], mod.get(t["name"]))
                        for t in mod.m["tensors"]
                        if t["name"].startswith("grad:") and "grad_of" in t
                        and np.any(mod.get(t["name"])))
        ref_worst = max(ref_worst, rel(grads["event"]["loss"], mod.get("loss")))
        if not ref_worst < 1e-4:
            problems.append(f"event vs float64 reference: {ref_worst:.1e}")
        # Which path the dispatch module takes at this density.
        disp = Module(f"{d}/dispatch.snnmod")
        op = next(sub for o in disp.m["programs"]["infer"] for sub in o.get("of", [])
                  if sub["op"] == "spike_density")
        path = "event" if int(np.count_nonzero(x)) <= int(op["limit"]) else "dense"
        # snn-run's report of the first layer (the same batch: all or nothing).
        share = re.search(r"event layer fc1\s+forward\s+input density [\d.]+, "
                          r"event path ([\d.]+) of \d+ calls", reports["dispatch"])
        if not share or float(share.group(1)) != (1.0 if path == "event" else 0.0):
            problems.append(f"snn-run reports {share.group(0) if share else 'no event path'}"
                            f" but the reference decision is {path}")
        tiles = count_tiles(Module(f"{d}/event.snnmod"), "infer")
        counting = sum(1 for o in Module(f"{d}/event.snnmod").m["programs"]["infer"]
                       if [sub["op"] for sub in o.get("of", [])]
                       == ["spike_density", "compact_rows"])
        print(f"DENSITY {density:g} actual={np.count_nonzero(x) / x.size:.4f} "
              f"dispatch={path} tiles={tiles} counting-lists={counting} "
              f"ref_rel={ref_worst:.1e} "
              + ("OK" if not problems else "FAIL " + "; ".join(problems)))
        failures += bool(problems)
    return failures


def backward_variants(net_input):
    spikes = "input-is-spikes " if net_input else ""
    return {"dense": [], "dispatch": [f"--snn-sparsify={spikes}min-features=1"],
            "event": [f"--snn-sparsify={spikes}min-features=1 crossover=1"],
            "fused": [f"--snn-sparsify={spikes}min-features=1", FUSE],
            "lists": [f"--snn-sparsify={spikes}min-features=1 crossover=1"],
            # The lists module with the counts in the neuron kernels: a
            # layer of a multiple of 32 neurons also writes its input
            # gradient's occupancy bits for compact_columns.
            "fused-lists": [f"--snn-sparsify={spikes}min-features=1 crossover=1",
                            FUSE]}


# The event-driven weight gradients read x as bits only with spike-bits;
# "lists" is the event module without it (compact_rows lists x's nonzeros
# per row, event_weight_grad_lists reads them).
SPIKE_BITS = {"dispatch", "event", "fused"}


BACKWARD_VARIANTS = backward_variants(False)


def band_name(band):
    return "inf" if band == float("inf") else f"{band:g}"


def parse_band(text):
    """B or B@D: a band and the input density (default 0.3)."""
    band, _, density = text.partition("@")
    return float(band), float(density) if density else 0.3


def case_name(band, density):
    return f"b{band_name(band)}" + ("" if density == 0.3 else f"-x{density:g}")


def prepare_backward(snn_opt, d, T, B, K, N, bands, target, net_input=False):
    """Per surrogate band: the module compiled dense, with the dispatch and
    always event-driven (sparsify after autodiff marks the linear_bwd ops
    too), and fresh spikes (at the band's density), weights and labels."""
    model = MODEL.format(T=T, B=B, K=K, N=N)
    if net_input:  # fc1 on the network input
        model = re.sub(r'  %s0 = snn.if .*\n', "", model).replace("%s0,", "%x,")
    with open(f"{d}/model.mlir", "w") as f:
        f.write(model)
    for band, density in bands:
        case = f"{d}/{case_name(band, density)}"
        os.makedirs(case, exist_ok=True)
        autodiff = f"--snn-autodiff=optimizer=sgd grad-threshold={band_name(band)}"
        for name, passes in backward_variants(net_input).items():
            bits = " spike-bits=true" if name in SPIKE_BITS else ""
            run(snn_opt, f"{d}/model.mlir", autodiff, *passes,
                f"--snn-compile=output={case}/{name}.snnmod target={target}{bits}",
                "-o", "/dev/null")

        def draw(rng):
            x = (rng.random((T, B, K)) < density).astype(np.float32)
            if net_input:
                x *= rng.choice(np.array([1.0, 2.0, 0.5], np.float32), x.shape)
            weights = {"fc1.weight": rng.normal(0, 1.5 / np.sqrt(K), (N, K)),
                       "fc1.bias": rng.normal(0.3, 0.2, (N,)),
                       # Wide enough that some output membranes come near the
                       # threshold: the band lets gradient into both layers.
                       "fc2.weight": rng.normal(0, 4.0 / np.sqrt(N), (5, N))}
            write_case(case, x, weights, rng.integers(0, 5, B))
        draw_well_conditioned(draw, lambda: reference_after_forward(f"{case}/event.snnmod", case))


def reference_step(case, name):
    """The float64 reference's training forward and backward of the case's
    `name` module on its weights, input and labels."""
    mod = reference_after_forward(f"{case}/{name}.snnmod", case)
    mod.run("backward")
    return mod


def rounding_zero(reference, *got):
    """A gradient that is zero in exact arithmetic: float64 leaves only
    rounding (|g| < 1e-9) and so does float32 (|g| < 1e-6). E.g. an input of
    no spikes at all where no output comes near its threshold: the float64
    bias gradient is ~1e-19, each float32 module's a different ~1e-10."""
    return float(np.abs(reference).max(initial=0.0)) < 1e-9 and \
        all(float(np.abs(g).max(initial=0.0)) < 1e-6 for g in got)


def nan_worst(r):
    return r if np.isfinite(r) else float("inf")


def worst_vs_reference(grads, mod):
    """The largest relative difference of the nonzero parameter gradients
    from the float64 reference's."""
    # NaN counts as the worst (max() would keep whichever came first).
    return max([nan_worst(rel(grads[t["name"]], mod.get(t["name"])))
                for t in mod.m["tensors"]
                if t["name"].startswith("grad:") and "grad_of" in t
                and np.any(mod.get(t["name"]))
                and not rounding_zero(mod.get(t["name"]), grads[t["name"]])],
               default=0.0)


def compare_backward(snn_run, d, bands, device):
    """Gradients of the three modules per band; one line per band with the
    density of each event-driven backward's output gradient."""
    failures = 0
    for band, density in bands:
        case = f"{d}/{case_name(band, density)}"
        grads = {}
        for name in BACKWARD_VARIANTS:
            # NaN in every planned buffer first: a kernel that reads what no
            # kernel wrote (event_linear_band leaves gx outside the band
            # unwritten, its reader must not load it) shows up as NaN.
            run(snn_run, f"{case}/{name}.snnmod", "grads", "--device", device,
                "--weights", f"{case}/w.safetensors", "--data", f"{case}/x.npy",
                "--labels", f"{case}/y.npy", "--output", f"{case}/{name}.grads.safetensors",
                env={"SNNRT_MEMORY_PLAN": "poison"})
            grads[name] = read_safetensors(f"{case}/{name}.grads.safetensors")[0]
        problems = []
        for k in grads["dispatch"]:
            if not np.array_equal(grads["fused"][k], grads["dispatch"][k]):
                problems.append(f"fused: {k} differs from the dispatch's")
        # Each count fused into a neuron kernel replaces one spike_density
        # (the network input's forward count stays a spike_density).
        (fused_ops, fused_counts), (dispatch_ops, _) = (count_ops(case, "fused"),
                                                        count_ops(case, "dispatch"))
        if fused_counts == 0 or fused_ops + fused_counts != dispatch_ops:
            problems.append(f"fused: {fused_ops} spike_density ops and {fused_counts} "
                            f"fused counts for the dispatch's {dispatch_ops} ops")
        # The float64 reference runs the event-driven module's manifest.
        mod = reference_step(case, "event")

        def off_dense(name, k):
            """How far a gradient is from the dense module's; 0 when it is
            within 1e-6 of float64 itself (the event-driven weight
            gradients sum with compensation: over long sums the GEMM's
            float32 rounding is what differs)."""
            if not np.any(grads["dense"][k]):
                return float(np.abs(grads[name][k]).max())
            if k.startswith("grad:") and \
                    rounding_zero(mod.get(k), grads[name][k], grads["dense"][k]):
                return 0.0
            off = rel(grads[name][k], grads["dense"][k])
            if off > 1e-6 and k.startswith("grad:") and \
                    rel(grads[name][k], mod.get(k)) <= 1e-6:
                return 0.0
            return off
        for name in ("dispatch", "event", "lists"):
            worst = max(off_dense(name, k) for k in grads["dense"])
            if not worst <= 1e-6:
                problems.append(f"{name}: loss/gradients differ by {worst:.1e}")
        ref_worst = worst_vs_reference(grads["event"], mod)
        ref_worst = max(ref_worst, rel(grads["event"]["loss"], mod.get("loss")))
        if not ref_worst < 1e-4:
            problems.append(f"event vs float64 reference: {ref_worst:.1e}")
        densities = [op for o in mod.m["programs"]["backward"]
                     for op in o.get("of", []) if op["op"] == "spike_density"]
        if len(densities) != 2:
            problems.append(f"{len(densities)} event-driven backwards, expected 2")
        shares = " ".join(f"{np.count_nonzero(mod.get(op['in'][0])) / mod.numel(op['in'][0]):.4f}"
                          for op in densities)
        bits = [op for o in mod.m["programs"]["backward"] for op in o.get("of", [])
                if op["op"] == "event_weight_grad_bits"]
        values = sum(bool(op.get("x_values")) for op in bits)
        # The lists module against the float64 reference of its own
        # manifest (compact_rows and event_weight_grad_lists in float64).
        lists_mod = reference_step(case, "lists")
        lists_worst = worst_vs_reference(grads["lists"], lists_mod)
        if not lists_worst < 1e-4:
            problems.append(f"lists vs float64 reference: {lists_worst:.1e}")
        lists = [op for o in lists_mod.m["programs"]["backward"]
                 for op in o.get("of", []) if op["op"] == "event_weight_grad_lists"]
        if any(op["op"] == "event_weight_grad_bits"
               for o in lists_mod.m["programs"]["backward"] for op in o.get("of", [])):
            problems.append("lists: its weight gradients read bits without spike-bits")
        # The fused module's fc2 computes lif1's input gradient in lif1's
        # band only (event_linear_band, --snn-fuse) when the band is
        # finite: its float64 reference masks it too.
        fused_mod = reference_step(case, "fused")
        band_ops = sum(op["op"] == "event_linear_band"
                       for o in fused_mod.m["programs"]["backward"]
                       for op in o.get("of", []))
        if band_ops != (1 if np.isfinite(band) else 0):
            problems.append(f"fused: {band_ops} event_linear_band ops")
        fused_worst = worst_vs_reference(grads["fused"], fused_mod)
        if not fused_worst < 1e-4:
            problems.append(f"fused vs float64 reference: {fused_worst:.1e}")
        # compact_columns from the neuron backward's gradient bits: the
        # lists module's gradients bit for bit, and its own reference.
        for k in grads["lists"]:
            if not np.array_equal(grads["fused-lists"][k], grads["lists"][k]):
                problems.append(f"fused-lists: {k} differs from the lists module's")
        fused_lists_mod = reference_step(case, "fused-lists")
        fused_lists_worst = worst_vs_reference(grads["fused-lists"], fused_lists_mod)
        if not fused_lists_worst < 1e-4:
            problems.append(f"fused-lists vs float64 reference: {fused_lists_worst:.1e}")
        gy_bits = sum(bool(op.get("gy_bits"))
                      for o in fused_lists_mod.m["programs"]["backward"]
                      for op in o.get("of", []) if op["op"] == "compact_columns")
        # compact_rows in the lists module's backward: none where the
        # forward's tiles always list the spikes the weight gradient reads.
        relisted = sum(op["op"] == "compact_rows" for o in lists_mod.m["programs"]["backward"]
                       for op in o.get("of", []))
        print(f"BAND {band_name(band)} x-density={density:g} grad-density={shares} "
              f"bits={len(bits)} values={values} "
              f"lists={len(lists)} list-values={sum(bool(op.get('x_values')) for op in lists)} "
              f"tiles={count_tiles(mod, 'train_forward')} relisted={relisted} "
              f"band={band_ops} gy-bits={gy_bits} "
              f"ref_rel={ref_worst:.1e} lists_ref_rel={lists_worst:.1e} "
              + ("OK" if not problems else "FAIL " + "; ".join(problems)))
        failures += bool(problems)
    return failures


def cpu_target():
    """The target (and further --snn-compile options) of the modules the
    CPU modes compile: cpu, or $SPARSE_CHECK_TARGET (e.g. "all
    event-tiles=true": the forms of a module with GPU kernels, such as
    event_linear_tiles, run on the CPU)."""
    return os.environ.get("SPARSE_CHECK_TARGET", "cpu")


def gpu_target():
    """What the prepare modes compile: target=all, with event_linear_tiles
    when SPARSE_CHECK_TILES=1."""
    return "all event-tiles=true" if os.environ.get("SPARSE_CHECK_TILES") == "1" else "all"


def main():
    mode = sys.argv[1]
    net_input = mode.endswith("-input")
    mode = mode.removesuffix("-input")
    if mode.endswith("backward"):
        # backward SNN_OPT SNN_RUN DIR T B K N BAND... (CPU, CI),
        # prepare-backward SNN_OPT DIR T B K N BAND...,
        # compare-backward SNN_RUN DIR DEVICE BAND...
        args = sys.argv[2:]
        if mode == "compare-backward":
            snn_run, d, device = args[:3]
            sys.exit(1 if compare_backward(snn_run, d, [parse_band(v) for v in args[3:]],
                                           device) else 0)
        snn_opt = args.pop(0)
        snn_run = args.pop(0) if mode == "backward" else None
        d = args.pop(0)
        T, B, K, N = (int(v) for v in args[:4])
        bands = [parse_band(v) for v in args[4:]]
        prepare_backward(snn_opt, d, T, B, K, N, bands,
                         cpu_target() if snn_run else gpu_target(), net_input)
        if snn_run:
            sys.exit(1 if compare_backward(snn_run, d, bands, "cpu") else 0)
        return
    if mode == "all":  # SNN_OPT SNN_RUN DIR T B K N DENSITY...
        snn_opt, snn_run, d = sys.argv[2:5]
        T, B, K, N = (int(v) for v in sys.argv[5:9])
        densities = [float(v) for v in sys.argv[9:]]
        prepare(snn_opt, d, T, B, K, N, densities, cpu_target())
        sys.exit(1 if compare(snn_run, d, densities, "cpu") else 0)
    if mode == "prepare":  # SNN_OPT DIR T B K N DENSITY...
        snn_opt, d = sys.argv[2:4]
        T, B, K, N = (int(v) for v in sys.argv[4:8])
        prepare(snn_opt, d, T, B, K, N, [float(v) for v in sys.argv[8:]], gpu_target())
        return
    if mode == "compare":  # SNN_RUN DIR DEVICE DENSITY...
        snn_run, d, device = sys.argv[2:5]
        sys.exit(1 if compare(snn_run, d, [float(v) for v in sys.argv[5:]], device) else 0)
    sys.exit(f"unknown mode {mode!r}: all, prepare or compare")


if __name__ == "__main__":
    main()
