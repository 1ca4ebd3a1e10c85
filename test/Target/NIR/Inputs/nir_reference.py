#!/usr/bin/env python3
"""A NumPy simulator of NIR graphs, discretized with forward Euler at step dt.

It follows the conventions of `snn-translate --import-nir` (docs/nir.md) and
is meant as the independent reference of end-to-end tests:

  * LIF:  v <- v + dt/tau (v_leak - v) + r dt/tau x; spike when v > v_th
          (strict); hard reset v = v_reset, or soft v = v - v_th.
  * IF / I: v <- v + r dt x.  LI: as LIF without spikes (output v).
  * CubaLIF / CubaLI: i <- i + dt/tau_syn (-i) + w_in dt/tau_syn x feeds the
    membrane as its input x.
  * A cycle carries the previous step's output of its last neuron before
    the edge that closes it in a depth-first search from the inputs (spikes
    are fed back; the nodes after that neuron, an Affine with its bias say,
    run every step, from t = 0); Delay(d) outputs the
    input of round(d/dt) steps ago (per neuron when d is a vector). A node
    sums all its inputs.
  * Every state starts at 0.

Usage:
  nir_reference.py MODEL.nir --input x.npy [--dt 1e-4] [--reset hard|soft] --output y.npy
      x is [T, B, *input_shape]; y is the first Output node's [T, B, ...] (float64).
  nir_reference.py --self-test
"""
import argparse
import sys

import numpy as np

STATEFUL = {"LIF", "IF", "LI", "I", "CubaLI", "CubaLIF"}


def _str(v):
    if isinstance(v, bytes):
        return v.decode().rstrip("\0 ")
    if isinstance(v, np.ndarray) and v.dtype.kind in "SO":
        return _str(v.ravel()[0]) if v.size == 1 else [_str(x) for x in v.ravel()]
    return v


def read_graph(path):
    """Returns (nodes, edges) with nested graphs inlined as in the importer."""
    import h5py

    def load(group):
        out = {}
        for key, item in group.items():
            out[key] = load(item) if isinstance(item, h5py.Group) else _str(item[()])
        return out

    with h5py.File(path, "r") as f:
        root = load(f["node"] if "node" in f else f)
    nodes, edges = {}, []

    def inline(graph, prefix, nested):
        subs = {k for k, n in graph["nodes"].items() if n["type"] == "NIRGraph"}
        for name, node in graph["nodes"].items():
            if name in subs:
                inline(node, prefix + name + ".", True)
            else:
                node = dict(node)
                if nested and node["type"] in ("Input", "Output"):
                    node["type"] = "PassThrough"
                nodes[prefix + name] = node

        def resolve(name, want):
            if name in subs:
                ends = [k for k, n in graph["nodes"][name]["nodes"].items() if n["type"] == want]
                return prefix + name + "." + ends[0]
            return prefix + name

        flat = np.asarray(graph["edges"]).reshape(-1)
        for a, b in zip(flat[0::2], flat[1::2]):
            edges.append((resolve(_str(a), "Output"), resolve(_str(b), "Input")))

    inline(root, "", False)
    return nodes, edges


def _pair(v):
    v = np.atleast_1d(np.asarray(v)).astype(int)
    return (int(v[0]), int(v[-1]))


def conv2d(x, w, b, stride, pad, dil, groups):
    """pad: (top, left), or (top, left, bottom, right)."""
    bsz, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    top, left = pad[0], pad[1]
    bottom, right = (pad[2], pad[3]) if len(pad) == 4 else (top, left)
    x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    oh = (h + top + bottom - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + left + right - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((bsz, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = x[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dil[0]:i * dil[0] + stride[0] * (oh - 1) + 1:stride[0],
                           j * dil[1]:j * dil[1] + stride[1] * (ow - 1) + 1:stride[1]]
                y[:, g * og:(g + 1) * og] += np.einsum("bchw,oc->bohw", patch,
                                                       w[g * og:(g + 1) * og, :, i, j])
    return y + np.asarray(b).reshape(1, -1, 1, 1)


def conv1d(x, w, b, stride, pad, dil, groups):
    """x [B, C, L], w [O, C/groups, K]: one output position at a time; pad is
    one int or (left, right)."""
    batch, _, length = x.shape
    out_ch, cg, k = w.shape
    left, right = (pad, pad) if np.isscalar(pad) else pad
    xp = np.pad(x, ((0, 0), (0, 0), (left, right)))
    lout = (length + left + right - dil * (k - 1) - 1) // stride + 1
    y = np.zeros((batch, out_ch, lout))
    per_group = out_ch // groups
    for o in range(out_ch):
        c0 = (o // per_group) * cg
        for j in range(lout):
            window = xp[:, c0:c0 + cg, j * stride:j * stride + dil * (k - 1) + 1:dil]
            y[:, o, j] = np.sum(window * w[o], axis=(1, 2))
    return y if b is None else y + np.asarray(b)[None, :, None]


def pool2d(x, kernel, stride, pad, mean):
    x = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (x.shape[2] - kernel[0]) // stride[0] + 1
    ow = (x.shape[3] - kernel[1]) // stride[1] + 1
    y = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            y += x[:, :, i:i + stride[0] * (oh - 1) + 1:stride[0], j:j + stride[1] * (ow - 1) + 1:stride[1]]
    return y / (kernel[0] * kernel[1]) if mean else y


def same_padding(w, dil):
    """PyTorch's "same" (stride 1): the odd pad of an even span goes to the
    bottom/right. Returns (top, left, bottom, right)."""
    total = [dil[i] * (w.shape[2 + i] - 1) for i in range(2)]
    return (total[0] // 2, total[1] // 2,
            total[0] - total[0] // 2, total[1] - total[1] // 2)


class Simulator:
    def __init__(self, nodes, edges, dt=1e-4, reset="hard"):
        self.nodes, self.dt, self.reset = nodes, dt, reset
        self.order, self.inputs, self.back = self._order(edges)

    def _delay_vector(self, name):
        """Per-neuron delays in steps (the delay parameter's shape)."""
        return np.rint(np.asarray(self.nodes[name]["delay"], dtype=np.float64)
                       / self.dt).astype(np.int64)

    def _delay_steps(self, name):
        """The longest delay of a Delay node in steps (0 for other nodes)."""
        if self.nodes[name]["type"] != "Delay":
            return 0
        return int(self._delay_vector(name).max())

    def _breaks(self, name):
        """Whether a node is a Delay whose every neuron waits at least a step:
        its output is known before this step's input (it breaks cycles)."""
        return self.nodes[name]["type"] == "Delay" and \
            int(self._delay_vector(name).min()) > 0

    def _delayed(self, name, regs, now=None):
        """A Delay node's output: neuron i reads the input of d_i steps ago
        (`now`, this step's input, for d_i = 0)."""
        d = self._delay_vector(name)
        if now is not None:
            regs = regs + [now]
        if np.all(d == d.ravel()[0]):
            return regs[len(regs) - 1 - int(d.ravel()[0])] if now is not None \
                else regs[len(regs) - int(d.ravel()[0])]
        if now is not None:
            d = d + 1  # one more register: this step's input
        stacked = np.stack(regs)  # [D, B, ...]; regs[j] is D - j steps old
        index = np.broadcast_to(len(regs) - d, stacked.shape[1:])[None]
        return np.take_along_axis(stacked, index, axis=0)[0]

    def _order(self, edges):
        out = {n: [] for n in self.nodes}
        for a, b in edges:
            if not self._breaks(a):
                out[a].append(b)
        inputs = {n: [] for n in self.nodes}
        back = {n: [] for n in self.nodes}
        delayed = {n: [] for n in self.nodes}
        for a, b in edges:
            if self._breaks(a):
                delayed[b].append(a)
        roots = sorted(n for n in self.nodes if self.nodes[n]["type"] == "Input")
        roots += sorted(n for n in self.nodes if self.nodes[n]["type"] == "Delay")
        roots += sorted(self.nodes)

        class Cut(Exception):
            pass

        cut = set()

        def visit(n, stack, mark, post):
            mark[n] = "grey"
            stack.append(n)
            for m in out[n]:
                if (n, m) in cut or m in mark and mark[m] == "black":
                    continue
                if m not in mark:
                    visit(m, stack, mark, post)
                    continue
                # A back edge closes the cycle m ... n: it carries the previous
                # output of the cycle's last neuron (spikes are fed back); the
                # nodes after that neuron run every step.
                cycle = stack[stack.index(m):]
                neurons = [i for i, c in enumerate(cycle)
                           if self.nodes[c]["type"] in STATEFUL]
                if not neurons:
                    raise ValueError("cycle without neuron state: %s" % cycle)
                i = neurons[-1]
                cut.add((cycle[i], cycle[i + 1] if i + 1 < len(cycle) else m))
                raise Cut()
            stack.pop()
            mark[n] = "black"
            post.append(n)

        while True:
            mark, post = {}, []
            try:
                for r in roots:
                    if r not in mark:
                        visit(r, [], mark, post)
                break
            except Cut:
                continue
        for a, b in edges:
            if self._breaks(a):
                continue
            into = back if (a, b) in cut else inputs
            if a not in into[b]:
                into[b].append(a)
        self.delayed = delayed
        return post[::-1], inputs, back

    def run(self, xs):
        """xs: input name -> [T, B, ...]. Returns output name -> [T, B, ...]."""
        first = next(iter(xs.values()))
        steps, batch = first.shape[0], first.shape[1]
        self.batch = batch
        state, prev = {}, {}
        # Delay registers hold the inputs of the last d steps (shape from the
        # per-neuron delay parameter).
        delay_regs = {n: [np.zeros((batch,) + np.shape(self.nodes[n]["delay"]))]
                      * self._delay_steps(n)
                      for n in self.nodes if self._delay_steps(n) > 0}
        outputs = {n: [] for n in self.nodes if self.nodes[n]["type"] == "Output"}
        delay_in = {}
        for t in range(steps):
            value = {}
            for n in self.order:
                node = self.nodes[n]
                if node["type"] == "Input":
                    value[n] = np.asarray(xs[n][t], dtype=np.float64)
                    continue
                if self._breaks(n):
                    continue
                terms = [value[m] for m in self.inputs[n]]
                terms += [prev.get(m, 0.0) for m in self.back[n]]
                terms += [self._delayed(m, delay_regs[m]) for m in self.delayed[n]]
                x = sum(terms[1:], terms[0])
                if n in delay_regs:  # some neurons without delay
                    x = x + np.zeros_like(delay_regs[n][0])  # fed back before step 0
                    delay_in[n] = x
                    value[n] = self._delayed(n, delay_regs[n], now=x)
                else:
                    value[n] = self._step(n, node, x, state)
            for n in delay_regs:
                x = delay_in[n] if n in delay_in else \
                    sum(value[m] for m in self.inputs[n])
                delay_regs[n] = delay_regs[n][1:] + [x]
            prev = value
            for n in outputs:
                outputs[n].append(value[n])
        return {n: np.stack(v) for n, v in outputs.items()}

    def _step(self, name, node, x, state):
        kind, dt, p = node["type"], self.dt, {k: np.asarray(v, dtype=np.float64)
                                             for k, v in node.items()
                                             if not isinstance(v, (str, dict, list))}
        if kind in ("Output", "PassThrough", "Delay"):
            return x
        if kind in ("Affine", "Linear"):
            if np.ndim(x) == 0:  # fed back before the first step: zeros
                x = np.full((self.batch, p["weight"].shape[1]), float(x))
            y = x @ p["weight"].T
            return y + p["bias"] if kind == "Affine" else y
        if kind == "Scale":
            return x * p["scale"]
        if kind == "Threshold":
            return (x > p["threshold"]).astype(np.float64)
        if kind == "Flatten":
            # Dims start_dim..end_dim of a sample (x is [B, ...]) become one.
            rank = x.ndim - 1
            start = int(p.get("start_dim", 1)) % rank
            end = int(p.get("end_dim", -1)) % rank
            return x.reshape(x.shape[:1 + start] + (-1,) + x.shape[2 + end:])
        if kind == "Conv2d":
            stride, dil = _pair(p["stride"]), _pair(p["dilation"])
            pad_v = node["padding"]
            if isinstance(pad_v, str):
                pad = same_padding(p["weight"], dil) if pad_v == "same" else (0, 0)
            else:
                pad = _pair(pad_v)
            return conv2d(x, p["weight"], p["bias"], stride, pad, dil, int(p["groups"]))
        if kind == "Conv1d":
            pad_v = node["padding"]
            dil, stride = int(np.ravel(p["dilation"])[0]), int(np.ravel(p["stride"])[0])
            if isinstance(pad_v, str):
                total = dil * (p["weight"].shape[2] - 1)
                pad = (total // 2, total - total // 2) if pad_v == "same" else 0
            else:
                pad = int(np.ravel(p["padding"])[0])
            return conv1d(x, p["weight"], p.get("bias"), stride, pad, dil,
                          int(np.ravel(p.get("groups", 1))[0]))
        if kind in ("SumPool2d", "AvgPool2d"):
            return pool2d(x, _pair(p["kernel_size"]), _pair(p["stride"]), _pair(p["padding"]),
                          kind == "AvgPool2d")
        v = state.get(name, np.zeros_like(x))
        if kind in ("CubaLIF", "CubaLI"):
            i = state.get(name + "/i", np.zeros_like(x))
            w_in = p.get("w_in", 1.0)
            i = i + dt / p["tau_syn"] * (-i) + w_in * dt / p["tau_syn"] * x
            state[name + "/i"] = i
            x, tau = i, p["tau_mem"]
        elif kind in ("LIF", "LI"):
            tau = p["tau"]
        if kind in ("IF", "I"):
            h = v + p["r"] * dt * x
        else:
            h = v + dt / tau * (p.get("v_leak", 0.0) - v) + p["r"] * dt / tau * x
        if kind in ("LI", "I", "CubaLI"):
            state[name] = h
            return h
        s = (h > p["v_threshold"]).astype(np.float64)
        if self.reset == "soft":
            state[name] = h - p["v_threshold"] * s
        else:
            state[name] = h * (1 - s) + p.get("v_reset", 0.0) * s
        return s


def membrane_trace(nodes, x, dt, reset="hard"):
    """Spikes and membrane (after reset) of the first LIF node for input x."""
    sim = Simulator(nodes, [("input", "lif"), ("lif", "output")], dt, reset)
    trace, spikes = [], []
    state = {}
    for xt in x:
        spikes.append(sim._step("lif", nodes["lif"], np.asarray(xt, dtype=np.float64), state))
        trace.append(state["lif"])
    return np.array(spikes), np.array(trace)


def self_test():
    # One LIF neuron: tau = 2 ms, r = 2, dt = 1 ms -> k = 1/2, c = 1, v_th = 1.
    dt, k, c = 1e-3, 0.5, 1.0
    nodes = {"input": {"type": "Input", "shape": np.array([1])},
             "lif": {"type": "LIF", "tau": np.array([2e-3]), "r": np.array([2.0]),
                     "v_leak": np.array([0.0]), "v_threshold": np.array([1.0]),
                     "v_reset": np.array([0.0])},
             "output": {"type": "Output", "shape": np.array([1])}}
    # Constant current I: between spikes v_n = c I (1 - (1-k)^n) / k, so the
    # neuron fires every n* steps, n* the first n with v_n > 1 (strict).
    current, steps = 0.6, 12
    x = np.full((steps, 1, 1), current)
    spikes, trace = membrane_trace(nodes, x, dt)
    v = lambda n: c * current * (1 - (1 - k) ** n) / k
    period = next(n for n in range(1, 100) if v(n) > 1.0)
    want_spikes = [t for t in range(steps) if (t + 1) % period == 0]
    want_trace = [0.0 if (t + 1) % period == 0 else v((t + 1) % period) for t in range(steps)]
    assert period == 3, period
    assert list(np.flatnonzero(spikes.ravel())) == want_spikes, spikes.ravel()
    assert np.allclose(trace.ravel(), want_trace, rtol=0, atol=1e-12), trace.ravel()
    # A spike train: v = 1 does not fire (strict), 1.5 does.
    train = np.array([1, 1, 0, 1, 1, 1], dtype=np.float64).reshape(-1, 1, 1)
    spikes, trace = membrane_trace(nodes, train, dt)
    assert list(np.flatnonzero(spikes.ravel())) == [1, 4], spikes.ravel()
    assert np.allclose(trace.ravel(), [1.0, 0.0, 0.0, 1.0, 0.0, 1.0]), trace.ravel()
    # Soft reset keeps the excess: 1.5 - 1 = 0.5.
    spikes, trace = membrane_trace(nodes, train, dt, reset="soft")
    assert np.allclose(trace.ravel(), [1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125]), trace.ravel()
    assert list(np.flatnonzero(spikes.ravel())) == [1, 3, 4, 5], spikes.ravel()
    print("single LIF: membrane and spike times match the closed form")

    # A recurrent graph: the loop edge carries the previous step's spikes.
    rng = np.random.default_rng(7)
    w_in, w_rec = rng.standard_normal((3, 2)), rng.standard_normal((3, 3))
    nodes = {"input": {"type": "Input", "shape": np.array([2])},
             "fc": {"type": "Linear", "weight": w_in},
             "lif": {"type": "LIF", "tau": np.full(3, 2e-3), "r": np.ones(3),
                     "v_leak": np.zeros(3), "v_threshold": np.full(3, 0.3),
                     "v_reset": np.zeros(3)},
             "rec": {"type": "Linear", "weight": w_rec},
             "output": {"type": "Output", "shape": np.array([3])}}
    edges = [("input", "fc"), ("fc", "lif"), ("lif", "rec"), ("rec", "lif"), ("lif", "output")]
    x = rng.standard_normal((10, 4, 2))
    got = Simulator(nodes, edges, dt=1e-3).run({"input": x})["output"]
    v, s_prev, want = np.zeros((4, 3)), np.zeros((4, 3)), []
    for t in range(10):
        h = v + 0.5 * (-v) + 0.5 * (x[t] @ w_in.T + s_prev @ w_rec.T)
        s = (h > 0.3).astype(float)
        v, s_prev = h * (1 - s), s
        want.append(s)
    assert np.array_equal(got, np.stack(want))
    print("recurrent LIF: matches the hand-written loop")

    # Feedback through an Affine: the spikes are fed back, so the bias acts
    # from t = 0 (a neuron with no input and a bias above threshold fires at
    # every step).
    nodes = {"input": {"type": "Input", "shape": np.array([1])},
             "fc": {"type": "Linear", "weight": np.zeros((1, 1))},
             "lif": {"type": "LIF", "tau": np.array([2e-3]), "r": np.ones(1),
                     "v_leak": np.zeros(1), "v_threshold": np.ones(1),
                     "v_reset": np.zeros(1)},
             "rec": {"type": "Affine", "weight": np.zeros((1, 1)), "bias": np.array([4.0])},
             "output": {"type": "Output", "shape": np.array([1])}}
    edges = [("input", "fc"), ("fc", "lif"), ("lif", "rec"), ("rec", "lif"), ("lif", "output")]
    got = Simulator(nodes, edges, dt=1e-3).run({"input": np.zeros((6, 1, 1))})["output"]
    assert np.all(got == 1.0), got.ravel()
    print("recurrent bias: fires from t = 0")

    # Per-neuron delays: output[t, :, i] = x[t - d_i] (0 steps: x[t]).
    for delays in ((1, 3, 2), (0, 3, 2), (2, 0, 0)):
        nodes = {"input": {"type": "Input", "shape": np.array([3])},
                 "delay": {"type": "Delay", "delay": np.array(delays) * 1e-3},
                 "output": {"type": "Output", "shape": np.array([3])}}
        x = rng.standard_normal((7, 2, 3))
        got = Simulator(nodes, [("input", "delay"), ("delay", "output")],
                        dt=1e-3).run({"input": x})["output"]
        want = np.zeros_like(x)
        for i, d in enumerate(delays):
            want[d:, :, i] = x[:x.shape[0] - d, :, i]
        assert np.array_equal(got, want), (delays, got)
    print("per-neuron delays: shift each neuron by its own delay (also 0)")
    print("self-test passed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", nargs="?")
    ap.add_argument("--input")
    ap.add_argument("--output")
    ap.add_argument("--dt", type=float, default=1e-4)
    ap.add_argument("--reset", choices=["hard", "soft"], default="hard")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    if not (args.model and args.input and args.output):
        ap.error("MODEL.nir, --input and --output are required")
    nodes, edges = read_graph(args.model)
    names = sorted(n for n in nodes if nodes[n]["type"] == "Input")
    if len(names) != 1:
        sys.exit("nir_reference.py: the model must have exactly one Input node")
    outs = Simulator(nodes, edges, args.dt, args.reset).run({names[0]: np.load(args.input)})
    np.save(args.output, outs[sorted(outs)[0]])


if __name__ == "__main__":
    main()
