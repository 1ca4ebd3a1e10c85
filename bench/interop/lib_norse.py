"""Norse models exported with `norse.torch.utils.export_nir.to_nir` and
simulated by Norse itself (`SequentialState`, one call per step);
`norse.torch.from_nir` for the reverse direction.

Norse's exporter writes `tau = dt / tau_mem_inv` (dt its argument, default
1e-3), `r = 1` and no `v_reset`; its box neurons are forward-Euler steps with
the input inside the leak term (`c = k`), a hard reset to 0 and a strict
threshold.
"""
import copy

import numpy as np
import torch

import nir
import norse.torch as nt
from norse.torch.utils.export_nir import to_nir

from common import Case, scale_weights

DT = 1e-3
OPTS = [f"--nir-dt={DT}", "--nir-reset=hard"]
# Norse 1.1.0's export writes tau = dt / tau_mem_inv (1e-5 s for the default
# 1/tau_mem_inv = 10 ms), dt times the time constant: the leak dt/tau of the
# file equals Norse's dt * tau_mem_inv only at a step of dt^2.
EXPORT_OPTS = [f"--nir-dt={DT * DT:g}", "--nir-reset=hard"]
TAU_BUG = ("Norse's export writes tau = dt/tau_mem_inv (dt x the time constant): "
           "at --nir-dt=dt the leak is 1/tau_mem_inv = 100 > 1 (rejected); "
           "--nir-dt=dt^2 reproduces dt*tau_mem_inv")


def _simulate(net):
    def simulate(x):
        state = None
        outs = []
        with torch.no_grad():
            for t in range(x.shape[0]):
                out, state = net(torch.from_numpy(x[t]), state)
                outs.append(out)
        return torch.stack(outs).numpy()
    return simulate


def _fix_input(graph, shape):
    """What nir.write needs of Norse's export: its Input node has the batched
    shape ([1, 20]) where NIR has one sample's, its neuron parameters are 0-d
    tensors (nir 1.0.8 cannot write 0-d datasets: written as [1], which the
    importer reads as one value for the layer). The values are unchanged."""
    for node in graph.nodes.values():
        if isinstance(node, nir.Input):
            node.input_type = {"input": np.array(shape)}
        for key, value in list(vars(node).items()):
            if isinstance(value, torch.Tensor):
                value = value.detach().numpy()
            if isinstance(value, np.ndarray) and value.ndim == 0:
                value = value.reshape(1)
            setattr(node, key, value)
    return graph


def _case(name, net, shape, options=EXPORT_OPTS, expect="equal", **kw):
    net.eval()
    graph = to_nir(net, torch.zeros((1,) + shape), dt=DT)
    # Norse's Conv2d nodes have no input_shape (nir.write needs one): the
    # (H, W) that the layer sees, from one run of the model.
    seen = {}

    def hook(key):
        def record(module, inputs, output):
            seen[key] = tuple(inputs[0].shape[-2:])
        return record

    hooks = [m.register_forward_hook(hook(key))
             for key, m in net.named_modules() if isinstance(m, torch.nn.Conv2d)]
    with torch.no_grad():
        net(torch.zeros((1,) + shape))
    for h in hooks:
        h.remove()
    for key, hw in seen.items():
        graph.nodes[key].input_shape = np.array(hw)
    return Case("norse", name, _fix_input(graph, shape), _simulate(net), shape, options,
                expect=expect, **kw)


def cases():
    torch.manual_seed(0)
    out = []
    mlp = nt.SequentialState(torch.nn.Linear(20, 32), nt.LIFBoxCell(),
                             torch.nn.Linear(32, 10), nt.LIBoxCell())
    scale_weights(mlp, 40.0)
    out.append(_case("LIFBoxCell MLP, LIBoxCell readout", mlp, (20,), output="membrane"))

    conv = nt.SequentialState(torch.nn.Conv2d(2, 4, 3, padding=1), nt.LIFBoxCell(),
                              torch.nn.Conv2d(4, 4, 3, stride=2), nt.LIFBoxCell())
    scale_weights(conv, 60.0)
    out.append(_case("Conv2d + LIFBoxCell", conv, (2, 8, 8)))

    def iaf():
        net = nt.SequentialState(torch.nn.Linear(20, 32), nt.IAFCell(),
                                 torch.nn.Linear(32, 10), nt.IAFCell())
        scale_weights(net, 2.0)
        return net

    out.append(_case("IAFCell MLP", iaf(), (20,), options=["--nir-dt=1"]))
    out.append(_case("IAFCell MLP, dt of the export", iaf(), (20,), options=OPTS,
                     expect="Norse's IAFCell adds its input unscaled (v += x) but the "
                            "export writes r = 1, which NIR integrates as v += r*dt*x: "
                            "equal only at --nir-dt=1 (row above)"))
    mlp2 = nt.SequentialState(torch.nn.Linear(20, 32), nt.LIFBoxCell(),
                              torch.nn.Linear(32, 10), nt.LIBoxCell())
    out.append(_case("LIFBoxCell MLP, dt of the export", mlp2, (20,), options=OPTS,
                     output="membrane", expect=TAU_BUG))

    cuba = nt.SequentialState(torch.nn.Linear(20, 32), nt.LIFCell(),
                              torch.nn.Linear(32, 10), nt.LIFCell())
    scale_weights(cuba, 10.0)
    out.append(_case("LIFCell (CubaLIF) MLP", cuba, (20,),
                     expect="the export writes no w_in (NIR: 1), so the synaptic input "
                            "is scaled by dt/tau_syn on import; Norse adds it unscaled "
                            "(i += x). It needs w_in = tau_syn/dt, as snnTorch writes"))
    # The same file with w_in = tau_syn/dt added: the only difference.
    fixed = copy.deepcopy(out[-1])
    fixed.name = "LIFCell (CubaLIF) MLP, file + w_in = tau_syn/dt"
    fixed.expect = "equal"
    for node in fixed.graph.nodes.values():
        if isinstance(node, nir.CubaLIF):
            node.w_in = np.asarray(node.tau_syn) / (DT * DT)
    out.append(fixed)
    return out


def reverse_cases():
    """Our models (random weights) for Norse's importer."""
    rng = np.random.default_rng(1)
    out = []
    g = nir.NIRGraph.from_list(
        nir.Affine(rng.normal(0, 8, (16, 20)).astype(np.float32),
                   rng.normal(0, 2, 16).astype(np.float32)),
        nir.LIF(tau=np.full(16, 0.01), r=np.ones(16), v_leak=np.zeros(16),
                v_threshold=np.ones(16), v_reset=np.zeros(16)),
        nir.Affine(rng.normal(0, 6, (8, 16)).astype(np.float32), np.zeros(8, np.float32)),
        nir.LIF(tau=np.full(8, 0.005), r=np.ones(8), v_leak=np.zeros(8),
                v_threshold=np.ones(8), v_reset=np.zeros(8)))
    out.append(Case("norse", "Affine-LIF-Affine-LIF (random)", g, None, (20,), OPTS))
    g = nir.NIRGraph.from_list(
        nir.Affine(rng.normal(0, 0.5, (16, 20)).astype(np.float32), np.zeros(16, np.float32)),
        nir.IF(r=np.full(16, 1.0 / DT), v_threshold=np.ones(16), v_reset=np.zeros(16)))
    out.append(Case("norse", "Affine-IF (random)", g, None, (20,), OPTS))
    g = nir.NIRGraph.from_list(
        nir.Affine(rng.normal(0, 4, (16, 20)).astype(np.float32), np.zeros(16, np.float32)),
        nir.CubaLIF(tau_syn=np.full(16, 0.005), tau_mem=np.full(16, 0.01), r=np.ones(16),
                    v_leak=np.zeros(16), v_threshold=np.ones(16), v_reset=np.zeros(16),
                    w_in=np.ones(16)))
    out.append(Case("norse", "Affine-CubaLIF (random)", g, None, (20,), OPTS))
    lif = lambda n, tau: nir.LIF(tau=np.full(n, tau), r=np.ones(n), v_leak=np.zeros(n),  # noqa: E731
                                 v_threshold=np.ones(n), v_reset=np.zeros(n))
    nodes = {"input": nir.Input(input_type=np.array([20])),
             "fc": nir.Affine(rng.normal(0, 8, (16, 20)).astype(np.float32), np.zeros(16, np.float32)),
             "lif": lif(16, 0.01),
             "w_rec": nir.Linear(rng.normal(0, 4, (16, 16)).astype(np.float32)),
             "fc2": nir.Affine(rng.normal(0, 6, (8, 16)).astype(np.float32), np.zeros(8, np.float32)),
             "lif2": lif(8, 0.005), "output": nir.Output(output_type=np.array([8]))}
    edges = [("input", "fc"), ("fc", "lif"), ("lif", "w_rec"), ("w_rec", "lif"),
             ("lif", "fc2"), ("fc2", "lif2"), ("lif2", "output")]
    out.append(Case("norse", "Affine-LIF(+Linear recurrence)-Affine-LIF (random)",
                    nir.NIRGraph(nodes=nodes, edges=edges), None, (20,), OPTS,
                    expect="Norse's from_nir runs the graph with nirtorch's legacy "
                           "GraphExecutor, which returns the second-to-last node of its "
                           "execution order when the last is the Output: with the cycle "
                           "that is a 16-feature node, not the 8-feature Output"))
    for c in out:
        c.simulate = import_and_simulate
    return out


def import_and_simulate(graph, x):
    net = nt.from_nir(graph, dt=DT)
    net.eval()
    return _simulate(net)(x)
