#!/usr/bin/env python3
"""Event-driven convolutions (--snn-sparsify="target=cpu") against the dense
path and the float64 reference, on fresh random spikes at given densities.

  event_conv_check.py SNN_OPT SNN_RUN DIR LAYOUT T B C H W O STRIDE DENSITY...

LAYOUT is nchw or nhwc (--snn-channels-last's layout, written directly).
The model: a 1x1 convolution whose weight is the identity (trainable, so
that the layer under test computes its input gradient too), an IF layer
with threshold 1 on its 0/1 output (its spikes are the input, so the
convolution sees exactly the drawn density), a 3x3
convolution C -> O with padding 1, the stride and a bias, LIF, flatten, a
linear readout to 4 classes, LIF, rate loss. Compiled dense, with the
default crossover (the dispatch picks a path per density) and with
crossover=1 (always event-driven), all target=cpu. For each density: the
infer outputs of both event-driven modules equal to the dense module's bit
for bit, the loss and every gradient within 1e-6 (the weights lie on a
2^-20 grid: sums of 0/1 inputs times them are exact in float32 in any
order, so the dense and the event-driven sums agree exactly), the
event-driven module's gradients against the float64 reference within 1e-4,
and the path the dispatch took (the decision the reference computes)
against what `snn-run infer` reports for the layer.
"""
import os
import re
import sys

import numpy as np

from grad_band_check import reference_after_forward
from snnref.manifest import Module
from snnref.tensorio import read_safetensors
from sparse_check import draw_well_conditioned, rel, run, write_case

MODEL = """
func.func @forward(%x: tensor<{T}x{B}x{XS}xf32>) -> tensor<{T}x{B}x4xf32> {{
  %w0 = snn.param "conv0.weight" {{init = #snn.init<kaiming_uniform>}} : tensor<{W0}xf32>
  %h0 = snn.conv2d %x, %w0 {{{LAST0}}} : tensor<{T}x{B}x{XS}xf32>, tensor<{W0}xf32> -> tensor<{T}x{B}x{XS}xf32>
  %s0 = snn.if %h0 {{snn.name = "in"}} : tensor<{T}x{B}x{XS}xf32>
  %w1 = snn.param "conv.weight" {{init = #snn.init<kaiming_uniform>}} : tensor<{WS}xf32>
  %b1 = snn.param "conv.bias" {{init = #snn.init<uniform>, init_scale = 0.1}} : tensor<{O}xf32>
  %h1 = snn.conv2d %s0, %w1, %b1 {{padding = array<i64: 1, 1>, stride = array<i64: {S}, {S}>{LAST}, snn.name = "conv"}} : tensor<{T}x{B}x{XS}xf32>, tensor<{WS}xf32>, tensor<{O}xf32> -> tensor<{T}x{B}x{YS}xf32>
  %s1 = snn.lif %h1 {{k = 0.5, c = 0.5, snn.name = "lif1"}} : tensor<{T}x{B}x{YS}xf32>
  %f = snn.flatten %s1 : tensor<{T}x{B}x{YS}xf32> -> tensor<{T}x{B}x{F}xf32>
  %w2 = snn.param "fc.weight" {{init = #snn.init<kaiming_uniform>}} : tensor<4x{F}xf32>
  %h2 = snn.linear %f, %w2 : tensor<{T}x{B}x{F}xf32>, tensor<4x{F}xf32> -> tensor<{T}x{B}x4xf32>
  %s2 = snn.lif %h2 {{k = 0.5, c = 0.5, snn.name = "lif2"}} : tensor<{T}x{B}x4xf32>
  return %s2 : tensor<{T}x{B}x4xf32>
}}
"""

# The readout stays dense (min-features): only the convolution differs.
VARIANTS = {"dense": [],
            "dispatch": ["--snn-sparsify=target=cpu min-features=1000000"],
            "event": ["--snn-sparsify=target=cpu min-features=1000000 crossover=1"]}


def main(snn_opt, snn_run, d, layout, T, B, C, H, W, O, S, densities):
    last = layout == "nhwc"
    OH, OW = (H - 1) // S + 1, (W - 1) // S + 1
    dims = lambda *v: "x".join(str(i) for i in v)
    xs = dims(H, W, C) if last else dims(C, H, W)
    ws = dims(O, 3, 3, C) if last else dims(O, C, 3, 3)
    ys = dims(OH, OW, O) if last else dims(O, OH, OW)
    with open(f"{d}/model.mlir", "w") as f:
        f.write(MODEL.format(T=T, B=B, XS=xs, WS=ws, YS=ys, O=O, S=S,
                             F=O * OH * OW, LAST=", channels_last" if last else "",
                             W0=dims(C, 1, 1, C) if last else dims(C, C, 1, 1), LAST0="channels_last" if last else ""))
    for name, passes in VARIANTS.items():
        run(snn_opt, f"{d}/model.mlir", "--snn-autodiff=optimizer=sgd", *passes,
            f"--snn-compile=output={d}/{name}.snnmod target=cpu", "-o", "/dev/null")
    wshape = (O, 3, 3, C) if last else (O, C, 3, 3)
    failures = 0
    for density in densities:
        case = f"{d}/d{density:g}"
        os.makedirs(case, exist_ok=True)

        def draw(rng):
            x = (rng.random((T, B) + ((H, W, C) if last else (C, H, W)))
                 < density).astype(np.float32)
            weights = {"conv0.weight": np.eye(C).reshape(C, 1, 1, C)
                       if last else np.eye(C).reshape(C, C, 1, 1),
                       "conv.weight": rng.normal(0, 2.0 / np.sqrt(9 * C), wshape),
                       "conv.bias": rng.normal(0.3, 0.2, (O,)),
                       "fc.weight": rng.normal(0, 2.0 / np.sqrt(O * OH * OW),
                                               (4, O * OH * OW))}
            write_case(case, x, weights, rng.integers(0, 4, B))
        draw_well_conditioned(draw, lambda: reference_after_forward(f"{d}/event.snnmod", case))
        x = np.load(f"{case}/x.npy")
        out, grads, reports = {}, {}, {}
        for name in VARIANTS:
            reports[name] = run(snn_run, f"{d}/{name}.snnmod", "infer", "--device", "cpu",
                                "--weights", f"{case}/w.safetensors",
                                "--data", f"{case}/x.npy",
                                "--output", f"{case}/{name}.out.npy")
            run(snn_run, f"{d}/{name}.snnmod", "grads", "--device", "cpu",
                "--weights", f"{case}/w.safetensors", "--data", f"{case}/x.npy",
                "--labels", f"{case}/y.npy", "--output", f"{case}/{name}.grads.safetensors")
            out[name] = np.load(f"{case}/{name}.out.npy")
            grads[name] = read_safetensors(f"{case}/{name}.grads.safetensors")[0]
        problems = []
        for name in ("dispatch", "event"):
            if not np.array_equal(out[name], out["dense"]):
                problems.append(f"{name}: output spikes differ in "
                                f"{int(np.sum(out[name] != out['dense']))} places")
            worst = max(rel(grads[name][k], grads["dense"][k]) if np.any(grads["dense"][k])
                        else float(np.abs(grads[name][k]).max())
                        for k in grads["dense"])
            if not worst <= 1e-6:
                problems.append(f"{name}: loss/gradients differ by {worst:.1e}")
        mod = reference_after_forward(f"{d}/event.snnmod", case)
        mod.run("backward")
        ref_worst = max(rel(grads["event"][t["name"]], mod.get(t["name"]))
                        for t in mod.m["tensors"]
                        if t["name"].startswith("grad:") and "grad_of" in t
                        and np.any(mod.get(t["name"])))
        ref_worst = max(ref_worst, rel(grads["event"]["loss"], mod.get("loss")))
        if not ref_worst < 1e-4:
            problems.append(f"event vs float64 reference: {ref_worst:.1e}")
        disp = Module(f"{d}/dispatch.snnmod")
        op = next(sub for o in disp.m["programs"]["infer"] for sub in o.get("of", [])
                  if sub["op"] == "spike_density")
        path = "event" if int(np.count_nonzero(x)) <= int(op["limit"]) else "dense"
        share = re.search(r"event layer conv\s+forward\s+input density [\d.]+, "
                          r"event path ([\d.]+) of \d+ calls", reports["dispatch"])
        if not share or float(share.group(1)) != (1.0 if path == "event" else 0.0):
            problems.append(f"snn-run reports {share.group(0) if share else 'no event path'}"
                            f" but the reference decision is {path}")
        print(f"DENSITY {density:g} actual={np.count_nonzero(x) / x.size:.4f} "
              f"dispatch={path} ref_rel={ref_worst:.1e} "
              + ("OK" if not problems else "FAIL " + "; ".join(problems)))
        failures += bool(problems)
    return failures


if __name__ == "__main__":
    if len(sys.argv) < 14 or sys.argv[4] not in ("nchw", "nhwc"):
        sys.exit(__doc__)
    ints = [int(v) for v in sys.argv[5:12]]
    sys.exit(1 if main(*sys.argv[1:5], *ints,
                       [float(v) for v in sys.argv[12:]]) else 0)
