#!/usr/bin/env python3
"""Writes examples/nir/mlp.nir: a small spiking MLP made with the `nir` package.

    input[16] -> Affine(16->32) -> LIF -> Affine(32->4) -> LI -> output[4]

Time constants are given in seconds as in snnTorch's NIR export (dt = 1e-4):
tau_mem = 2 ms gives k = dt/tau = 0.05. Compile it with

    snn-opt examples/nir/mlp.nir --nir-time-steps=8 --nir-batch=4
"""
import sys

import nir
import numpy as np


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "mlp.nir"
    rng = np.random.default_rng(2024)
    w1 = (rng.standard_normal((32, 16)) / 4).astype(np.float32)
    w2 = (rng.standard_normal((4, 32)) / 6).astype(np.float32)
    graph = nir.NIRGraph(
        nodes={
            "input": nir.Input(input_type=np.array([16])),
            "fc1": nir.Affine(weight=w1, bias=np.zeros(32, np.float32)),
            "lif1": nir.LIF(tau=np.full(32, 2e-3), r=np.full(32, 20.0),
                            v_leak=np.zeros(32), v_threshold=np.ones(32),
                            v_reset=np.zeros(32)),
            "fc2": nir.Affine(weight=w2, bias=np.zeros(4, np.float32)),
            "readout": nir.LI(tau=np.full(4, 5e-3), r=np.full(4, 50.0),
                              v_leak=np.zeros(4)),
            "output": nir.Output(output_type=np.array([4])),
        },
        edges=[("input", "fc1"), ("fc1", "lif1"), ("lif1", "fc2"),
               ("fc2", "readout"), ("readout", "output")],
    )
    nir.write(out, graph)


if __name__ == "__main__":
    main()
