#!/usr/bin/env python3
"""Weights that make the hidden layers of bench/gpu-sparse.sh's SHD network
(700 -> 1472 LIF -> 1472 LIF -> 20 LI) fire at a chosen rate when its input
spikes have that density, so that a benchmark at "activity D" has every
event-driven layer's input at about D (with the initial weights, the hidden
layers are almost silent at low input density).

  sparse_activity.py calibrate SNN_RUN MODULE "DENSITIES" SCALES.json
      here: per density, bisects the standard deviation of fc1 (then fc2)
      until lif1 (then lif2) fires at the density, on `snn-run infer` (CPU)
      of MODULE (the network at a small batch) with input spikes of that
      density, the same at every step (as `snn-run bench --density`).
  sparse_activity.py weights SCALES.json DENSITY OUT.safetensors
      the weights of one density (numpy, seeded: the same on every machine).
  sparse_activity.py input DENSITY T B K OUT.npy
      input spikes [T, B, K] of that density, the same at every step.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from snnref.tensorio import write_safetensors

HIDDEN, INPUTS, CLASSES = 1472, 700, 20


def make_weights(sigma1, sigma2):
    rng = np.random.default_rng(1234)
    return {"fc1.weight": rng.normal(0, sigma1, (HIDDEN, INPUTS)).astype(np.float32),
            "fc2.weight": rng.normal(0, sigma2, (HIDDEN, HIDDEN)).astype(np.float32),
            "fc3.weight": rng.normal(0, HIDDEN ** -0.5, (CLASSES, HIDDEN)).astype(np.float32)}


def make_input(density, T, B, K):
    x = (np.random.default_rng(99).random((B, K)) < density).astype(np.float32)
    return np.broadcast_to(x, (T, B, K)).copy()


def rates(snn_run, module, weights, data):
    out = subprocess.run([snn_run, module, "infer", "--device", "cpu", "--weights", weights,
                          "--data", data], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"snn-run infer failed:\n{out.stdout}{out.stderr}")
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"spike rate (\S+)\s+([\d.]+)", out.stdout + out.stderr)}


def calibrate(snn_run, module, densities, path):
    T, B = 100, int(re.search(r"shd(\d+)", module).group(1))
    scales = {}
    with tempfile.TemporaryDirectory() as tmp:
        data, weights = f"{tmp}/x.npy", f"{tmp}/w.safetensors"
        for d in densities:
            np.save(data, make_input(d, T, B, INPUTS))
            sigma = [0.05, 0.05]
            for layer in (0, 1):
                lo, hi = np.log(1e-3), np.log(10.0)
                for _ in range(12):  # bisection in log sigma
                    sigma[layer] = float(np.exp((lo + hi) / 2))
                    write_safetensors(weights, make_weights(*sigma))
                    rate = rates(snn_run, module, weights, data)[f"lif{layer + 1}"]
                    if abs(rate - d) <= 0.05 * d:
                        break
                    lo, hi = (np.log(sigma[layer]), hi) if rate < d else (lo, np.log(sigma[layer]))
            got = rates(snn_run, module, weights, data)
            scales[f"{d:g}"] = {"fc1": sigma[0], "fc2": sigma[1],
                                "lif1": got["lif1"], "lif2": got["lif2"]}
            print(f"density {d:g}: sigma fc1 {sigma[0]:.4g} fc2 {sigma[1]:.4g} -> "
                  f"lif1 {got['lif1']:.4f} lif2 {got['lif2']:.4f}")
    with open(path, "w") as f:
        json.dump(scales, f, indent=1)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "calibrate" and len(sys.argv) == 6:
        calibrate(sys.argv[2], sys.argv[3], [float(d) for d in sys.argv[4].split()], sys.argv[5])
    elif mode == "weights" and len(sys.argv) == 5:
        s = json.load(open(sys.argv[2]))[f"{float(sys.argv[3]):g}"]
        write_safetensors(sys.argv[4], make_weights(s["fc1"], s["fc2"]))
    elif mode == "input" and len(sys.argv) == 7:
        d, T, B, K = float(sys.argv[2]), *map(int, sys.argv[3:6])
        np.save(sys.argv[6], make_input(d, T, B, K))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
