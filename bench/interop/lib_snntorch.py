"""snnTorch models exported with `snntorch.export_nir.export_to_nir` and
simulated by snnTorch itself; `import_from_nir` for the reverse direction.

snnTorch's exporter always writes dt = 1e-4, tau = dt/(1-beta), r = tau/dt
(so k = 1-beta, c = 1) and v_reset = 0; it does not record the reset
mechanism nor `reset_delay`, so the import options depend on how the model
was built (docs/nir.md, "Settings per exporter").
"""
import copy

import nir
import numpy as np
import torch

import snntorch as snn
from snntorch import utils as snn_utils
from snntorch.export_nir import export_to_nir
from snntorch.import_nir import import_from_nir

from common import Case, scale_weights

DT = ["--nir-dt=1e-4"]

ZERO_DELAYED = ("with reset_mechanism='zero' and the default reset_delay=True, "
                "snnTorch's Synaptic, RLeaky and RSynaptic set the membrane to 0 at "
                "the step after a spike, dropping that step's input (Leaky zeroes "
                "it before the decay: equal); RSynaptic(reset_delay=False) raises "
                "a TypeError in snnTorch 1.0.0")


def _b(value, shape):
    """A per-neuron decay: snnTorch 1.0's export of a scalar beta writes
    0-d LIF parameters, which nir's type inference rejects."""
    return torch.full(shape if isinstance(shape, tuple) else (shape,), value)


def _simulator(net):
    def simulate(x):
        snn_utils.reset(net)
        outs = []
        with torch.no_grad():
            for t in range(x.shape[0]):
                out = net(torch.from_numpy(x[t]))
                outs.append(out[0] if isinstance(out, tuple) else out)
        return torch.stack(outs).numpy()
    return simulate


def _case(name, net, shape, options, expect="equal", **kw):
    net.eval()
    # The export does not depend on reset_delay (it is not written), but
    # tracing an RSynaptic with reset_delay=False fails in snnTorch 1.0.0:
    # export with reset_delay=True, simulate with the model's own setting.
    delays = {m: m.reset_delay for m in net.modules() if hasattr(m, "reset_delay")}
    for m in delays:
        m.reset_delay = True
    graph = export_to_nir(net, torch.zeros((1,) + shape), ignore_dims=[0])
    for m, d in delays.items():
        m.reset_delay = d
    snn_utils.reset(net)
    return Case("snntorch", name, graph, _simulator(net), shape, DT + options,
                expect=expect, **kw)


def cases():
    torch.manual_seed(0)
    out = []

    def mlp(**lif):
        net = torch.nn.Sequential(
            torch.nn.Linear(20, 32), snn.Leaky(beta=_b(0.9, 32), threshold=_b(1.0, 32), init_hidden=True, **lif),
            torch.nn.Linear(32, 10), snn.Leaky(beta=_b(0.8, 10), threshold=_b(1.0, 10), init_hidden=True, **lif))
        scale_weights(net, 3.0)
        return net

    out.append(_case("Leaky MLP, reset zero", mlp(reset_mechanism="zero"), (20,),
                     ["--nir-reset=hard"]))
    out.append(_case("Leaky MLP, subtract, reset_delay=False",
                     mlp(reset_delay=False), (20,), ["--nir-reset=soft"],
                     expect="when a membrane is still above v_th after its soft reset "
                            "(H > 2 v_th), snnTorch's next step subtracts v_th once more "
                            "before firing and adds it back if that step does not fire; "
                            "equal while no membrane exceeds 2 v_th"))
    out.append(_case("Leaky MLP, subtract (default)", mlp(), (20,), ["--nir-reset=soft"],
                     expect="snnTorch's default reset_delay=True subtracts v_th at the "
                            "next step, after the decay: V = beta*H + x - v_th*S[t-1] "
                            "(ours: beta*(H - v_th*S) + x)"))

    conv = torch.nn.Sequential(
        torch.nn.Conv2d(2, 4, 3, padding=1), snn.Leaky(beta=_b(0.9, (4, 8, 8)), threshold=_b(1.0, (4, 8, 8)), init_hidden=True,
                                                       reset_mechanism="zero"),
        torch.nn.AvgPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(4 * 4 * 4, 10),
        snn.Leaky(beta=_b(0.9, 10), threshold=_b(1.0, 10), init_hidden=True, reset_mechanism="zero"))
    scale_weights(conv, 3.0)
    out.append(_case("Conv2d+AvgPool+Linear, Leaky reset zero", conv, (2, 8, 8),
                     ["--nir-reset=hard"]))

    def rleaky(bias, reset_delay=False):
        net = torch.nn.Sequential(
            torch.nn.Linear(20, 16),
            snn.RLeaky(beta=_b(0.9, 16), threshold=_b(1.0, 16), linear_features=16,
                       init_hidden=True, reset_mechanism="zero", reset_delay=reset_delay),
            torch.nn.Linear(16, 8),
            snn.Leaky(beta=_b(0.9, 8), threshold=_b(1.0, 8), init_hidden=True, reset_mechanism="zero"))
        if not bias:
            net[1].recurrent = torch.nn.Linear(16, 16, bias=False)
        scale_weights(net, 3.0)
        return net

    out.append(_case("RLeaky, recurrent Linear without bias", rleaky(False), (20,),
                     ["--nir-reset=hard"]))
    out.append(_case("RLeaky, recurrent Linear without bias, reset_delay=True",
                     rleaky(False, True), (20,), ["--nir-reset=hard"], expect=ZERO_DELAYED))
    # snnTorch feeds back its spikes (0 at t = 0) through the recurrent
    # Affine, so its bias acts from t = 0; so does the importer since main's
    # recurrence fix (before it, the Affine's output was carried, 0 at t = 0).
    out.append(_case("RLeaky, recurrent Linear with bias", rleaky(True), (20,),
                     ["--nir-reset=hard"]))
    # The same file with the recurrent bias moved into the input Affine (both
    # sum into the LIF, so snnTorch's spikes are the same): equal either way.
    moved = copy.deepcopy(out[-1])
    moved.name = "RLeaky with bias, recurrent bias moved to the input Affine"
    moved.expect = "equal"
    rec, inp = moved.graph.nodes["1.w_rec"], moved.graph.nodes["0"]
    inp.bias = inp.bias + rec.bias
    moved.graph.nodes["1.w_rec"] = nir.Linear(weight=rec.weight)
    out.append(moved)

    def synaptic(**kw):
        net = torch.nn.Sequential(
            torch.nn.Linear(20, 16),
            snn.Synaptic(alpha=_b(0.8, 16), beta=_b(0.9, 16), threshold=_b(1.0, 16),
                         init_hidden=True, reset_mechanism="zero", **kw),
            torch.nn.Linear(16, 8),
            snn.Synaptic(alpha=_b(0.7, 8), beta=_b(0.9, 8), threshold=_b(1.0, 8),
                         init_hidden=True, reset_mechanism="zero", **kw))
        scale_weights(net, 2.0)
        return net

    out.append(_case("Synaptic (CubaLIF) MLP, reset zero, reset_delay=False",
                     synaptic(reset_delay=False), (20,), ["--nir-reset=hard"]))
    out.append(_case("Synaptic (CubaLIF) MLP, reset zero (reset_delay=True)",
                     synaptic(), (20,), ["--nir-reset=hard"], expect=ZERO_DELAYED))

    rsyn = torch.nn.Sequential(
        torch.nn.Linear(20, 16),
        snn.RSynaptic(alpha=_b(0.8, 16), beta=_b(0.9, 16), threshold=_b(1.0, 16), linear_features=16, init_hidden=True,
                      reset_mechanism="zero"),
        torch.nn.Linear(16, 8),
        snn.Leaky(beta=_b(0.9, 8), threshold=_b(1.0, 8), init_hidden=True, reset_mechanism="zero"))
    rsyn[1].recurrent = torch.nn.Linear(16, 16, bias=False)
    scale_weights(rsyn, 2.0)
    out.append(_case("RSynaptic (CubaLIF), recurrent without bias, reset_delay=True", rsyn, (20,),
                     ["--nir-reset=hard"], expect=ZERO_DELAYED))
    return out


def import_and_simulate(graph, x):
    """snnTorch's import_from_nir of `graph`, run on x [T, B, ...]."""
    net = import_from_nir(graph)
    net.eval()
    state = None
    outs = []
    with torch.no_grad():
        for t in range(x.shape[0]):
            out, state = net(torch.from_numpy(x[t]), state)
            outs.append(out)
    return torch.stack(outs).numpy()


def reverse_cases():
    """Our models (random weights) for snnTorch's importer, which maps LIF to
    Leaky(beta = 1 - dt/tau, reset to zero, reset_delay=False) at its fixed
    dt = 1e-4 and CubaLIF to Synaptic; a LIF -> Linear -> LIF cycle becomes an
    RLeaky."""
    import nir
    rng = np.random.default_rng(3)
    dt = 1e-4

    def lif(n, beta):
        tau = np.full(n, dt / (1 - beta))
        return nir.LIF(tau=tau, r=tau / dt, v_leak=np.zeros(n), v_threshold=np.ones(n),
                       v_reset=np.zeros(n))

    def affine(o, i, s, bias=0.0):
        return nir.Affine(rng.normal(0, s, (o, i)).astype(np.float32),
                          rng.normal(0, bias, o).astype(np.float32) if bias
                          else np.zeros(o, np.float32))

    out = []
    g = nir.NIRGraph.from_list(affine(16, 20, 1.0, 0.2), lif(16, 0.9), affine(8, 16, 1.0),
                               lif(8, 0.8))
    out.append(Case("snntorch", "Affine-LIF-Affine-LIF (random)", g, None, (20,),
                    DT + ["--nir-reset=hard"]))

    def cuba(n, alpha, beta):
        ts, tm = np.full(n, dt / (1 - alpha)), np.full(n, dt / (1 - beta))
        return nir.CubaLIF(tau_syn=ts, tau_mem=tm, r=tm / dt, v_leak=np.zeros(n),
                           v_threshold=np.ones(n), v_reset=np.zeros(n), w_in=ts / dt)

    g = nir.NIRGraph.from_list(affine(16, 20, 0.6), cuba(16, 0.8, 0.9), affine(8, 16, 0.6),
                               cuba(8, 0.7, 0.9))
    out.append(Case("snntorch", "Affine-CubaLIF-Affine-CubaLIF (random)", g, None, (20,),
                    DT + ["--nir-reset=hard"]))

    w_rec = rng.normal(0, 0.5, (16, 16)).astype(np.float32)
    nodes = {"input": nir.Input(input_type=np.array([20])), "fc": affine(16, 20, 1.0),
             "lif": lif(16, 0.9), "w_rec": nir.Linear(w_rec),
             "fc2": affine(8, 16, 1.0), "lif2": lif(8, 0.9),
             "output": nir.Output(output_type=np.array([8]))}
    edges = [("input", "fc"), ("fc", "lif"), ("lif", "w_rec"), ("w_rec", "lif"),
             ("lif", "fc2"), ("fc2", "lif2"), ("lif2", "output")]
    out.append(Case("snntorch", "Affine-LIF(+Linear recurrence)-Affine-LIF (random)",
                    nir.NIRGraph(nodes=nodes, edges=edges), None, (20,),
                    DT + ["--nir-reset=hard"],
                    expect="snnTorch 1.0.0's import_from_nir (with nirtorch 2.6) fails on "
                           "every recurrent graph read from a file, its own RLeaky export "
                           "included (AttributeError in nirtorch's state construction)"))
    for c in out:
        c.simulate = import_and_simulate
    return out
