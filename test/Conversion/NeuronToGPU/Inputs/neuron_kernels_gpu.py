#!/usr/bin/env python3
"""Checks and times the compiled neuron kernels on a GPU.

  build DIR  (where snn-opt is) compiles the layers of check_host_kernels.py
             (with their storage options: bf16 H, packed spikes) and large
             LIF layers (2^27 neuron-steps, T = 4..64; each also with bf16 H
             and packed spikes, `_reduced`) with
             `snn-opt --snn-dump-neuron-kernels`, and stores their inputs.
  run DIR    (on the GPU machine; needs numpy and cupy, no LLVM) loads
             kernels.sm_XY.cubin (else kernels.ptx), launches forward (saving
             H) and backward by name as the runtime does, compares them with
             the float64 reference, and times them against a device copy of
             the same bytes (24 B per neuron-step: x, s, h, gs, h, gx).
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_host_kernels as ref  # noqa: E402

BENCH_STEPS = (4, 8, 16, 32, 64)
BENCH_FEATURES = 1024


REDUCED = dict(h_dtype="bf16", spike_bits=True)
# Exact fp32 gradients without saving H: checkpoints every 8 steps, the
# backward recomputes H; with packed spikes.
RECOMPUTE = dict(recompute_chunk=8, spike_bits=True)


def bench_configs():
    for t in BENCH_STEPS:
        batch = (1 << 27) // t // BENCH_FEATURES
        for suffix, storage in (("", {}), ("_reduced", REDUCED),
                                ("_recompute", RECOMPUTE)):
            yield (f"bench_lif_T{t}{suffix}", "lif", batch, BENCH_FEATURES,
                   dict(k=0.5, c=0.5, v_th=1.0, v_reset=0.0), t, storage)


def storage_flags(storage):
    return "".join(([f" h-dtype={storage['h_dtype']}"] if "h_dtype" in storage
                    else []) +
                   ([" spike-bits=1"] if storage.get("spike_bits") else []) +
                   ([f" recompute-chunk={storage['recompute_chunk']}"]
                    if storage.get("recompute_chunk") else []))


def build(args):
    rng = np.random.default_rng(args.seed)
    configs = [cfg + (ref.steps_of(cfg[0]), ref.STORAGE.get(cfg[0], {}))
               for cfg in ref.CONFIGS] + list(bench_configs())
    for name, model, batch, features, attrs, steps, storage in configs:
        out = os.path.join(args.dir, name)
        os.makedirs(out, exist_ok=True)
        _, per_neuron = ref.resolve_params(model, attrs, features, rng)
        module = ref.layer_module(model, attrs, per_neuron, steps, batch,
                                  features, storage.get("chain", False))
        subprocess.run([args.snn_opt, "-o", os.devnull,
                        "--snn-dump-neuron-kernels=output-dir=" + out +
                        storage_flags(storage)],
                       input=module, text=True, check=True)
        np.savez(os.path.join(out, "params.npz"), **per_neuron)
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(dict(name=name, model=model, batch=batch,
                           features=features, steps=steps, storage=storage,
                           attrs={k: (v if not isinstance(v, tuple) else list(v))
                                  for k, v in attrs.items()}), f)
        print(f"built {out}")


def load_module(cp, kdir, files):
    chip = "sm_" + cp.cuda.Device().compute_capability  # "90" on an H100
    path = os.path.join(kdir, files.get(chip, files["ptx"]))
    return cp.RawModule(path=path), os.path.basename(path)


def time_ms(cp, fn, repeat=20):
    fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeat):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return float(np.median(times))


def run_one(cp, kdir, rng, check_neurons):
    cfg = json.load(open(os.path.join(kdir, "config.json")))
    meta = json.load(open(os.path.join(kdir, "kernels.json")))
    layer = meta["layers"][0]
    model, steps = cfg["model"], cfg["steps"]
    n = cfg["batch"] * cfg["features"]
    attrs = {k: (tuple(v) if isinstance(v, list) else v)
             for k, v in cfg["attrs"].items()}
    params = dict(np.load(os.path.join(kdir, "params.npz")))
    values, _ = ref.resolve_params(model, attrs, cfg["features"], rng)
    for key, arr in params.items():
        values[key] = arr.astype(np.float64)
    # A defaulted v_init follows v_reset: take it from the stored v_reset, not
    # from the freshly drawn one.
    if "v_init" not in attrs and "v_init" not in params and "v_reset" in params \
            and attrs.get("reset", "hard") == "hard" and model != "li":
        values["v_init"] = values["v_reset"]
    module, loaded = load_module(cp, kdir, meta["files"])
    fwd = module.get_function(layer["fwd"])
    bwd = module.get_function(layer["bwd"])

    x = rng.normal(0.4, 0.8, size=(steps, n)).astype(np.float32)
    gs = rng.normal(0.0, 1.0, size=(steps, n)).astype(np.float32)
    dx, dgs = cp.asarray(x), cp.asarray(gs)
    dgx = cp.empty_like(dx)
    bf16 = layer.get("h_dtype") == "bf16"
    word_bits = layer.get("spike_word_bits", 0)
    # bf16 H as its raw 16 bits; packed spikes as [words, n] unsigned words.
    chunk = layer.get("recompute_chunk", 0)
    dh = cp.empty((steps, n), dtype=cp.uint16) if bf16 else cp.empty_like(dx)
    if chunk:  # membrane checkpoints instead of H
        dh = cp.empty((max(-(-steps // chunk) - 1, 1), n), dtype=cp.float32)
    ds = (cp.empty((-(-steps // word_bits), n), dtype=f"uint{word_bits}")
          if word_bits else cp.empty_like(dx))
    cuba = model == "cuba_lif"
    di = cp.empty_like(dx) if cuba else None
    dparams = [cp.asarray(params[p]) for p in ref.PARAM_ORDER if p in params]
    grid, block = (layer["grid"],), (layer["block"],)
    # A chained layer (time split): initial state in, final state out; the
    # final state's gradient in, the initial state's out.
    names = ref.state_names(model) if layer.get("chains_state") else []
    chain = ref.random_chain(model, n, rng) if names else {}
    dchain = {k: cp.asarray(a) for k, a in chain.items()}
    for k in names:
        dchain[k + "T"] = cp.empty(n, dtype=cp.float32)
        dchain["g" + k + "0"] = cp.empty(n, dtype=cp.float32)
    fwd_state = [dchain[k + "0"] for k in names] + \
        [dchain[k + "T"] for k in names]
    bwd_state = [dchain["g" + k + "T"] for k in names] + \
        [dchain["g" + k + "0"] for k in names]
    fwd_args = [dx, ds, dh] + ([di] if cuba else []) + fwd_state + dparams
    bwd_args = ([dgs, dx, dh, dgx] if chunk else
                [dgs, dh, dgx] + ([di] if cuba else [])) + bwd_state + dparams
    run_fwd = lambda: fwd(grid, block, tuple(fwd_args))
    run_bwd = lambda: bwd(grid, block, tuple(bwd_args))
    run_fwd()
    run_bwd()
    cp.cuda.Device().synchronize()

    # The reference on the first neurons (whole samples); neurons are
    # independent, so a prefix checks the same code as the whole layer. Over
    # millions of steps a float64 forward would flip spikes where H is within
    # rounding of v_th: the forward is checked against the same formulas in
    # float32 (no contraction on either side), the backward in float64 from
    # the kernel's own H.
    m = min(n, max(check_neurons // cfg["features"], 1) * cfg["features"])
    init = {k: chain[k + "0"][:m] for k in names} if names else None
    final = {}
    S, H, I = ref.forward(model, attrs, values, x[:, :m], dtype=np.float32,
                          init=init, final=final)
    got_s, got_h, got_gx = (cp.asnumpy(a)[:, :m] for a in (ds, dh, dgx))
    if word_bits:
        got_s = ref.unpack_spikes(got_s, steps).astype(np.float32)
    if bf16:
        # The kernel rounds H to nearest even: exactly the rounded float32 H.
        got_h = (got_h.astype(np.uint32) << 16).view(np.float32)
        H = ref.round_bf16(H)
    if chunk:
        # No H saved: the backward recomputed the forward's float32 H.
        got_h = H
    gfinal = {k: chain["g" + k + "T"][:m] for k in names} if names else None
    ginit = {}
    gX = ref.backward(model, attrs, values, got_h, gs[:, :m], gfinal=gfinal,
                      ginit=ginit)
    # gx in float32 against float64: its error grows with the gradient's
    # scale (a CUBA layer's two recurrences over 12 steps: 1.5-2.6e-6 at
    # max |gX| 4-6 over 12 fresh seeds), so the absolute part of the
    # tolerance is 1e-6 of that scale (at least 1e-6).
    gx_atol = 1e-6 * max(1.0, float(np.max(np.abs(gX))))
    checks = dict(
        spikes=bool(np.allclose(got_s, S, rtol=1e-6, atol=1e-7) if model == "li"
                    else np.array_equal(got_s, S)),
        h=bool(np.allclose(got_h, H, rtol=1e-6, atol=1e-7)),
        gx=bool(np.allclose(got_gx, gX, rtol=1e-5, atol=gx_atol)))
    if cuba:
        checks["i"] = bool(np.allclose(cp.asnumpy(di)[:, :m], I, rtol=1e-6, atol=1e-7))
    for k in names:
        checks["final_" + k] = bool(np.array_equal(
            cp.asnumpy(dchain[k + "T"])[:m], final[k]))
        checks["grad_init_" + k] = bool(np.allclose(
            cp.asnumpy(dchain["g" + k + "0"])[:m], ginit[k], rtol=1e-5,
            atol=1e-6))
    ok = all(checks.values())
    result = dict(name=cfg["name"], loaded=loaded, ok=bool(ok), checks=checks,
                  max_abs_err_h=float(np.max(np.abs(got_h - H))),
                  steps=steps, neurons=n, checked_neurons=m,
                  h_dtype="bf16" if bf16 else "f32", spike_word_bits=word_bits,
                  recompute_chunk=chunk,
                  max_abs_err_gx=float(np.max(np.abs(got_gx - gX))),
                  max_abs_gx=float(np.max(np.abs(gX))))
    if cfg["name"].startswith("bench_"):
        fwd_ms, bwd_ms = time_ms(cp, run_fwd), time_ms(cp, run_bwd)
        nbytes = x.nbytes
        copy_ms = time_ms(cp, lambda: dgx.data.copy_from_device(dx.data,
                                                                nbytes))
        bandwidth = 2 * nbytes / (copy_ms * 1e-3)
        # x, s, h written; gs, h read, gx written (recompute: x, s and the
        # checkpoints written; gs, x, checkpoints read, gx written).
        moved = 3 * x.nbytes + ds.nbytes + 2 * dh.nbytes
        if chunk:
            moved = 4 * x.nbytes + ds.nbytes + 2 * dh.nbytes * (steps > chunk)
        floor_ms = moved / bandwidth * 1e3
        result.update(fwd_ms=fwd_ms, bwd_ms=bwd_ms,
                      total_ms=fwd_ms + bwd_ms,
                      copy_bandwidth_tbs=bandwidth / 1e12,
                      floor_ms=floor_ms,
                      fraction_of_copy=floor_ms / (fwd_ms + bwd_ms))
    return result


def run(args):
    import cupy as cp
    rng = np.random.default_rng(args.seed)
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    print(json.dumps(dict(device=props["name"].decode())))
    ok = True
    for name in sorted(os.listdir(args.dir)):
        kdir = os.path.join(args.dir, name)
        if not os.path.exists(os.path.join(kdir, "kernels.json")):
            continue
        result = run_one(cp, kdir, rng, args.check_neurons)
        ok &= result["ok"]
        print(json.dumps(result))
    print("ALL OK" if ok else "MISMATCH")
    sys.exit(0 if ok else 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("dir")
    b.add_argument("--snn-opt", default="snn-opt")
    b.add_argument("--seed", type=int, default=0)
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--seed", type=int, default=None)
    r.add_argument("--check-neurons", type=int, default=1 << 16)
    args = parser.parse_args()
    build(args) if args.cmd == "build" else run(args)


if __name__ == "__main__":
    main()
