"""The interpreter: whole-program gradients against central differences of
the loss (smooth spikes), update wiring, storage rules and errors."""

import json

import numpy as np
import pytest

from snnref import RefError
from snnref.gradcheck import check_grad, sample_indices
from snnref.manifest import Module

from modules import B, T, conv_training_module


def loaded(rng, **kw):
    mod = Module(conv_training_module(**kw))
    mod.initialize(seed=int(rng.integers(1 << 30)))
    mod.set("input", rng.normal(0.5, 1.0, (T, B, 2, 4, 4)))
    mod.set("labels", rng.integers(0, 4, B))
    return mod


def loss_of(mod, name, value):
    saved = mod.get(name).copy()
    mod.set(name, value)
    mod.run("train_forward", smooth=True)
    mod.run("backward", smooth=True)
    mod.set(name, saved)
    return float(mod.get("loss"))


@pytest.mark.parametrize("model", ["plif", "lif"])
def test_backward_program_matches_finite_differences(model, rng):
    mod = loaded(rng, model=model)
    mod.run("train_forward", smooth=True)
    mod.run("backward", smooth=True)
    grads = {n: mod.get("grad:" + n).copy() for n in
             ("conv.weight", "bn.weight", "bn.bias", "fc.weight")
             + (("plif.w",) if model == "plif" else ())}
    # Batch norm right after the conv cancels the conv bias: its true gradient is 0.
    assert np.abs(mod.get("grad:conv.bias")).max() < 1e-12 * np.abs(grads["conv.weight"]).max() + 1e-14
    for name, g in grads.items():
        p = mod.get(name).copy()
        idx = sample_indices(p.size, 12, rng)
        err = check_grad(lambda v: loss_of(mod, name, v), p, g, indices=idx)
        assert err < 1e-5, (name, err)


def test_spikes_and_running_stats(rng):
    mod = loaded(rng, model="lif")
    mod.run("train_forward")
    s = mod.get("lif")
    assert set(np.unique(s)) <= {0.0, 1.0} and 0 < s.mean() < 1
    x = mod.get("%3")
    xc = np.moveaxis(x, 2, 0).reshape(3, -1)
    np.testing.assert_allclose(mod.get("bn.running_var"),
                               0.9 + 0.1 * xc.var(1, ddof=1), rtol=1e-12)
    # infer uses the running statistics: a different output than training.
    mod.run("infer")
    assert not np.allclose(mod.get("%8"), (x - xc.mean(1)[:, None, None]) *
                           (1 / np.sqrt(xc.var(1) + 1e-5))[:, None, None])


def test_alias_shares_storage(rng):
    mod = loaded(rng)
    mod.run("train_forward")
    np.testing.assert_array_equal(mod.get("%16"), mod.get("%15").reshape(T, B, 12))


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_update_program(optimizer, rng):
    mod = loaded(rng, optimizer=optimizer)
    lr = 0.05
    for step in (1, 2):
        mod.run("train_forward")
        mod.run("backward")
        w, g = mod.get("conv.weight").copy(), mod.get("grad:conv.weight").copy()
        fw, fg = mod.get("fc.weight").copy(), mod.get("grad:fc.weight").copy()
        m = mod.get("opt:conv.weight:m").copy()
        v = mod.get("opt:conv.weight:v").copy()
        mod.run("update", lr=lr)
        assert mod.step == step
        np.testing.assert_allclose(mod.get("fc.weight"), fw - lr * fg, rtol=1e-12)
        if optimizer == "sgd":
            d = g + 1e-3 * w
            buf = d if step == 1 else 0.9 * m + d
            np.testing.assert_allclose(mod.get("conv.weight"), w - lr * buf, rtol=1e-12)
        else:
            m2, v2 = 0.9 * m + 0.1 * g, 0.99 * v + 0.01 * g * g
            expect = w * (1 - lr * 0.01) - lr / (1 - 0.9 ** step) * m2 / (
                np.sqrt(v2 / (1 - 0.99 ** step)) + 1e-8)
            np.testing.assert_allclose(mod.get("conv.weight"), expect, rtol=1e-10)


def as_kernel_ops(manifest):
    """The module with its optimizer ops in one `kernel` op and each add/scale
    in its own, as --snn-compile writes them (docs/artifact-format.md)."""
    m = json.loads(json.dumps(manifest))

    def wrap(ops):
        return {"op": "kernel", "kernel": "k", "grid": 1, "block": 256,
                "in": [t for o in ops for t in o["in"]],
                "out": [t for o in ops for t in o["out"]],
                "args": [], "of": ops}
    for name, ops in m["programs"].items():
        if name == "update":
            m["programs"][name] = [wrap(ops)]
        else:
            m["programs"][name] = [wrap([o]) if o["op"] in ("add", "scale", "accumulate")
                                   else o for o in ops]
    return m


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_kernel_op_runs_the_ops_it_computes(optimizer, rng):
    plain = conv_training_module(optimizer=optimizer)
    wrapped = as_kernel_ops(plain)
    assert [o["op"] for o in wrapped["programs"]["update"]] == ["kernel"]
    seed = int(rng.integers(1 << 30))
    x, y = rng.normal(0.5, 1.0, (T, B, 2, 4, 4)), rng.integers(0, 4, B)
    mods = []
    for m in (plain, wrapped):
        mod = Module(m)
        mod.initialize(seed=seed)
        mod.set("input", x)
        mod.set("labels", y)
        for _ in range(2):
            for program in ("train_forward", "backward"):
                mod.run(program)
            mod.run("update", lr=0.05)
        mods.append(mod)
    for t in plain["tensors"]:
        if t["role"] in ("param", "optimizer_state"):
            np.testing.assert_array_equal(mods[0].get(t["name"]), mods[1].get(t["name"]))
    bad = as_kernel_ops(plain)
    bad["programs"]["update"][0]["of"] = []
    mod = Module(bad)
    mod.initialize(seed=seed)
    with pytest.raises(RefError, match="the ops it computes"):
        mod.run("update", lr=0.05)


def test_dropout_takes_the_given_mask(rng):
    m = {"format": "snn-module", "version": 1, "time_steps": 2, "batch": 1,
         "tensors": [dict(id=0, name="input", shape=[2, 1, 5], role="input"),
                     dict(id=1, name="y", shape=[2, 1, 5], role="activation"),
                     dict(id=2, name="mask", shape=[2, 1, 5], role="saved", dtype="u8")],
         "input": 0, "output": 1,
         "programs": {"train_forward": [dict(op="dropout", p=0.25, training=True,
                                             **{"in": [0]}, out=[1, 2])]}}
    mod = Module(m)
    x = rng.normal(size=(2, 1, 5))
    mask = (rng.uniform(size=x.shape) < 0.75).astype(float)
    mod.set("input", x)
    with pytest.raises(RefError, match="keep mask 'mask'"):
        mod.run("train_forward")
    mod.run("train_forward", masks={"mask": mask})
    np.testing.assert_allclose(mod.get("y"), x * mask / 0.75, rtol=1e-12)


def test_module_errors(tmp_path, rng):
    bad = conv_training_module()
    bad["programs"]["infer"][0]["op"] = "conv3d"
    mod = Module(bad)
    mod.initialize()
    mod.set("input", np.zeros((T, B, 2, 4, 4)))
    with pytest.raises(RefError, match=r"program 'infer' op #0 \(conv3d\): unknown op"):
        mod.run("infer")
    with pytest.raises(RefError, match="has no program 'train'"):
        mod.run("train")
    with pytest.raises(RefError, match="does not fit"):
        mod.set("fc.weight", np.zeros((3, 3)))
    with pytest.raises(RefError, match="randomly initialized"):
        Module(conv_training_module()).initialize(require_given=True)
    with pytest.raises(RefError, match="format 'snn-module'"):
        Module({"format": "onnx"})
    (tmp_path / "m.snnmod").mkdir()
    with pytest.raises(RefError, match="cannot read the manifest"):
        Module(str(tmp_path / "m.snnmod"))
    (tmp_path / "m.snnmod" / "manifest.json").write_text("{")
    with pytest.raises(RefError, match="not valid JSON"):
        Module(str(tmp_path / "m.snnmod"))
    few = conv_training_module()
    few["programs"]["infer"][0]["in"] = [0]
    mod = Module(few)
    mod.initialize()
    mod.set("input", np.zeros((T, B, 2, 4, 4)))
    with pytest.raises(RefError, match="expects 2..3 inputs"):
        mod.run("infer")


def test_init_file_values(tmp_path, rng):
    from snnref.tensorio import write_safetensors
    m = conv_training_module()
    for tt in m["tensors"]:
        if tt["name"] == "fc.weight":
            tt["init"] = {"kind": "file"}
    d = tmp_path / "m.snnmod"
    d.mkdir()
    (d / "manifest.json").write_text(json.dumps(m))
    w = rng.normal(size=(4, 12)).astype(np.float32)
    mod = Module(str(d))
    with pytest.raises(RefError, match="init.safetensors: missing"):
        mod.initialize()
    write_safetensors(str(d / "init.safetensors"), {"fc.weight": w})
    mod.initialize()
    np.testing.assert_array_equal(mod.get("fc.weight"), w)


def _loop_module(steps=4, batch=2, n=3):
    """x[T, B, n] -> a time loop whose body is one lif neuron_step, yielding
    its spikes and next membrane per step (recorded layer "lif0")."""
    t = lambda i, shape, role="activation", **kw: dict(id=i, name=f"%{i}", shape=shape, role=role, **kw)
    tensors = [t(0, [steps, batch, n], "input"),
               t(1, [batch, n], "constant", init={"kind": "zeros"}),
               t(2, [batch, n]), t(3, [batch, n], "loop_state"),
               t(4, [batch, n]), t(5, [batch, n]),
               t(6, [steps, batch, n]), t(7, [steps, batch, n]), t(8, [batch, n])]
    step = dict(op="neuron_step", model="lif", k=0.5, c=1.0, v_th=1.0,
                reset="hard", layer="lif0", save_h=False,
                **{"in": [2, 3], "out": [4, 5]})
    loop = dict(op="time_loop", steps=steps, num_inputs=1, args=[2, 3],
                yields=[4, 5, 5], body=[step], **{"in": [0, 1], "out": [6, 7, 8]})
    return {"format": "snn-module", "version": 1, "time_steps": steps,
            "batch": batch, "tensors": tensors, "input": 0, "output": 7,
            "programs": {"infer": [loop]}}


def test_time_loop_runs_its_body_per_step_and_records_traces(rng):
    mod = Module(_loop_module())
    mod.initialize()
    x = rng.uniform(0.0, 1.5, (4, 2, 3))
    mod.set("input", x)
    mod.run("infer")
    from snnref.neuron import Neuron
    ref = Neuron("lif", features=3, k=0.5, c=1.0, v_th=1.0)
    s, h, _ = ref.forward(x)
    v = ref.after_reset(h, s)
    np.testing.assert_array_equal(mod.get(6), s)
    np.testing.assert_allclose(mod.get(7), v, rtol=1e-12)
    np.testing.assert_allclose(mod.get(8), v[-1], rtol=1e-12)
    traces = mod.layer_traces()
    assert sorted(traces) == ["lif0.h", "lif0.s", "lif0.v"]
    np.testing.assert_allclose(traces["lif0.h"], h, rtol=1e-12)
    np.testing.assert_allclose(traces["lif0.v"], v, rtol=1e-12)
