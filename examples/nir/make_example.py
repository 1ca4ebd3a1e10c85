#!/usr/bin/env python3
"""Writes the NIR examples with the `nir` package:

  mlp.nir        input[16] -> Affine(16->32) -> LIF -> Affine(32->4) -> LI -> output[4]
  recurrent.nir  input[16] -> Affine(16->32) -> LIF -> Affine(32->4) -> LI -> output[4],
                 with the LIF's spikes fed back through Linear(32->32) (what
                 snnTorch's RLeaky exports)

Time constants are given in seconds as in snnTorch's NIR export (dt = 1e-4):
tau_mem = 2 ms gives k = dt/tau = 0.05. Compile them with

    snn-opt examples/nir/mlp.nir --nir-time-steps=8 --nir-batch=4
    snn-opt examples/nir/recurrent.nir --nir-time-steps=16 --nir-batch=4 --snn-temporal-fusion

usage: make_example.py [OUT_DIR]
"""
import os
import sys

import nir
import numpy as np


def layers(rng, recurrent):
    w1 = (rng.standard_normal((32, 16)) / 4).astype(np.float32)
    w2 = (rng.standard_normal((4, 32)) / 6).astype(np.float32)
    nodes = {
        "input": nir.Input(input_type=np.array([16])),
        "fc1": nir.Affine(weight=w1, bias=np.zeros(32, np.float32)),
        "lif1": nir.LIF(tau=np.full(32, 2e-3), r=np.full(32, 20.0),
                        v_leak=np.zeros(32), v_threshold=np.ones(32),
                        v_reset=np.zeros(32)),
        "fc2": nir.Affine(weight=w2, bias=np.zeros(4, np.float32)),
        "readout": nir.LI(tau=np.full(4, 5e-3), r=np.full(4, 50.0),
                          v_leak=np.zeros(4)),
        "output": nir.Output(output_type=np.array([4])),
    }
    edges = [("input", "fc1"), ("fc1", "lif1"), ("lif1", "fc2"),
             ("fc2", "readout"), ("readout", "output")]
    if recurrent:
        w_rec = (rng.standard_normal((32, 32)) / 8).astype(np.float32)
        nodes["rec"] = nir.Linear(weight=w_rec)
        edges += [("lif1", "rec"), ("rec", "lif1")]
    return nir.NIRGraph(nodes=nodes, edges=edges)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    nir.write(os.path.join(out, "mlp.nir"), layers(np.random.default_rng(2024), False))
    nir.write(os.path.join(out, "recurrent.nir"),
              layers(np.random.default_rng(2025), True))

if __name__ == "__main__":
    main()
