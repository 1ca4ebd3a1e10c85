#!/usr/bin/env python3
"""Writes the NIR test files: `make_nir.py OUT.nir CASE`.

Files are written with h5py directly (the layout of nir.write) so that the
odd encodings of older NIR versions and other writers can be produced too:
fixed-length strings, f32/f64 and scalar datasets, missing optional keys, no
`version`, graphs stored at the root.
"""
import sys

import h5py
import numpy as np

RNG = np.random.default_rng(12345)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def lif(n, tau=2e-3, r=1.0, v_leak=0.0, v_th=1.0, v_reset=0.0, dtype=np.float64):
    full = lambda v: np.full(n, v, dtype=dtype)
    return {"type": "LIF", "tau": full(tau), "r": full(r), "v_leak": full(v_leak),
            "v_threshold": full(v_th), "v_reset": full(v_reset)}


def write(path, nodes, edges, version="1.0.8", fixed=False, root_graph=False):
    """nodes: name -> dict of datasets (a dict with 'nodes' is a subgraph)."""
    def string(group, key, value):
        if fixed:  # fixed-length, NUL-padded (numpy bytes)
            group.create_dataset(key, data=np.bytes_(value))
        else:
            group.create_dataset(key, data=value, dtype=h5py.string_dtype())

    def put(group, node):
        for key, value in node.items():
            if key == "nodes":
                sub = group.create_group("nodes")
                for name, child in value.items():
                    put(sub.create_group(name), child)
            elif key == "edges":
                put_edges(group, value)
            elif isinstance(value, str):
                string(group, key, value)
            elif isinstance(value, dict):
                put(group.create_group(key), value)
            else:
                group.create_dataset(key, data=value)

    def put_edges(group, edge_list):
        arr = np.array(edge_list, dtype=object).reshape(-1, 2)
        if fixed:
            group.create_dataset("edges", data=arr.astype("S"))
        else:
            group.create_dataset("edges", data=arr, dtype=h5py.string_dtype())

    with h5py.File(path, "w") as f:
        if version is not None:
            string(f, "version", version)
        graph = {"type": "NIRGraph", "nodes": nodes, "edges": edges}
        put(f if root_graph else f.create_group("node"), graph)


def inp(*shape):
    return {"type": "Input", "shape": np.array(shape, dtype=np.int64)}


def out(*shape):
    return {"type": "Output", "shape": np.array(shape, dtype=np.int64)}


def chain(*names):
    return [(a, b) for a, b in zip(names, names[1:])]


def case_single_lif():
    # tau = 4 ms, dt = 1 ms (the test passes --nir-dt=1e-3): k = 0.25, c = r k = 1.
    nodes = {"input": inp(1), "lif": lif(1, tau=4e-3, r=4.0, v_th=1.0),
             "output": out(1)}
    return nodes, chain("input", "lif", "output")


def case_mlp():
    tau = np.array([2e-3, 4e-3, 5e-3], dtype=np.float64)
    nodes = {
        "input": inp(4),
        "fc1": {"type": "Affine", "weight": rand(3, 4), "bias": rand(3)},
        "lif1": dict(lif(3), tau=tau),
        "fc2": {"type": "Linear", "weight": rand(2, 3)},
        "li": {"type": "LI", "tau": np.full(2, 1e-3), "r": np.full(2, 1.0),
               "v_leak": np.zeros(2)},
        "output": out(2),
    }
    return nodes, chain("input", "fc1", "lif1", "fc2", "li", "output")


def case_conv():
    nodes = {
        "input": inp(2, 8, 8),
        "conv": {"type": "Conv2d", "weight": rand(4, 2, 3, 3), "bias": rand(4),
                 "stride": np.array([1, 1]), "padding": np.array([1, 1]),
                 "dilation": np.array([1, 1]), "groups": np.int64(1),
                 "input_shape": np.array([8, 8])},
        "if1": {"type": "IF", "r": np.ones((4, 8, 8)), "v_threshold": np.ones((4, 8, 8)),
                "v_reset": np.zeros((4, 8, 8))},
        "sum": {"type": "SumPool2d", "kernel_size": np.array([2, 2]),
                "stride": np.array([2, 2]), "padding": np.array([0, 0])},
        "conv2": {"type": "Conv2d", "weight": rand(4, 1, 3, 3), "bias": rand(4),
                  "stride": np.int64(2), "padding": "same" if False else np.int64(1),
                  "dilation": np.int64(1), "groups": np.int64(4)},
        "avg": {"type": "AvgPool2d", "kernel_size": np.array([2, 2]),
                "stride": np.array([1, 1]), "padding": np.array([1, 1])},
        "flat": {"type": "Flatten", "start_dim": np.int64(0), "end_dim": np.int64(-1),
                 "input_type": np.array([4, 3, 3])},
        "fc": {"type": "Affine", "weight": rand(5, 36), "bias": rand(5)},
        "cuba": {"type": "CubaLIF", "tau_syn": np.full(5, 5e-4), "tau_mem": np.full(5, 2e-3),
                 "r": np.full(5, 2.0), "v_leak": np.zeros(5), "v_threshold": np.ones(5),
                 "v_reset": np.zeros(5), "w_in": np.full(5, 0.5)},
        "output": out(5),
    }
    return nodes, chain("input", "conv", "if1", "sum", "conv2", "avg", "flat", "fc",
                        "cuba", "output")


def case_conv_same():
    nodes = {
        "input": inp(1, 5, 5),
        "conv": {"type": "Conv2d", "weight": rand(2, 1, 3, 5), "bias": rand(2),
                 "stride": np.int64(1), "padding": "same", "dilation": np.int64(1),
                 "groups": np.int64(1)},
        "output": out(2, 5, 5),
    }
    return nodes, chain("input", "conv", "output")


def case_conv_same_even():
    # "same" padding of even kernels: asymmetric, the odd pad after (PyTorch).
    nodes = {
        "input": inp(2, 5, 6),
        "conv": {"type": "Conv2d", "weight": rand(3, 2, 2, 4), "bias": rand(3),
                 "stride": np.int64(1), "padding": "same", "dilation": np.int64(1),
                 "groups": np.int64(1)},
        "lif": {k: v.reshape(3, 1, 1) * np.ones((3, 5, 6))
                for k, v in lif(3, tau=2e-4, v_th=0.3).items() if k != "type"},
        "flat": {"type": "Flatten", "start_dim": np.int64(1), "end_dim": np.int64(-1)},
        "conv1": {"type": "Conv1d", "weight": rand(2, 3, 4), "bias": rand(2),
                  "stride": np.int64(1), "padding": "same", "dilation": np.int64(1),
                  "groups": np.int64(1)},
        "output": out(2, 30),
    }
    nodes["lif"]["type"] = "LIF"
    return nodes, chain("input", "conv", "lif", "flat", "conv1", "output")


def case_misc():
    nodes = {
        "input": inp(3),
        "scale": {"type": "Scale", "scale": np.full(3, 2.0)},
        "scale_vec": {"type": "Scale", "scale": np.array([1.0, 2.0, 3.0])},
        "thr": {"type": "Threshold", "threshold": np.array([0.5, 0.5, 0.5])},
        "delay": {"type": "Delay", "delay": np.full(3, 2e-4)},
        "integ": {"type": "I", "r": np.full(3, 10.0)},
        "cubali": {"type": "CubaLI", "tau_syn": np.full(3, 1e-3), "tau_mem": np.full(3, 2e-3),
                   "r": np.ones(3), "v_leak": np.zeros(3), "w_in": np.ones(3)},
        "output": out(3),
    }
    return nodes, chain("input", "scale", "scale_vec", "thr", "delay", "integ",
                        "cubali", "output")


def case_delays():
    # Per-neuron delays (1, 3, 2, 1 steps at dt = 1e-4) on a forward edge, and
    # (2, 1, 2, 3 steps) on a recurrent edge that closes a cycle through them.
    nodes = {
        "input": inp(3),
        "fc": {"type": "Affine", "weight": rand(4, 3), "bias": rand(4)},
        "lif": lif(4, tau=4e-4, v_th=0.5),
        "delay": {"type": "Delay", "delay": np.array([1e-4, 3e-4, 2e-4, 1e-4])},
        "lif2": lif(4, tau=4e-4, v_th=0.2),
        "back": {"type": "Delay", "delay": np.array([2e-4, 1e-4, 2e-4, 3e-4])},
        "rec": {"type": "Linear", "weight": rand(4, 4)},
        "output": out(4),
    }
    return nodes, chain("input", "fc", "lif", "delay", "lif2", "output") + \
        [("lif2", "back"), ("back", "rec"), ("rec", "lif")]


def case_flatten_mid():
    # Flatten of the dims in the middle: [2, 3, 4] -> [6, 4], a Conv1d over
    # the 6 merged channels, then the usual flatten to the last dim.
    nodes = {
        "input": inp(2, 3, 4),
        "merge": {"type": "Flatten", "start_dim": np.int64(0), "end_dim": np.int64(1)},
        "conv": {"type": "Conv1d", "weight": rand(5, 6, 3), "bias": rand(5),
                 "stride": np.int64(1), "padding": np.int64(1),
                 "dilation": np.int64(1), "groups": np.int64(1)},
        "flat": {"type": "Flatten", "start_dim": np.int64(0), "end_dim": np.int64(-1)},
        "fc": {"type": "Affine", "weight": rand(3, 20), "bias": rand(3)},
        "lif": lif(3, tau=2e-3, v_th=0.5),
        "output": out(3),
    }
    return nodes, chain("input", "merge", "conv", "flat", "fc", "lif", "output")


def case_recurrent():
    nodes = {
        "input": inp(2),
        "fc": {"type": "Affine", "weight": rand(3, 2), "bias": rand(3)},
        "lif": lif(3),
        "rec": {"type": "Linear", "weight": rand(3, 3)},
        "output": out(3),
    }
    return nodes, chain("input", "fc", "lif", "output") + [("lif", "rec"), ("rec", "lif")]


def case_rec_bias_min():
    # The smallest feedback with a bias: the input is cut off (weight 0) and
    # the recurrent Affine has weight 0 and a bias above threshold, so the
    # neuron must fire at every step from t = 0 (k = c = 1/2 at dt = 1e-4).
    nodes = {
        "input": inp(1),
        "fc": {"type": "Linear", "weight": np.zeros((1, 1), np.float32)},
        "lif": lif(1, tau=2e-4),
        "rec": {"type": "Affine", "weight": np.zeros((1, 1), np.float32),
                "bias": np.full(1, 4.0, np.float32)},
        "output": out(1),
    }
    return nodes, chain("input", "fc", "lif", "output") + [("lif", "rec"), ("rec", "lif")]


def case_rec_bias():
    # snnTorch's RLeaky with a bias: the spikes are fed back through an Affine.
    nodes = {
        "input": inp(2),
        "fc": {"type": "Affine", "weight": rand(4, 2), "bias": rand(4)},
        "lif": lif(4, v_th=0.5),
        "rec": {"type": "Affine", "weight": rand(4, 4), "bias": rand(4)},
        "output": out(4),
    }
    return nodes, chain("input", "fc", "lif", "output") + [("lif", "rec"), ("rec", "lif")]


def case_rec_subgraph():
    # Feedback through a nested graph (an Affine with a bias, then a Scale).
    sub = {"type": "NIRGraph",
           "nodes": {"in": inp(3),
                     "aff": {"type": "Affine", "weight": rand(3, 3), "bias": rand(3)},
                     "gain": {"type": "Scale", "scale": np.full(3, 0.5)},
                     "out": out(3)},
           "edges": chain("in", "aff", "gain", "out")}
    nodes = {"input": inp(2),
             "fc": {"type": "Affine", "weight": rand(3, 2), "bias": rand(3)},
             "lif": lif(3, v_th=0.5),
             "fb": sub,
             "output": out(3)}
    return nodes, chain("input", "fc", "lif", "output") + [("lif", "fb"), ("fb", "lif")]


def case_rec_delay_bias():
    # Feedback through a delay of two steps, then an Affine with a bias.
    nodes = {
        "input": inp(3),
        "fc": {"type": "Affine", "weight": rand(4, 3), "bias": rand(4)},
        "lif": lif(4, tau=4e-4, v_th=0.5),
        "back": {"type": "Delay", "delay": np.full(4, 2e-4)},
        "rec": {"type": "Affine", "weight": rand(4, 4), "bias": rand(4)},
        "output": out(4),
    }
    return nodes, chain("input", "fc", "lif", "output") + \
        [("lif", "back"), ("back", "rec"), ("rec", "lif")]


def case_two_loops():
    # Two recurrent layers with biased self-feedback, and feedback with a
    # bias from the second layer to the first.
    nodes = {
        "input": inp(2),
        "fc1": {"type": "Affine", "weight": rand(4, 2), "bias": rand(4)},
        "lif1": lif(4, tau=4e-4, v_th=0.5),
        "rec1": {"type": "Affine", "weight": rand(4, 4), "bias": rand(4)},
        "fc2": {"type": "Affine", "weight": rand(3, 4), "bias": rand(3)},
        "lif2": lif(3, tau=2e-4, v_th=0.3),
        "rec2": {"type": "Affine", "weight": rand(3, 3), "bias": rand(3)},
        "top": {"type": "Affine", "weight": rand(4, 3), "bias": rand(4)},
        "output": out(3),
    }
    return nodes, chain("input", "fc1", "lif1", "fc2", "lif2", "output") + \
        [("lif1", "rec1"), ("rec1", "lif1"), ("lif2", "rec2"), ("rec2", "lif2"),
         ("lif2", "top"), ("top", "lif1")]


def case_nested():
    sub = {"type": "NIRGraph",
           "nodes": {"in": inp(3), "lif": lif(3), "out": out(3)},
           "edges": chain("in", "lif", "out")}
    nodes = {"input": inp(2),
             "fc": {"type": "Affine", "weight": rand(3, 2), "bias": rand(3)},
             "block": sub, "output": out(3)}
    return nodes, [("input", "fc"), ("fc", "block"), ("block", "output")]


def case_old():
    # NIR 0.x: no version, graph at the root, fixed-length strings, f32
    # parameters, scalar datasets, LIF and CubaLIF without v_reset or w_in.
    nodes = {
        "input": inp(3),
        "fc": {"type": "Linear", "weight": rand(3, 3)},
        "lif": {"type": "LIF", "tau": np.float32(2e-3), "r": np.float32(1.0),
                "v_leak": np.float32(0.0), "v_threshold": np.float32(1.0)},
        "cuba": {"type": "CubaLIF", "tau_syn": np.float32(1e-3), "tau_mem": np.float32(2e-3),
                 "r": np.float32(3.0), "v_leak": np.float32(0.0),
                 "v_threshold": np.float32(1.0)},
        "output": out(3),
    }
    # Edges listed out of order on purpose.
    return nodes, [("cuba", "output"), ("input", "fc"), ("lif", "cuba"), ("fc", "lif")]


# Bad files: each must give one clear error.
def case_unknown_type():
    nodes = {"input": inp(2), "mystery": {"type": "Spiky"}, "output": out(2)}
    return nodes, chain("input", "mystery", "output")


def case_missing_node():
    nodes = {"input": inp(2), "output": out(2)}
    return nodes, [("input", "ghost"), ("input", "output")]


def case_bad_shape():
    nodes = {"input": inp(4), "fc": {"type": "Affine", "weight": rand(3, 5), "bias": rand(3)},
             "output": out(3)}
    return nodes, chain("input", "fc", "output")


def case_stateless_cycle():
    nodes = {"input": inp(3), "a": {"type": "Linear", "weight": rand(3, 3)},
             "b": {"type": "Scale", "scale": np.full(3, 0.5)}, "output": out(3)}
    return nodes, [("input", "a"), ("a", "b"), ("b", "a"), ("b", "output")]


def case_bad_dt():
    nodes = {"input": inp(1), "lif": lif(1, tau=1e-5), "output": out(1)}
    return nodes, chain("input", "lif", "output")


def case_mixed_delays():
    # Per-neuron delays where some neurons wait 0 steps (as learned axonal
    # delays can): on a forward edge, and on the edge of a cycle that passes
    # through the first LIF's state.
    nodes = {
        "input": inp(3),
        "fc": {"type": "Affine", "weight": rand(4, 3), "bias": rand(4)},
        "lif": lif(4, tau=4e-4, v_th=0.5),
        "delay": {"type": "Delay", "delay": np.array([0.0, 2e-4, 1e-4, 0.0])},
        "lif2": lif(4, tau=4e-4, v_th=0.2),
        "back": {"type": "Delay", "delay": np.array([1e-4, 0.0, 3e-4, 0.0])},
        "rec": {"type": "Linear", "weight": rand(4, 4)},
        "output": out(4),
    }
    return nodes, chain("input", "fc", "lif", "delay", "lif2", "output") + \
        [("lif2", "back"), ("back", "rec"), ("rec", "lif")]


def case_conv1d():
    # Audio-style: a strided, padded 1-d convolution, a LIF, a dilated grouped
    # one with 'same' padding, then a flatten and a LIF readout layer.
    nodes = {"input": inp(2, 16),
             "conv": {"type": "Conv1d", "weight": rand(4, 2, 3), "bias": rand(4),
                      "stride": np.int64(2), "padding": np.int64(1),
                      "dilation": np.int64(1), "groups": np.int64(1)},
             "lif1": {k: (np.full((4, 8), v[0]) if k != "type" else v)
                      for k, v in lif(1).items()},
             "conv2": {"type": "Conv1d", "weight": rand(4, 2, 3), "bias": rand(4),
                       "stride": np.array([1]), "padding": "same",
                       "dilation": np.array([2]), "groups": np.int64(2)},
             "lif2": {k: (np.full((4, 8), v[0]) if k != "type" else v)
                      for k, v in lif(1).items()},
             "flat": {"type": "Flatten", "start_dim": np.int64(0), "end_dim": np.int64(-1)},
             "fc": {"type": "Linear", "weight": rand(3, 32)},
             "lif3": lif(3),
             "output": out(3)}
    return nodes, chain("input", "conv", "lif1", "conv2", "lif2", "flat", "fc",
                        "lif3", "output")


def case_conv1d_bad():
    nodes = {"input": inp(2, 8, 8),
             "conv": {"type": "Conv1d", "weight": rand(3, 2, 3)},
             "output": out(3, 6)}
    return nodes, chain("input", "conv", "output")


CASES = {name[len("case_"):]: fn for name, fn in globals().items()
         if name.startswith("case_")}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        sys.exit("usage: make_nir.py OUT.nir {%s}" % ",".join(sorted(CASES)))
    path, case = sys.argv[1], sys.argv[2]
    nodes, edges = CASES[case]()
    if case == "old":
        write(path, nodes, edges, version=None, fixed=True, root_graph=True)
    else:
        write(path, nodes, edges, fixed=case == "conv_same")


if __name__ == "__main__":
    main()
