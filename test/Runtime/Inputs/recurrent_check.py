#!/usr/bin/env python3
"""Recurrent networks end to end: random step-form models with recurrent
weights, feedback, a residual add, a delay line and a readout (the models of
the temporal fusion check), fused and compiled with snn-opt, run by snn-run,
and compared with a float64 evaluation of the step-form source IR, which is
independent of the compiler's lowering and of the runtime.

usage: recurrent_check.py SNN_OPT SNN_RUN WORKDIR [--device cpu|cuda] [--trials N]
       recurrent_check.py SNN_OPT - WORKDIR --prepare    (compile, inputs, references)
       recurrent_check.py - SNN_RUN WORKDIR --device cuda --prepared

The two-part form is for a GPU machine without snn-opt: prepare WORKDIR on a
machine with the compiler (target=all modules), run the check on the GPU.

The readout is a leaky integrator of spikes: outputs must agree within 1e-5
of their range (float32 against float64); a flipped spike would show as a
jump far above that. Prints one line per trial, then OK.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location(
    "fusion_numerics",
    os.path.join(HERE, "..", "..", "Dialect", "SNN", "Transforms", "Inputs",
                 "temporal_fusion_numerics.py"))
numerics = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(numerics)


def prepare(a, rng, trial, target):
    """Compiles one random model; writes its input and float64 reference."""
    T, B, I, H, O = (int(rng.integers(3, 12)), int(rng.integers(1, 5)),
                     int(rng.integers(2, 7)), int(rng.integers(2, 9)),
                     int(rng.integers(1, 4)))
    src = numerics.model(rng, T, B, I, H, O)
    path = os.path.join(a.work, f"model{trial}.mlir")
    module = os.path.join(a.work, f"model{trial}.snnmod")
    with open(path, "w") as f:
        f.write(src)
    subprocess.run([a.snn_opt, path, "--snn-temporal-fusion",
                    f"--snn-compile=output={module} target={target}",
                    "-o", os.devnull], check=True, stderr=subprocess.DEVNULL)
    manifest = json.load(open(os.path.join(module, "manifest.json")))
    kinds = [op["op"] for op in manifest["programs"]["infer"]]
    if "time_loop" not in kinds:
        sys.exit(f"trial {trial}: no time_loop in the compiled module: {kinds}")
    generic = subprocess.run(
        [a.snn_opt, path, "-mlir-print-op-generic",
         "-mlir-print-elementsattrs-with-hex-if-larger=100000"],
        capture_output=True, text=True, check=True).stdout
    # Fresh inputs until no membrane lies within 1e-4 of a threshold, where
    # float32 rounding could flip a spike that float64 decides the other way.
    for _ in range(100):
        x = rng.normal(0.5, 1.5, (T, B, I)).astype(np.float32)
        # The float32 rounding of the weights and input is the module's.
        ref = numerics.evaluate(generic, x.astype(np.float64))[0]
        if numerics.margin[0] > 1e-4:
            break
    else:
        sys.exit(f"trial {trial}: no input keeps the membranes off the thresholds")
    np.save(os.path.join(a.work, f"x{trial}.npy"), x)  # pre-encoded [T, N, sample]
    np.save(os.path.join(a.work, f"ref{trial}.npy"), ref)
    with open(os.path.join(a.work, f"shape{trial}.txt"), "w") as f:
        f.write(f"T={T} B={B} I={I} H={H} O={O}")


def check(a, trial):
    """Runs one prepared module with snn-run and compares."""
    module = os.path.join(a.work, f"model{trial}.snnmod")
    xfile = os.path.join(a.work, f"x{trial}.npy")
    yfile = os.path.join(a.work, f"y{trial}.npy")
    subprocess.run([a.snn_run, module, "infer", "--device", a.device,
                    "--data", xfile, "--output", yfile],
                   check=True, stdout=subprocess.DEVNULL)
    got = np.load(yfile).astype(np.float64)
    ref = np.load(os.path.join(a.work, f"ref{trial}.npy"))
    shape = open(os.path.join(a.work, f"shape{trial}.txt")).read()
    if got.shape != ref.shape:
        sys.exit(f"trial {trial}: output shape {got.shape}, reference {ref.shape}")
    scale = max(1.0, float(np.max(np.abs(ref))))
    err = float(np.max(np.abs(got - ref)))
    if err > 1e-5 * scale:
        sys.exit(f"trial {trial}: {shape}: snn-run differs from the step-form "
                 f"reference by {err:.3g} (model in {a.work}/model{trial}.mlir)")
    print(f"trial {trial}: {shape} on {a.device}: outputs agree (max |diff| {err:.2g})")
    return bool(np.any(ref != 0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("snn_opt")
    ap.add_argument("snn_run")
    ap.add_argument("work")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--trials", type=int, default=4)
    ap.add_argument("--prepare", action="store_true")
    ap.add_argument("--prepared", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rng = np.random.default_rng()  # fresh draws every run
    target = "all" if a.prepare else ("cuda" if a.device.startswith("cuda") else "cpu")
    if not a.prepared:
        for trial in range(a.trials):
            prepare(a, rng, trial, target)
    if a.prepare:
        print(f"prepared {a.trials} models in {a.work}")
        return
    active = False
    for trial in range(a.trials):
        active |= check(a, trial)
    if not active:
        sys.exit("every readout was zero: the check proves nothing")
    print("OK")

if __name__ == "__main__":
    main()
