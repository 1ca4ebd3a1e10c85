"""Shared pieces of the NIR interop check (see README.md).

A *case* is one model of one library. Its builder returns a `Case`:

  * `graph`: the NIR graph written by the library's own exporter;
  * `simulate(x)`: the library's own simulation of the model on the input
    `x [T, B, ...]` (float32 NumPy), returning the output `[T, B, ...]`;
  * `options`: the `snn-opt` import options that reproduce the library;
  * `expect`: "equal", or a short reason why the outputs are known to differ.

The forward direction (library -> NIR -> snn-opt -> snn-run) and the reverse
direction (snn-translate --export-nir -> the library's import_from_nir) are
run by run.py; this file holds the tool calls and the comparison.
"""
import dataclasses
import os
import subprocess
from typing import Callable, Optional

import numpy as np


@dataclasses.dataclass
class Case:
    library: str
    name: str
    graph: object                       # nir.NIRGraph
    simulate: Callable[[np.ndarray], np.ndarray]
    input_shape: tuple                  # per sample
    options: list                       # snn-opt --nir-* options (dt, reset)
    output: str = "spikes"              # spikes | membrane
    expect: str = "equal"               # "equal" or the known reason of a difference
    T: int = 20
    B: int = 4
    density: float = 0.3                # input spike probability per step
    train: bool = False                 # reverse: train it with snn-run first


@dataclasses.dataclass
class Result:
    library: str
    model: str
    direction: str                      # "lib -> snn-mlir" | "snn-mlir -> lib"
    options: str
    output: str
    equal: bool
    max_diff: float
    mismatches: int                     # differing output elements (spikes)
    total: int
    first_step: Optional[int]           # first time step with a difference
    rate: float                         # mean output (spike rate)
    expect: str
    note: str = ""

    @property
    def verdict(self):
        if self.equal:
            return "equal"
        return "differs (known)" if self.expect != "equal" else "DIFFERS"


class Tools:
    def __init__(self, build):
        self.snn_opt = os.path.join(build, "bin", "snn-opt")
        self.snn_translate = os.path.join(build, "bin", "snn-translate")
        self.snn_run = os.path.join(build, "runtime", "snn-run")
        for exe in (self.snn_opt, self.snn_translate, self.snn_run):
            if not os.path.exists(exe):
                raise FileNotFoundError(f"{exe} is missing: build first (scripts/build.sh)")

    def compile(self, nir_path, module, T, B, options):
        cmd = [self.snn_opt, nir_path, f"--nir-time-steps={T}", f"--nir-batch={B}",
               *options, "--snn-temporal-fusion",
               f"--snn-compile=output={module} target=cpu", "-o", os.devnull]
        run(cmd)

    def infer(self, module, x_path, y_path, extra=()):
        run([self.snn_run, module, "infer", "--device", "cpu", "--data", x_path,
             "--output", y_path, *extra])
        return np.load(y_path)

    def export_nir(self, mlir_path, nir_path, options=()):
        run([self.snn_translate, mlir_path, "--export-nir", *options, "-o", nir_path])

    def import_nir(self, nir_path, mlir_path, T, B, options):
        # With the locations (the NIR node names) so that the export keeps them.
        run([self.snn_translate, "--import-nir", nir_path, f"--nir-time-steps={T}",
             f"--nir-batch={B}", *options, "--mlir-print-debuginfo", "-o", mlir_path])


def scale_weights(net, gain):
    """Multiplies every Linear/Conv2d weight and bias of a torch module by
    `gain`, so that random networks fire at a useful rate."""
    import torch

    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, (torch.nn.Linear, torch.nn.Conv2d)):
                m.weight.mul_(gain)
                if m.bias is not None:
                    m.bias.mul_(gain)


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return p.stdout


def spike_input(rng, T, B, shape, density):
    return (rng.random((T, B) + tuple(shape)) < density).astype(np.float32)


def compare(ref, got, output):
    """(equal, max |diff|, mismatching elements, first differing step).
    Spikes must be identical; membranes agree within 1e-5 of their range
    (float32 in both, different summation orders)."""
    ref = np.asarray(ref, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64).reshape(ref.shape)
    diff = np.abs(ref - got)
    if output == "spikes":
        bad = diff > 0.5
    else:
        bad = diff > 1e-5 * max(1.0, float(np.max(np.abs(ref))))
    steps = np.nonzero(bad.reshape(bad.shape[0], -1).any(axis=1))[0]
    return (not bad.any(), float(diff.max()) if diff.size else 0.0, int(bad.sum()),
            int(steps[0]) if steps.size else None)
