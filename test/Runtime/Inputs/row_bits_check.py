#!/usr/bin/env python3
"""Spikes written as row bits (--snn-compile row-bits, on by default) against
the same module with float spikes (row-bits=false), on fresh random data.

  row_bits_check.py all SNN_OPT SNN_RUN DIR T B I K N BAND@DENSITY...  (CPU, CI)
  row_bits_check.py prepare SNN_OPT DIR T B I K N BAND@DENSITY...
  row_bits_check.py compare SNN_RUN DIR DEVICE BAND@DENSITY...         (cuda:0)

The model: input [T, B, I] -> fc1 (I -> K) -> lif1 -> fc2 (K -> N) -> lif2
-> fc3 (N -> 5) -> li readout, trained with the surrogate band BAND and
--snn-sparsify crossover=1 (always event-driven), --snn-fuse (the neuron
kernels count their spikes) and event-tiles=true (fc1 and fc2, N >= 256, as
compact_rows then event_linear_tiles). lif1's spikes feed only fc2's tiles
and fc2's weight gradient over the forward's row lists: with row bits its
training forward writes them as bits and fc2's compact_rows reads those.
lif2's spikes feed the 5-wide readout: with a finite band (--snn-fuse
linear-grad: lif2's backward forms the readout's gx) they are row bits too,
which the readout's per-row event_linear lists from the words and its
weight gradient reads in thin_weight_grad_bits (+ time_sum); with an
infinite band they stay floats. Per case: the manifest says so (lif1, and
lif2 with a finite band, write `spike_bits` rows; one compact_rows, and
with lif2 one event_linear and one thin_weight_grad_bits, read bits; none
in the float module), the loss and every gradient of the two modules are
equal bit for bit except the readout's weight gradient over bits (its own
fixed order of sums: within 1e-6 of the dense GEMM's), and all against the
float64 reference that runs the row-bits module's own manifest (within
1e-4, float32 against float64; a draw with a float64 membrane within 1e-5
of a threshold or band edge, which float32 cannot resolve, is drawn again).
DENSITY is that of the input spikes; fc1's weights make lif1 fire at about
that rate too.
"""
import os
import sys

import numpy as np

from snnref.manifest import Module
from snnref.tensorio import read_safetensors
from grad_band_check import reference_after_forward
from sparse_check import draw_well_conditioned, rel, run, write_case

MODEL = """
func.func @forward(%x: tensor<{T}x{B}x{I}xf32>) -> tensor<{T}x{B}x5xf32> {{
  %w1 = snn.param "fc1.weight" {{init = #snn.init<kaiming_uniform>}} : tensor<{K}x{I}xf32>
  %h1 = snn.linear %x, %w1 : tensor<{T}x{B}x{I}xf32>, tensor<{K}x{I}xf32> -> tensor<{T}x{B}x{K}xf32>
  %s1 = snn.lif %h1 {{k = 0.3, c = 1.0, snn.name = "lif1"}} : tensor<{T}x{B}x{K}xf32>
  %w2 = snn.param "fc2.weight" {{init = #snn.init<kaiming_uniform>}} : tensor<{N}x{K}xf32>
  %h2 = snn.linear %s1, %w2 : tensor<{T}x{B}x{K}xf32>, tensor<{N}x{K}xf32> -> tensor<{T}x{B}x{N}xf32>
  %s2 = snn.lif %h2 {{k = 0.3, c = 1.0, snn.name = "lif2"}} : tensor<{T}x{B}x{N}xf32>
  %w3 = snn.param "fc3.weight" {{init = #snn.init<kaiming_uniform>}} : tensor<5x{N}xf32>
  %h3 = snn.linear %s2, %w3 : tensor<{T}x{B}x{N}xf32>, tensor<5x{N}xf32> -> tensor<{T}x{B}x5xf32>
  %o = snn.li %h3 {{k = 0.3, c = 1.0, snn.name = "readout"}} : tensor<{T}x{B}x5xf32>
  return %o : tensor<{T}x{B}x5xf32>
}}
"""

VARIANTS = {"bits": "", "floats": " row-bits=false"}


def parse_case(text):
    band, _, density = text.partition("@")
    return band, float(density or 0.1)


def case_dir(d, case):
    return f"{d}/c{case.replace('@', '_')}"


def prepare(snn_opt, d, T, B, I, K, N, cases):
    with open(f"{d}/model.mlir", "w") as f:
        f.write(MODEL.format(T=T, B=B, I=I, K=K, N=N))
    for case in cases:
        band, density = parse_case(case)
        c = case_dir(d, case)
        os.makedirs(c, exist_ok=True)
        for name, extra in VARIANTS.items():
            run(snn_opt, f"{d}/model.mlir",
                f"--snn-autodiff=optimizer=sgd loss=ce_membrane grad-threshold={band}",
                "--snn-sparsify=input-is-spikes min-features=1 crossover=1", "--snn-fuse",
                f"--snn-compile=output={c}/{name}.snnmod target=all event-tiles=true"
                + extra, "-o", "/dev/null")

        def draw(rng):
            x = (rng.random((T, B, I)) < density).astype(np.float32)
            # A unit's input is about N(mean, sd); a mean near the threshold
            # makes lif1 fire at about the input's density or more.
            weights = {"fc1.weight": rng.normal(0.5 / (density * I + 1),
                                                1.5 / np.sqrt(density * I + 1), (K, I)),
                       "fc2.weight": rng.normal(0, 2.0 / np.sqrt(K * density + 1), (N, K)),
                       "fc3.weight": rng.normal(0, 1.0 / np.sqrt(N), (5, N))}
            write_case(c, x, weights, rng.integers(0, 5, B))
        draw_well_conditioned(draw, lambda: reference_after_forward(f"{c}/bits.snnmod", c))


def row_bits_ops(path):
    """(neuron ops writing row bits, then per reader kind -- compact_rows,
    event_linear, thin_weight_grad_bits -- the ops reading bits)."""
    ops = [o for p in Module(path).m["programs"].values() for o in p]
    readers = [sub["op"] for o in ops for sub in o.get("of", []) if sub.get("x_bits")]
    return (sum(1 for o in ops if o.get("spike_bits") == "rows"),
            readers.count("compact_rows"), readers.count("event_linear"),
            readers.count("thin_weight_grad_bits"))


def compare(snn_run, d, device, cases):
    failures = 0
    for case in cases:
        c = case_dir(d, case)
        problems = []
        grads = {}
        for name in VARIANTS:
            out = f"{c}/{name}-{device.replace(':', '')}.safetensors"
            run(snn_run, f"{c}/{name}.snnmod", "grads", "--device", device,
                "--weights", f"{c}/w.safetensors", "--data", f"{c}/x.npy",
                "--labels", f"{c}/y.npy", "--output", out)
            grads[name] = read_safetensors(out)[0]
        ops = {name: row_bits_ops(f"{c}/{name}.snnmod") for name in VARIANTS}
        lif2_bits = parse_case(case)[0] != "inf"
        expected = (2, 1, 1, 1) if lif2_bits else (1, 1, 0, 0)
        if ops["bits"] != expected or ops["floats"] != (0, 0, 0, 0):
            problems.append(f"row-bits ops {ops}")
        for key, value in grads["floats"].items():
            mine = np.asarray(grads["bits"][key])
            if lif2_bits and key == "grad:fc3.weight":
                if not rel(mine, value) <= 1e-6:
                    problems.append(f"{key} not within 1e-6 ({rel(mine, value):.1e})")
            elif not np.array_equal(mine, np.asarray(value)):
                problems.append(f"{key} differs (rel {rel(mine, value):.1e})")
        # The float64 reference runs the row-bits module's manifest.
        mod = reference_after_forward(f"{c}/bits.snnmod", c)
        x = np.load(f"{c}/x.npy")
        lif1 = next(t for t in mod.m["tensors"] if t.get("name") == "lif1.bits")
        rate = float(np.unpackbits(np.asarray(mod.get(mod.m["tensors"].index(lif1)),
                                              np.uint32).view(np.uint8)).mean())
        mod.run("backward")
        worst = max(rel(grads["bits"][t["name"]], mod.get(t["name"]))
                    for t in mod.m["tensors"] if t.get("name", "").startswith("grad:fc"))
        if not worst <= 1e-4:
            problems.append(f"against float64 {worst:.1e}")
        print(f"CASE {case} input={np.count_nonzero(x) / x.size:.4f} lif1={rate:.4f} "
              f"ref_rel={worst:.1e} " + ("OK" if not problems else "FAIL " + "; ".join(problems)))
        failures += bool(problems)
    return failures


def main():
    a = sys.argv[1:]
    if len(a) >= 9 and a[0] == "all":
        T, B, I, K, N = map(int, a[4:9])
        prepare(a[1], a[3], T, B, I, K, N, a[9:])
        sys.exit(1 if compare(a[2], a[3], "cpu", a[9:]) else 0)
    if len(a) >= 8 and a[0] == "prepare":
        T, B, I, K, N = map(int, a[3:8])
        prepare(a[1], a[2], T, B, I, K, N, a[8:])
        return
    if len(a) >= 4 and a[0] == "compare":
        sys.exit(1 if compare(a[1], a[2], a[3], a[4:]) else 0)
    sys.exit(__doc__)


if __name__ == "__main__":
    main()
