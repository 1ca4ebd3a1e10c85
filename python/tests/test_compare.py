"""snnref.compare on a small module with a simulated runtime output."""

import json

import numpy as np
import pytest

from snnref.compare import main
from snnref.tensorio import write_npy, write_safetensors

T, B, F = 4, 3, 5


def make_module(tmp_path, readout="lif"):
    neuron = dict(op="neuron", model=readout, features=F, k=0.5, c=0.5, v_leak=0,
                  v_th=1, v_reset=0, v_init=0, reset="hard", strict=False,
                  save_h=False, **{"in": [3]}, out=[4])
    m = {"format": "snn-module", "version": 1, "time_steps": T, "batch": B,
         "tensors": [dict(id=0, name="input", shape=[T, B, F], role="input"),
                     dict(id=1, name="fc.weight", shape=[F, F], role="param",
                          init={"kind": "kaiming_uniform", "fan_in": F}),
                     dict(id=2, name="fc.bias", shape=[F], role="param",
                          init={"kind": "zeros"}),
                     dict(id=3, name="%3", shape=[T, B, F], role="activation"),
                     dict(id=4, name="out", shape=[T, B, F], role="activation")],
         "input": 0, "output": 4,
         "programs": {"infer": [dict(op="linear", has_bias=True, **{"in": [0, 1, 2]},
                                     out=[3]), neuron]}}
    d = tmp_path / "m.snnmod"
    d.mkdir()
    (d / "manifest.json").write_text(json.dumps(m))
    return str(d)


def run(tmp_path, module, x, out, weights=True, extra=()):
    write_npy(str(tmp_path / "x.npy"), x)
    write_npy(str(tmp_path / "out.npy"), out)
    args = [module, "--input", str(tmp_path / "x.npy"), "--output", str(tmp_path / "out.npy")]
    if weights:
        write_safetensors(str(tmp_path / "w.safetensors"),
                          {"fc.weight": np.eye(F, dtype=np.float32)})
        args += ["--weights", str(tmp_path / "w.safetensors")]
    return main(args + list(extra))


def reference(x):
    """The same network written out: identity weights, LIF k = c = 1/2."""
    v = np.zeros(x.shape[0:1] + (F,))
    out = []
    for _ in range(T):
        h = v + 0.5 * (0 - v) + 0.5 * x
        s = (h >= 1).astype(np.float32)
        v = h * (1 - s)
        out.append(s)
    return np.stack(out)


def test_match_mismatch_and_near_threshold(tmp_path, capsys, rng):
    module = make_module(tmp_path)
    N = 7  # not a multiple of the batch: the last batch is padded
    x = rng.uniform(0, 3.5, (N, F)).astype(np.float32)
    x[np.abs(0.5 * x - 1) < 1e-3] = 0.5  # keep the first step clear of v_th ...
    x[2, 3] = np.float32(2.0 + 4e-6)       # ... except one neuron: H0 = 1 + 2e-6
    good = reference(x.astype(np.float64))
    assert good[0, 2, 3] == 1
    assert run(tmp_path, module, x, good) == 0
    assert "MATCH" in capsys.readouterr().out

    flipped = good.copy()
    flipped[0, 2, 3] = 0  # within 1e-5 of the threshold: fp32 rounding
    assert run(tmp_path, module, x, flipped) == 0
    assert "1 near-threshold flips" in capsys.readouterr().out

    far = np.argwhere(np.abs(0.5 * x - 1) > 0.1)[0]
    wrong = good.copy()
    wrong[0, far[0], far[1]] = 1 - wrong[0, far[0], far[1]]
    assert run(tmp_path, module, x, wrong) == 1
    report = capsys.readouterr().out
    assert "1 real mismatches" in report and "MISMATCH" in report


def test_membrane_outputs_use_rtol(tmp_path, capsys, rng):
    module = make_module(tmp_path, readout="li")
    x = rng.uniform(-1, 1, (T, B, F)).astype(np.float32)  # pre-encoded [T, N, F]
    from snnref.manifest import Module
    mod = Module(module)
    mod.initialize({"fc.weight": np.eye(F)}, require_given=True)
    mod.set("input", x)
    mod.run("infer")
    ref = mod.get("out")
    assert run(tmp_path, module, x, ref * (1 + 1e-8)) == 0
    bad = ref.copy()
    bad[1, 0, 0] += 1e-3
    assert run(tmp_path, module, x, bad) == 1
    assert "1 of 60 outside rtol" in capsys.readouterr().out


def test_bad_inputs_exit_2(tmp_path, capsys, rng):
    module = make_module(tmp_path)
    x = rng.uniform(0, 2, (4, F)).astype(np.float32)
    assert run(tmp_path, module, x, reference(x), weights=False) == 2
    assert "randomly initialized" in capsys.readouterr().err
    assert run(tmp_path, module, x, reference(x)[:, :2]) == 2
    assert "--limit" in capsys.readouterr().err
    assert run(tmp_path, module, x[:, :3], reference(x)) == 2
    assert "does not hold samples" in capsys.readouterr().err
    assert main([str(tmp_path / "nope.snnmod"), "--input", "a", "--output", "b"]) == 2
