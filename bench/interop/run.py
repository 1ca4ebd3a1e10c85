#!/usr/bin/env python3
"""NIR interop check against the real libraries (see README.md).

For every library that imports (snnTorch, Norse, SpikingJelly, Sinabs):

  lib -> snn-mlir   each model of lib_<library>.cases() is exported by the
                    library's own exporter, compiled by snn-opt with the
                    case's --nir-* options, run by snn-run on the CPU and
                    compared with the library's own simulation of the model
                    on the same random spike trains;
  snn-mlir -> lib   each model of lib_<library>.reverse_cases() (random
                    weights) is imported by snn-translate, written back by
                    snn-translate --export-nir, read by the library's
                    import_from_nir and simulated there; compared with
                    snn-run on the module compiled from the same MLIR.

Writes a Markdown table (--out) and the same rows as JSON (--json).

usage: run.py [--build build] [--libs snntorch,norse,spikingjelly,sinabs]
              [--out FILE.md] [--json FILE.json] [--work DIR] [--seed N]
"""
import argparse
import dataclasses
import datetime
import importlib
import itertools
import json
import os
import platform
import re
import sys
import tempfile
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
SJ_SOURCE = os.path.join(ROOT, ".interop-cache", "spikingjelly")
if os.path.isdir(SJ_SOURCE):
    sys.path.insert(0, SJ_SOURCE)

import warnings  # noqa: E402

warnings.filterwarnings("ignore")

from common import Result, Tools, compare, run, spike_input  # noqa: E402

LIBRARIES = ("snntorch", "norse", "spikingjelly", "sinabs")
_SERIAL = itertools.count()


def forward(tools, case, work, rng):
    import nir
    stem = os.path.join(work, f"{case.library}-{_slug(case.name)}-{next(_SERIAL)}")
    nir.write(stem + ".nir", case.graph)
    x = spike_input(rng, case.T, case.B, case.input_shape, case.density)
    np.save(stem + ".x.npy", x)
    ref = case.simulate(x)
    tools.compile(stem + ".nir", stem + ".snnmod", case.T, case.B, case.options)
    got = tools.infer(stem + ".snnmod", stem + ".x.npy", stem + ".y.npy")
    return _result(case, "lib -> snn-mlir", ref, got)


def reverse(tools, case, work, rng):
    """case.graph is our source model (random weights); what the library
    imports is snn-translate --export-nir of its import."""
    import nir
    stem = os.path.join(work, f"rev-{case.library}-{_slug(case.name)}-{next(_SERIAL)}")
    nir.write(stem + ".src.nir", case.graph)
    tools.import_nir(stem + ".src.nir", stem + ".mlir", case.T, case.B, case.options)
    dt = [o for o in case.options if o.startswith("--nir-dt")]
    tools.export_nir(stem + ".mlir", stem + ".nir", dt)
    x = spike_input(rng, case.T, case.B, case.input_shape, case.density)
    np.save(stem + ".x.npy", x)
    run([tools.snn_opt, stem + ".mlir", "--snn-temporal-fusion",
         f"--snn-compile=output={stem}.snnmod target=cpu", "-o", os.devnull])
    weights = []
    if case.train:
        ckpt = train(tools, case, stem, rng)
        weights = ["--weights", ckpt]
        tools.export_nir(stem + ".mlir", stem + ".nir", dt + [f"--export-nir-weights={ckpt}"])
    got = tools.infer(stem + ".snnmod", stem + ".x.npy", stem + ".y.npy", weights)
    ref = case.simulate(nir.read(stem + ".nir"), x)
    return _result(case, "snn-mlir -> lib", ref, got)


def train(tools, case, stem, rng):
    """Trains the model briefly with snn-run (Adam, BPTT) on 4 Gaussian
    classes in [0, 1] (direct encoding); returns the checkpoint."""
    run([tools.snn_opt, stem + ".mlir", "--snn-temporal-fusion",
         "--snn-autodiff=optimizer=adam lr=0.01",
         f"--snn-compile=output={stem}.train.snnmod target=cpu", "-o", os.devnull])
    features = int(np.prod(case.input_shape))
    centres = rng.normal(0.0, 1.0, (4, features))
    y = rng.integers(0, 4, 512).astype(np.int32)
    xs = centres[y] + 0.8 * rng.normal(0.0, 1.0, (512, features))
    xs = np.clip(0.5 + 0.5 * xs, 0.0, 1.0).astype(np.float32).reshape((512,) + case.input_shape)
    np.save(stem + ".xtrain.npy", xs)
    np.save(stem + ".ytrain.npy", y)
    ckpt = stem + ".ckpt.safetensors"
    run([tools.snn_run, stem + ".train.snnmod", "train", "--device", "cpu",
         "--data", stem + ".xtrain.npy", "--labels", stem + ".ytrain.npy", "--epochs", "2",
         "--checkpoint", ckpt, "--no-progress"])
    return ckpt


def _result(case, direction, ref, got):
    ref = np.asarray(ref)
    equal, diff, bad, first = compare(ref, got, case.output)
    return Result(case.library, case.name, direction,
                  " ".join(o for o in case.options), case.output, equal, diff, bad,
                  int(ref.size), first, float(np.mean(ref)), case.expect)


def _with_trained(builder):
    """The reverse cases plus the first one trained by snn-run before the
    export (--export-nir-weights with its checkpoint)."""
    def build():
        cases = builder()
        if cases:
            trained = dataclasses.replace(cases[0], train=True,
                                          name=cases[0].name.replace("(random)", "").strip()
                                          + " (trained 2 epochs by snn-run)")
            cases.append(trained)
        return cases
    return build


def _error_line(e):
    """The tool's `error:` line, else the exception's first line."""
    lines = [ln for ln in str(e).splitlines() if "error:" in ln] or str(e).splitlines() or [""]
    line = lines[-1]
    line = line[line.find("error:"):] if "error:" in line else f"{type(e).__name__}: {line}"
    line = re.sub(r"'/[^']*/", "'", line)  # file names without the work folder
    return line.replace("|", "/")[:240]


def _slug(s):
    return "".join(c if c.isalnum() else "_" for c in s).strip("_").lower()[:48]


def _versions(libs):
    out = {}
    commit = os.path.join(SJ_SOURCE, "COMMIT")
    for name in ("torch", "nir", "nirtorch") + tuple(libs):
        try:
            m = importlib.import_module(name)
            out[name] = getattr(m, "__version__", "?")
        except Exception:  # noqa: BLE001
            pass
    if out.get("norse") in ("0.0.0", "?"):
        try:
            from importlib.metadata import version
            out["norse"] = "1.1.0 (sdist)" if version("norse") == "0.0.0" else version("norse")
        except Exception:  # noqa: BLE001
            pass
    if "spikingjelly" in out and os.path.exists(commit):
        out["spikingjelly"] = f"source {open(commit).read().strip()[:12]}"
    return out


def run_all(build, libs, work, seed, log=print):
    tools = Tools(build)
    rng = np.random.default_rng(seed)
    results, skipped = [], {}
    for lib in libs:
        try:
            mod = importlib.import_module(f"lib_{lib}")
        except Exception as e:  # noqa: BLE001 - a missing library is a skip
            skipped[lib] = f"{type(e).__name__}: {e}"
            log(f"{lib}: skipped ({skipped[lib]})")
            continue
        for direction, builder, fn in (("lib -> snn-mlir", mod.cases, forward),
                                       ("snn-mlir -> lib",
                                        _with_trained(getattr(mod, "reverse_cases", list)),
                                        reverse)):
            try:
                cases = builder()
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                results.append(Result(lib, f"(building {direction} models)", direction, "",
                                      "", False, float("nan"), 0, 0, None, 0.0,
                                      "error", note=f"{type(e).__name__}: {e}"))
                continue
            for case in cases:
                try:
                    r = fn(tools, case, work, rng)
                except Exception as e:  # noqa: BLE001
                    traceback.print_exc()
                    r = Result(lib, case.name, direction, " ".join(case.options),
                               case.output, False, float("nan"), 0, 0, None, 0.0,
                               case.expect, note=_error_line(e))
                results.append(r)
                log(f"{r.library:12s} {r.direction:16s} {r.model:48s} {r.verdict:16s} "
                    f"max diff {r.max_diff:.3g}, {r.mismatches}/{r.total} differ, "
                    f"first step {r.first_step}, rate {r.rate:.3f} {r.note}")
    return results, skipped


def markdown(results, skipped, versions, seed):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# NIR interop with snnTorch, Norse, SpikingJelly and Sinabs",
        "",
        f"Generated by `bench/interop/run.py` on {now} (CPU, {platform.machine()}, "
        f"seed {seed}); versions: "
        + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        "",
        "*lib -> snn-mlir*: the library's exporter writes the model, `snn-opt` "
        "compiles it with the listed options (`--snn-temporal-fusion "
        "--snn-compile=target=cpu`), `snn-run infer` runs it; compared with the "
        "library's own simulation. *snn-mlir -> lib*: a model with random weights "
        "imported by `snn-translate` and written back by `--export-nir` is read by "
        "the library's `import_from_nir`; compared with `snn-run` on the same MLIR. "
        "Inputs are random spike trains (Bernoulli, p = 0.3). Spikes must be "
        "identical; membranes within 1e-5 of their range. *differ* counts output "
        "elements (of T x B x features) that differ; *rate* is the library's mean "
        "output.",
        "",
        "| library | direction | compared | equal | differ, cause known | differ, unexplained |",
        "|---|---|---|---|---|---|",
    ]
    for lib in dict.fromkeys(r.library for r in results):
        for direction in ("lib -> snn-mlir", "snn-mlir -> lib"):
            rows = [r for r in results if r.library == lib and r.direction == direction]
            if rows:
                lines.append(
                    f"| {lib} | {direction} | {len(rows)} | {sum(r.equal for r in rows)} "
                    f"| {sum(not r.equal and r.expect != 'equal' for r in rows)} "
                    f"| {sum(not r.equal and r.expect == 'equal' for r in rows)} |")
    lines += [
        "",
        "| library | model | direction | import options | output | result | max diff "
        "| differ | first step | rate | explanation |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        explanation = "" if r.expect == "equal" else r.expect
        if r.note:
            explanation = (explanation + "; " if explanation else "") + "run: `" + r.note + "`"
        if r.equal and r.expect != "equal":
            explanation = "equal in this run; possible difference: " + r.expect
        first = "" if r.first_step is None else str(r.first_step)
        lines.append(
            f"| {r.library} | {r.model} | {r.direction} | `{r.options}` | {r.output} "
            f"| **{r.verdict}** | {r.max_diff:.3g} | {r.mismatches}/{r.total} | {first} "
            f"| {r.rate:.3f} | {explanation} |")
    for lib, why in skipped.items():
        lines.append(f"| {lib} | (all) | both | | | skipped | | | | | {why} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--libs", default=",".join(LIBRARIES))
    ap.add_argument("--out", help="Markdown table to write")
    ap.add_argument("--json", help="JSON rows to write")
    ap.add_argument("--work", help="folder for the files (default: a temporary one)")
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    libs = [s for s in a.libs.split(",") if s]
    work = a.work or tempfile.mkdtemp(prefix="snn-interop-")
    os.makedirs(work, exist_ok=True)
    results, skipped = run_all(a.build, libs, work, a.seed)
    text = markdown(results, skipped, _versions(libs), a.seed)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        print(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"skipped": skipped,
                       "results": [dict(r.__dict__, verdict=r.verdict) for r in results]},
                      f, indent=1)
    unexpected = [r for r in results if not r.equal and r.expect == "equal"]
    print(f"{len(results)} comparisons, {sum(r.equal for r in results)} equal, "
          f"{len(unexpected)} unexpected differences; files in {work}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
