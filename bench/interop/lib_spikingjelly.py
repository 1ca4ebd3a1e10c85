"""SpikingJelly models exported with
`spikingjelly.activation_based.nir_exchange.export_to_nir` and simulated by
SpikingJelly itself (single-step mode, its torch backend);
`import_from_nir` for the reverse direction.

SpikingJelly is not on PyPI in a current version: run.py puts its public
source (.interop-cache/spikingjelly, see README.md) on sys.path.
Its exporter writes tau = tau_sj * dt (dt its argument, default 1e-4),
r = 1 (decay_input) or tau_sj, v_leak = v_reset, and a soft-reset node
(v_reset=None) as a hard reset to 0: the reset must be chosen on import.
"""
import numpy as np
import torch

import nir
from spikingjelly.activation_based import functional, layer, neuron, surrogate  # noqa: F401
from spikingjelly.activation_based.nir_exchange import export_to_nir, import_from_nir
from spikingjelly.activation_based.nir_exchange import to_nir as _sj_to_nir

from common import Case, scale_weights

DT = 1e-4
HARD = [f"--nir-dt={DT:g}", "--nir-reset=hard"]
SOFT = [f"--nir-dt={DT:g}", "--nir-reset=soft"]
RECURRENT_BIAS = ("nirtorch's interpreter (SpikingJelly's import_from_nir) feeds back the "
                  "recurrent Affine's previous output, 0 at t = 0, so its bias acts "
                  "from t = 1; our import feeds back the spikes (0 at t = 0) through "
                  "the Affine, so the bias acts from t = 0, as snnTorch's RLeaky")
TIES = ("SpikingJelly fires at H >= v_th, NIR (and we) at H > v_th: differs only "
        "where a membrane equals the threshold exactly")


class _NirCompat:
    """SpikingJelly's exporter passes input_type=/output_type= to nir.IF and
    nir.LIF, which nir 1.0.8 (the newest on PyPI) does not accept: drop them
    (nir derives both from the parameters' shapes, which are the same)."""

    def __getattr__(self, name):
        attr = getattr(nir, name)
        if name in ("IF", "LIF"):
            def make(*args, input_type=None, output_type=None, **kw):
                return attr(*args, **kw)
            return make
        return attr


_sj_to_nir.nir = _NirCompat()


def _simulate(net, state=None):
    def simulate(x):
        nonlocal state
        functional.reset_net(net)
        outs = []
        with torch.no_grad():
            for t in range(x.shape[0]):
                if isinstance(net, torch.fx.GraphModule):
                    # Built by nirtorch (import_from_nir): it returns (output,
                    # state) and carries recurrent edges in that state.
                    out, state = net(torch.from_numpy(x[t]), state)
                else:
                    out = net(torch.from_numpy(x[t]))
                outs.append(out)
        functional.reset_net(net)
        return torch.stack(outs).numpy()
    return simulate


def _case(name, net, shape, options=HARD, expect="equal", **kw):
    net.eval()
    graph = export_to_nir(net, torch.zeros((1,) + shape), dt=DT)
    functional.reset_net(net)
    return Case("spikingjelly", name, graph, _simulate(net), shape, options,
                expect=expect, **kw)


def cases():
    torch.manual_seed(0)
    out = []

    def mlp(node, gain=8.0):
        net = torch.nn.Sequential(layer.Linear(20, 32), node(), layer.Linear(32, 10), node())
        scale_weights(net, gain)
        return net

    out.append(_case("LIFNode(tau=2) MLP, hard reset",
                     mlp(lambda: neuron.LIFNode(tau=2.0)), (20,)))
    out.append(_case("LIFNode(tau=2, decay_input=False) MLP",
                     mlp(lambda: neuron.LIFNode(tau=2.0, decay_input=False), 4.0), (20,)))
    out.append(_case("LIFNode(tau=2, v_reset=None) MLP, soft reset",
                     mlp(lambda: neuron.LIFNode(tau=2.0, v_reset=None)), (20,), options=SOFT))
    out.append(_case("LIFNode(tau=2, v_reset=None) MLP, imported hard",
                     mlp(lambda: neuron.LIFNode(tau=2.0, v_reset=None)), (20,),
                     expect="SpikingJelly writes its soft-reset node as a hard reset to 0 "
                            "(NIR has no reset mode): import it with --nir-reset=soft "
                            "(row above)"))
    out.append(_case("IFNode MLP", mlp(lambda: neuron.IFNode(), 3.0), (20,)))
    out.append(_case("ParametricLIFNode MLP", mlp(lambda: neuron.ParametricLIFNode(
        init_tau=3.0), 10.0), (20,)))

    conv = torch.nn.Sequential(
        layer.Conv2d(2, 4, 3, padding=1), neuron.LIFNode(tau=2.0), layer.AvgPool2d(2),
        layer.Flatten(), layer.Linear(4 * 4 * 4, 10), neuron.LIFNode(tau=2.0))
    scale_weights(conv, 10.0)
    out.append(_case("Conv2d+AvgPool+Linear, LIFNode", conv, (2, 8, 8)))
    return out


def reverse_cases():
    """Our models (random weights) for SpikingJelly's importer, which takes
    Affine/Linear/Conv2d/AvgPool2d/Flatten/IF/LIF with one tau per layer and
    r = 1 or r = tau/dt."""
    rng = np.random.default_rng(2)
    out = []

    def lif(n, tau_sj):
        return nir.LIF(tau=np.full(n, tau_sj * DT), r=np.ones(n), v_leak=np.zeros(n),
                       v_threshold=np.ones(n), v_reset=np.zeros(n))

    g = nir.NIRGraph.from_list(
        nir.Affine(rng.normal(0, 1.5, (16, 20)).astype(np.float32),
                   rng.normal(0, 0.3, 16).astype(np.float32)),
        lif(16, 2.0),
        nir.Affine(rng.normal(0, 1.5, (8, 16)).astype(np.float32), np.zeros(8, np.float32)),
        lif(8, 4.0))
    out.append(Case("spikingjelly", "Affine-LIF-Affine-LIF (random)", g, None, (20,), HARD))
    g = nir.NIRGraph.from_list(
        nir.Conv2d(input_shape=(8, 8), weight=rng.normal(0, 1.0, (4, 2, 3, 3)).astype(np.float32),
                   stride=1, padding=1, dilation=1, groups=1, bias=np.zeros(4, np.float32)),
        nir.IF(r=np.full((4, 8, 8), 1.0 / DT), v_threshold=np.ones((4, 8, 8)),
               v_reset=np.zeros((4, 8, 8))),
        nir.Flatten(input_type={"input": np.array([4, 8, 8])}, start_dim=0),
        nir.Affine(rng.normal(0, 0.5, (10, 256)).astype(np.float32), np.zeros(10, np.float32)),
        lif(10, 2.0))
    out.append(Case("spikingjelly", "Conv2d-IF-Flatten-Affine-LIF (random)", g, None,
                    (2, 8, 8), HARD))
    w_rec = rng.normal(0, 0.8, (16, 16)).astype(np.float32)
    for kind, rec in (("Linear", nir.Linear(w_rec)),
                      ("Affine", nir.Affine(w_rec, rng.normal(0, 0.5, 16).astype(np.float32)))):
        nodes = {"input": nir.Input(input_type=np.array([20])),
                 "fc": nir.Affine(rng.normal(0, 1.5, (16, 20)).astype(np.float32),
                                  np.zeros(16, np.float32)),
                 "lif": lif(16, 2.0), "w_rec": rec,
                 "fc2": nir.Affine(rng.normal(0, 1.5, (8, 16)).astype(np.float32),
                                   np.zeros(8, np.float32)),
                 "lif2": lif(8, 2.0), "output": nir.Output(output_type=np.array([8]))}
        edges = [("input", "fc"), ("fc", "lif"), ("lif", "w_rec"), ("w_rec", "lif"),
                 ("lif", "fc2"), ("fc2", "lif2"), ("lif2", "output")]
        out.append(Case("spikingjelly", f"Affine-LIF(+{kind} recurrence)-Affine-LIF (random)",
                        nir.NIRGraph(nodes=nodes, edges=edges), None, (20,), HARD,
                        expect="equal" if kind == "Linear" else RECURRENT_BIAS))
    # The same with the recurrent edge's state seeded with the Affine's output
    # at zero spikes (its bias): then the bias acts from t = 0, as ours.
    seeded = Case("spikingjelly", "Affine-LIF(+Affine recurrence)-Affine-LIF (random), "
                  "nirtorch state seeded with the recurrent bias", out[-1].graph, None, (20,),
                  HARD)
    for c in out:
        c.simulate = import_and_simulate
    seeded.simulate = lambda graph, x: import_and_simulate(graph, x, seed_recurrent=True)
    out.append(seeded)
    return out


def import_and_simulate(graph, x, seed_recurrent=False):
    net = import_from_nir(graph, dt=DT)
    net.eval()
    state = None
    if seed_recurrent:
        # nirtorch reads a recurrent input as state["<source>_prev_output"],
        # 0 when absent (t = 0): give it the Affine's output for zero spikes.
        edges = {tuple(e) for e in graph.edges}
        rec = [(a, graph.nodes[a]) for a, b in edges
               if isinstance(graph.nodes[a], nir.Affine) and (b, a) in edges]
        state = {f"{name}_prev_output": torch.from_numpy(np.asarray(node.bias, np.float32))
                 for name, node in rec}
    return _simulate(net, state)(x)
