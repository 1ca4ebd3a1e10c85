#!/usr/bin/env python3
"""Imported NIR graphs compute what NIR says: each test file (make_nir.py
CASE) is imported, fused and compiled by snn-opt, run by snn-run on fresh
random input, and compared with nir_reference.py, a NumPy simulation of the
NIR graph read straight from the file (independent of the importer).

usage: simulate_check.py SNN_OPT SNN_RUN WORKDIR CASE... [--device cpu|cuda]
       simulate_check.py SNN_OPT - WORKDIR CASE... --prepare   (compile, inputs, references)
       simulate_check.py - SNN_RUN WORKDIR CASE... --device cuda --prepared

Outputs must agree within 1e-4 of their range (float32 against float64);
some output must be non-zero. Prints one line per case, then OK.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import nir_reference  # noqa: E402

# Per case: time steps, batch, dt and an input range (gain * U(low, 1)) that
# makes neurons fire.
SETTINGS = {
    "single_lif": dict(T=30, B=2, dt=1e-3, gain=1.0),
    "mlp": dict(T=40, B=3, dt=1e-4, gain=12.0),
    "conv": dict(T=20, B=2, dt=5e-4, gain=500.0),
    "conv_same": dict(T=20, B=2, dt=1e-4, gain=12.0),
    "misc": dict(T=30, B=2, dt=1e-4, gain=2.0),
    "recurrent": dict(T=40, B=3, dt=1e-4, gain=12.0, low=-1.0),
    "nested": dict(T=40, B=3, dt=1e-4, gain=30.0, low=-1.0),
    "old": dict(T=40, B=3, dt=1e-3, gain=4.0, low=-1.0),
    "conv1d": dict(T=30, B=3, dt=1e-3, gain=6.0, low=-0.5),
    "conv_same_even": dict(T=20, B=2, dt=1e-4, gain=12.0),
    "delays": dict(T=40, B=3, dt=1e-4, gain=30.0, low=-0.3),
    "mixed_delays": dict(T=40, B=3, dt=1e-4, gain=30.0, low=-0.3),
    "flatten_mid": dict(T=20, B=2, dt=1e-3, gain=6.0, low=-0.5),
    "rec_bias_min": dict(T=12, B=2, dt=1e-4, gain=5.0, low=-1.0),
    "rec_bias": dict(T=40, B=3, dt=1e-4, gain=12.0, low=-1.0),
    "rec_subgraph": dict(T=40, B=3, dt=1e-4, gain=12.0, low=-1.0),
    "rec_delay_bias": dict(T=40, B=3, dt=1e-4, gain=30.0, low=-0.3),
    "two_loops": dict(T=40, B=3, dt=1e-4, gain=12.0, low=-0.5),
}


def prepare(a, rng, case, target):
    """Writes the NIR file, compiles it, draws an input, simulates it."""
    s = SETTINGS[case]
    nir = os.path.join(a.work, case + ".nir")
    module = os.path.join(a.work, case + ".snnmod")
    subprocess.run([sys.executable, os.path.join(HERE, "make_nir.py"), nir, case],
                   check=True)
    nodes, edges = nir_reference.read_graph(nir)
    inputs = [n for n in nodes if nodes[n]["type"] == "Input"]
    shape = [int(d) for d in np.ravel(nodes[inputs[0]]["shape"])]
    subprocess.run([a.snn_opt, nir, f"--nir-time-steps={s['T']}",
                    f"--nir-batch={s['B']}", f"--nir-dt={s['dt']}",
                    "--snn-temporal-fusion",
                    f"--snn-compile=output={module} target={target}",
                    "-o", os.devnull], check=True, stderr=subprocess.DEVNULL)
    x = (s["gain"] * rng.uniform(s.get("low", 0.0), 1.0, [s["T"], s["B"]] + shape)).astype(np.float32)
    np.save(os.path.join(a.work, case + ".x.npy"), x)
    outs = nir_reference.Simulator(nodes, edges, s["dt"], "hard").run(
        {inputs[0]: x.astype(np.float64)})
    np.save(os.path.join(a.work, case + ".ref.npy"), outs[sorted(outs)[0]])


def check(a, case):
    s = SETTINGS[case]
    module = os.path.join(a.work, case + ".snnmod")
    xfile, yfile = os.path.join(a.work, case + ".x.npy"), os.path.join(a.work, case + ".y.npy")
    subprocess.run([a.snn_run, module, "infer", "--device", a.device,
                    "--data", xfile, "--output", yfile],
                   check=True, stdout=subprocess.DEVNULL)
    got = np.load(yfile).astype(np.float64)
    ref = np.load(os.path.join(a.work, case + ".ref.npy"))
    ref = ref.reshape(got.shape) if ref.size == got.size else ref
    if got.shape != ref.shape:
        sys.exit(f"{case}: output shape {got.shape}, reference {ref.shape}")
    scale = max(1.0, float(np.max(np.abs(ref))))
    err = float(np.max(np.abs(got - ref)))
    if err > 1e-4 * scale:
        bad = np.argwhere(np.abs(got - ref) > 1e-4 * scale)[:5].tolist()
        sys.exit(f"{case}: snn-run differs from the NIR reference by {err:.3g} "
                 f"(first at {bad})")
    if not np.any(ref != 0):
        sys.exit(f"{case}: the reference output is all zero; the check proves nothing")
    print(f"{case}: T={s['T']} B={s['B']} on {a.device}: outputs agree "
          f"(max |diff| {err:.2g}, {np.count_nonzero(ref)} non-zero)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("snn_opt")
    ap.add_argument("snn_run")
    ap.add_argument("work")
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--prepare", action="store_true")
    ap.add_argument("--prepared", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rng = np.random.default_rng()  # fresh draws every run
    target = "all" if a.prepare else ("cuda" if a.device.startswith("cuda") else "cpu")
    for case in a.cases:
        if not a.prepared:
            prepare(a, rng, case, target)
        if not a.prepare:
            check(a, case)
    print("prepared" if a.prepare else "OK")

if __name__ == "__main__":
    main()
