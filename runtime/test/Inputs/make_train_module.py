#!/usr/bin/env python3
"""Writes a trainable compiled module by hand (docs/artifact-format.md).

An MLP of LIF layers with a leaky-integrator readout, cross-entropy on the
mean membrane and SGD with momentum: input [T, B, IN] -> linear -> LIF ->
... -> linear -> LI. It exercises `snn-run train` on the CPU without the
compiler (runtime/test/snn-run-train.sh).

    make_train_module.py OUT.snnmod [--in 784] [--hidden 256] [--out 10]
        [--steps 4] [--batch 64] [--lr 0.1]
        --kernels snnrt-test-kernels.so

The loss and the update (SGD with momentum) run the test kernel library (the
runtime computes no op itself; a compiled module carries generated kernels).
"""

import argparse
import json
import math
import os
import platform
import shutil


class Module:
    def __init__(self):
        self.tensors = []

    def tensor(self, name, shape, role, **extra):
        entry = {"id": len(self.tensors), "name": name, "shape": shape,
                 "role": role}
        entry.update(extra)
        self.tensors.append(entry)
        return entry["id"]

    def shape(self, tid):
        return self.tensors[tid]["shape"]


def op(kind, ins, outs, **attrs):
    entry = {"op": kind, "in": ins, "out": outs}
    entry.update(attrs)
    return entry


def build(args):
    m = Module()
    T, B = args.steps, args.batch
    sizes = [args.inputs] + args.hidden + [args.outputs]
    x = m.tensor("input", [T, B, sizes[0]], "input")
    lif = {"model": "lif", "k": 0.5, "c": 1.0, "v_th": 0.5, "v_reset": 0.0,
           "v_init": 0.0, "reset": "hard",
           "surrogate": {"kind": "atan", "alpha": 2.0}}
    li = {"model": "li", "k": 0.5, "c": 0.5, "v_init": 0.0}
    # infer and train_forward share activations (programs run one at a time).
    infer, forward, layers, spike_layers = [], [], [], []
    cur_infer = cur_train = x

    def constant(name, value):
        return m.tensor(name, [1], "constant",
                        init={"kind": "constant", "value": value})

    def bias_launch(kernel, layer, width, ins):
        """The generated bias kernel of a layer op (here the test kernel
        library's), sizes as constant tensors."""
        sizes = [constant(f"{kernel}{layer}.rows", T * B),
                 constant(f"{kernel}{layer}.channels", width)]
        return [{"kernel": f"snnrt_test_{kernel}", "args": sizes + ins,
                 "grid": 1, "block": 1}]

    for i in range(len(sizes) - 1):
        fan_in, width = sizes[i], sizes[i + 1]
        last = i == len(sizes) - 2
        w = m.tensor(f"fc{i + 1}.weight", [width, fan_in], "param",
                     init={"kind": "kaiming_uniform", "fan_in": fan_in},
                     trainable=True)
        b = m.tensor(f"fc{i + 1}.bias", [width], "param",
                     init={"kind": "uniform", "bound": 1 / math.sqrt(fan_in)},
                     trainable=True)
        shape = [T, B, width]
        a = m.tensor(f"%a{i + 1}", shape, "activation")
        s = m.tensor(f"%s{i + 1}", shape, "activation")
        neuron = dict(li if last else lif, features=width)
        bias = bias_launch("bias_add", i, width, [a, b])
        infer += [op("linear", [cur_infer, w, b], [a], has_bias=True,
                     launches=bias),
                  op("neuron", [a], [s], **neuron)]
        layer = {"w": w, "b": b, "x": cur_train, "a": a, "s": s,
                 "neuron": neuron, "h": None}
        forward.append(op("linear", [cur_train, w, b], [a], has_bias=True,
                          launches=bias))
        if last:
            forward.append(op("neuron", [a], [s], **neuron))
        else:
            h = m.tensor(f"%h{i + 1}", shape, "saved")
            layer["h"] = h
            forward.append(op("neuron", [a], [s, h], save_h=True, **neuron))
            spike_layers.append({"name": f"lif{i + 1}", "tensor": s})
        layers.append(layer)
        cur_infer, cur_train = s, s
    y = layers[-1]["s"]
    labels = m.tensor("labels", [B], "label", dtype="i32")
    loss = m.tensor("loss", [], "loss")
    correct = m.tensor("correct", [], "metric")
    g = m.tensor("%grad.y", m.shape(y), "grad")

    # The loss (cross-entropy on the mean membrane) and the evaluation's:
    # kernel ops of the test kernel library, sizes as constant tensors.
    def loss_kernel(gradient, ins, outs):
        kargs = [constant(f"loss{int(gradient)}.T", T),
                 constant(f"loss{int(gradient)}.B", B),
                 constant(f"loss{int(gradient)}.C", m.shape(y)[-1]),
                 constant(f"loss{int(gradient)}.gradient", int(gradient))]
        return op("kernel", ins, outs, kernel="snnrt_test_loss_ce",
                  args=kargs + ins + outs, grid=1, block=1)
    backward = [loss_kernel(True, [y, labels], [loss, g, correct])]
    evaluate = [loss_kernel(False, [y, labels], [loss, correct])]
    sgd = []
    for i in reversed(range(len(layers))):
        L = layers[i]
        ga = m.tensor(f"%grad.a{i + 1}", m.shape(L["a"]), "grad")
        saved = y if L["h"] is None else L["h"]
        backward.append(op("neuron_bwd", [g, saved], [ga], **L["neuron"]))
        gw = m.tensor(f"grad:fc{i + 1}.weight", m.shape(L["w"]), "grad")
        gb = m.tensor(f"grad:fc{i + 1}.bias", m.shape(L["b"]), "grad")
        need_gx = i > 0
        outs = [gw, gb]
        if need_gx:
            gx = m.tensor(f"%grad.x{i + 1}", m.shape(L["x"]), "grad")
            outs = [gx] + outs
        backward.append(op("linear_bwd", [ga, L["x"], L["w"]], outs,
                           has_bias=True, need_gx=need_gx,
                           launches=bias_launch("bias_grad", i,
                                                m.shape(L["b"])[0], [ga, gb])))
        if need_gx:
            g = gx
        for param, grad in ((L["w"], gw), (L["b"], gb)):
            name, shape = m.tensors[param]["name"], m.shape(param)
            buf = m.tensor(f"opt:{name}:momentum", shape, "optimizer_state",
                           init={"kind": "zeros"})
            sgd.append((param, grad, buf))
    # SGD with momentum 0.9 over every parameter: one kernel op of the test
    # kernel library (runtime/test/Inputs/TestKernels.cpp), which reads the
    # sizes and hyperparameters from constant tensors.
    kargs = [constant("sgd.segments", len(sgd)), constant("sgd.momentum", 0.9),
             constant("sgd.weight_decay", 0.0)]
    for i, (param, grad, buf) in enumerate(sgd):
        kargs += [constant(f"sgd.size{i}", math.prod(m.shape(param))), param,
                  grad, buf]
    update = [op("kernel", [t for s in sgd for t in s],
                 [t for p, _, b in sgd for t in (p, b)],
                 kernel="snnrt_test_sgd_momentum", args=kargs,
                 run_values=True, grid=1, block=1)]
    return {
        "format": "snn-module", "version": 1, "time_steps": T, "batch": B,
        "tensors": m.tensors, "input": x, "output": layers[-1]["s"],
        "labels": labels, "loss": loss, "correct": correct,
        "evaluate": {"labels": labels, "loss": loss, "correct": correct},
        "spike_layers": spike_layers,
        "programs": {"infer": infer, "train_forward": forward,
                     "backward": backward, "update": update,
                     "evaluate": evaluate},
        "optimizer": {"kind": "sgd", "lr": args.lr, "momentum": 0.9},
        "kernels": {"host": "kernels.host.so",
                    "host_triple": platform.machine() + "-unknown-linux-gnu",
                    "host_neurons": False},
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("output")
    p.add_argument("--in", dest="inputs", type=int, default=784)
    p.add_argument("--hidden", type=int, nargs="+", default=[256])
    p.add_argument("--out", dest="outputs", type=int, default=10)
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--kernels", required=True,
                   help="the test kernel library (snnrt-test-kernels.so)")
    p.add_argument("--lr", type=float, default=1e-3)
    args = p.parse_args()
    manifest = build(args)
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    shutil.copyfile(args.kernels, os.path.join(args.output, "kernels.host.so"))


if __name__ == "__main__":
    main()
