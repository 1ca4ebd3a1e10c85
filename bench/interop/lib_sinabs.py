"""Sinabs models exported with `sinabs.nir.to_nir` and simulated by Sinabs
itself (its `*Squeeze` layers over [B*T, ...], batch-major); `sinabs.from_nir`
for the reverse direction.

Sinabs works in time steps: its export writes IAF as IF with r = 1 and LIF as
LIF with tau = tau_mem (in steps), r = 1, no v_reset; its neurons reset by
subtraction (MembraneSubtract) and emit several spikes per step by default
(MultiSpike).
"""
import numpy as np
import torch

import nir
import sinabs
import sinabs.layers as sl
from sinabs.activation import MultiSpike, SingleSpike

from common import Case, scale_weights

OPTS = ["--nir-dt=1", "--nir-reset=soft"]


def _run(net, x):
    """x [T, B, ...] -> Sinabs' [B*T, ...] (batch-major) and back."""
    T, B = x.shape[:2]
    sinabs.reset_states(net)
    with torch.no_grad():
        y = net(torch.from_numpy(np.ascontiguousarray(np.swapaxes(x, 0, 1))).reshape(
            (B * T,) + x.shape[2:]))
    sinabs.reset_states(net)
    if isinstance(y, tuple):  # a module built by nirtorch 2.6: (output, state)
        y = y[0]
    y = y.reshape((B, T) + tuple(y.shape[1:])).numpy()
    return np.swapaxes(y, 0, 1)


def _writable(graph):
    """Sinabs' export leaves torch tensors (nir.write wants arrays), 0-d
    parameters (nir 1.0.8 cannot write them: written as [1]), and
    Conv2d and Flatten nodes without their input shape (filled in by the
    caller): converted, values unchanged."""
    for node in graph.nodes.values():
        for key, value in list(vars(node).items()):
            if isinstance(value, torch.Tensor):
                value = value.detach().numpy()
            if isinstance(value, np.ndarray) and value.ndim == 0:
                value = value.reshape(1)  # nir 1.0.8 cannot write 0-d datasets
            setattr(node, key, value)
    return graph


def _case(name, net, shape, options=OPTS, expect="equal", B=4, T=20, conv_shapes=None,
          flatten_types=None):
    net.eval()
    graph = sinabs.nir.to_nir(net, torch.zeros((B,) + shape))
    sinabs.reset_states(net)
    for key, hw in (conv_shapes or {}).items():
        graph.nodes[key].input_shape = np.array(hw)
    for key, t in (flatten_types or {}).items():
        graph.nodes[key].input_type = {"input": np.array(t)}
    return Case("sinabs", name, _writable(graph), lambda x: _run(net, x), shape, options,
                expect=expect, B=B, T=T)


def cases():
    torch.manual_seed(0)
    B = 4
    out = []

    def iaf_mlp(spike_fn, gain):
        net = torch.nn.Sequential(
            torch.nn.Linear(20, 32), sl.IAFSqueeze(batch_size=B, spike_fn=spike_fn),
            torch.nn.Linear(32, 10), sl.IAFSqueeze(batch_size=B, spike_fn=spike_fn))
        scale_weights(net, gain)
        return net

    out.append(_case("IAF MLP, SingleSpike", iaf_mlp(SingleSpike, 1.5), (20,),
                     expect="equal unless a membrane equals the threshold exactly "
                            "(Sinabs fires at v >= v_th)"))
    out.append(_case("IAF MLP, MultiSpike (default)", iaf_mlp(MultiSpike, 1.5), (20,),
                     expect="Sinabs' default MultiSpike emits floor(v/v_th) spikes in one "
                            "step; ours at most one"))
    lif = torch.nn.Sequential(
        torch.nn.Linear(20, 32), sl.LIFSqueeze(tau_mem=20.0, batch_size=B, spike_fn=SingleSpike),
        torch.nn.Linear(32, 10), sl.LIFSqueeze(tau_mem=20.0, batch_size=B, spike_fn=SingleSpike))
    scale_weights(lif, 60.0)
    out.append(_case("LIF(tau_mem=20) MLP, SingleSpike", lif, (20,),
                     expect="Sinabs decays by exp(-1/tau) and scales the input by "
                            "1 - exp(-1/tau) (norm_input); NIR's Euler step by 1/tau"))
    conv = torch.nn.Sequential(
        torch.nn.Conv2d(2, 4, 3, padding=1), sl.IAFSqueeze(batch_size=B, spike_fn=SingleSpike),
        sl.SumPool2d(2), torch.nn.Flatten(), torch.nn.Linear(4 * 4 * 4, 10),
        sl.IAFSqueeze(batch_size=B, spike_fn=SingleSpike))
    scale_weights(conv, 1.5)
    out.append(_case("Conv2d+SumPool+Linear, IAF SingleSpike", conv, (2, 8, 8),
                     conv_shapes={"0": (8, 8)}, flatten_types={"3": (4, 4, 4)},
                     expect="equal unless a membrane equals the threshold exactly "
                            "(Sinabs fires at v >= v_th)"))
    return out


def reverse_cases():
    """Our models (random weights) for Sinabs' importer (IF -> IAFSqueeze
    with MultiSpike and min_v_mem = -v_th; LIF -> LIFSqueeze with exp decay)."""
    rng = np.random.default_rng(4)
    g = nir.NIRGraph.from_list(
        nir.Affine(rng.normal(0, 0.4, (16, 20)).astype(np.float32), np.zeros(16, np.float32)),
        nir.IF(r=np.ones(16), v_threshold=np.ones(16)),
        nir.Affine(rng.normal(0, 0.4, (8, 16)).astype(np.float32), np.zeros(8, np.float32)),
        nir.IF(r=np.ones(8), v_threshold=np.ones(8)))
    case = Case("sinabs", "Affine-IF-Affine-IF (random)", g, None, (20,), OPTS,
                expect="Sinabs' importer builds IAFSqueeze with MultiSpike (several "
                       "spikes per step where v >= 2 v_th) and min_v_mem = -v_th (the "
                       "membrane is clipped at -v_th); ours: one spike, no clipping")
    case.simulate = import_and_simulate
    single = Case("sinabs", "Affine-IF-Affine-IF (random), imported layers set to "
                  "SingleSpike, min_v_mem=None", g, None, (20,), OPTS,
                  expect="equal unless a membrane equals the threshold exactly "
                         "(Sinabs fires at v >= v_th)")
    single.simulate = lambda graph, x: import_and_simulate(graph, x, single_spike=True)
    return [case, single]


def import_and_simulate(graph, x, single_spike=False):
    net = sinabs.from_nir(graph, batch_size=x.shape[1])
    net.eval()
    if single_spike:  # confirms the cause given for the default import
        for m in net.modules():
            if isinstance(m, sl.IAFSqueeze):
                m.spike_fn = SingleSpike
                m.min_v_mem = None
    return _run(net, x)
