#!/usr/bin/env python3
"""calibration.json (snn-run MODULE calibrate) on the CPU.

  calibration_check.py SNN_OPT SNN_RUN DIR

Compiles the model of sparse_check.py (IF on 0/1 input, linear K -> N, LIF,
linear N -> 5, LIF) with a surrogate band and --snn-sparsify after
--snn-autodiff, so that both linear layers run event-driven forward and
backward, then:
  CALIBRATE  snn-run calibrate writes calibration.json: the entry of this
             CPU, every event-driven layer and direction with a crossover in
             [0, 1], its measured times and the other fields;
  MERGE      an entry of another architecture already in the file is kept;
  USED       infer reads it back: "calibrated" in the report;
  FORCED     crossover 0 makes every layer take the dense path, 1 the
             event-driven one (the shares infer and train report, forward
             and backward), with the same output spikes and
             losses/gradients within 1e-6 either way;
  OTHER      an entry of another architecture only: the compile-time
             crossovers, and the report says why;
  MALFORMED  a crossover out of [0, 1], a missing field, bad JSON: one error
             naming the file, non-zero exit.
One line per check, "OK" or "FAIL ...".
"""
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sparse_check import MODEL, rel  # noqa: E402
from snnref.tensorio import read_safetensors, write_safetensors  # noqa: E402

T, B, K, N = 6, 3, 67, 29


def run(*cmd, fail_ok=False):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0 and not fail_ok:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{done.stdout}{done.stderr}")
    return done


def report(name, problems):
    print(f"{name} " + ("OK" if not problems else "FAIL " + "; ".join(problems)))
    return bool(problems)


def main():
    snn_opt, snn_run, d = sys.argv[1:4]
    # "fused": the neuron kernels count the event layers' inputs (--snn-fuse):
    # calibrate times each layer with its own density kernel all the same.
    fuse = ["--snn-fuse"] if sys.argv[4:5] == ["fused"] else []
    with open(f"{d}/model.mlir", "w") as f:
        f.write(MODEL.format(T=T, B=B, K=K, N=N))
    module = f"{d}/m.snnmod"
    # An infinite band: the output gradients are dense, yet the backwards are
    # event-driven (a crossover of 0 then means the dense path there too).
    run(snn_opt, f"{d}/model.mlir", "--snn-autodiff=optimizer=sgd grad-threshold=inf",
        "--snn-sparsify=min-features=1", *fuse, f"--snn-compile=output={module} target=cpu",
        "-o", "/dev/null")
    rng = np.random.default_rng()
    # Dense enough that both layers' inputs have spikes in every batch: a
    # crossover of 0 then means the dense path.
    x = (rng.random((T, B, K)) < 0.3).astype(np.float32)
    np.save(f"{d}/x.npy", x)
    np.save(f"{d}/y.npy", rng.integers(0, 5, B).astype(np.int64))
    write_safetensors(f"{d}/w.safetensors", {
        "fc1.weight": rng.normal(0, 1.5 / np.sqrt(K), (N, K)).astype(np.float32),
        "fc1.bias": rng.normal(1.0, 0.5, (N,)).astype(np.float32),
        "fc2.weight": rng.normal(0, 4.0 / np.sqrt(N), (5, N)).astype(np.float32)})
    path = f"{module}/calibration.json"
    failures = 0

    # An entry of another architecture, there before: kept by the merge.
    other = {"arch": "sm_00", "device": "elsewhere", "date": "2026-01-01T00:00:00Z",
             "manifest_hash": "0", "layers": {"fc1": {"forward": {"crossover": 0.5}}}}
    with open(path, "w") as f:
        json.dump({"format": "snn-calibration", "version": 1,
                   "entries": {"sm_00": other}}, f)
    out = run(snn_run, module, "calibrate", "--device", "cpu", "--densities",
              "0.01,0.1,0.5", "--iterations", "2").stdout
    problems = []
    cal = json.load(open(path))
    arch = next((a for a in cal["entries"] if a.startswith("cpu")), None)
    if arch is None:
        problems.append(f"no cpu entry in {sorted(cal['entries'])}")
    else:
        entry = cal["entries"][arch]
        for field in ("arch", "device", "date", "manifest_hash", "layers", "densities"):
            if field not in entry:
                problems.append(f"no '{field}'")
        got = sorted((layer, direction) for layer, ds in entry["layers"].items()
                     for direction in ds)
        want = [("fc1", "backward"), ("fc1", "forward"), ("fc2", "backward"),
                ("fc2", "forward")]
        if got != want:
            problems.append(f"layers {got}, expected {want}")
        for layer, ds in entry["layers"].items():
            for direction, c in ds.items():
                if not 0.0 <= c["crossover"] <= 1.0:
                    problems.append(f"{layer} {direction}: crossover {c['crossover']}")
                if len(c["event_ms"]) != 3 or len(c["dense_ms"]) != 3 or \
                        not all(t > 0 for t in c["event_ms"] + c["dense_ms"]):
                    problems.append(f"{layer} {direction}: times {c}")
        if f"wrote {path} (entry {arch})" not in out:
            problems.append("no 'wrote' line")
    if cal["entries"].get("sm_00") != other:
        problems.append("the sm_00 entry was not kept")
    if os.path.exists(path + ".tmp"):
        problems.append("a temporary file was left")
    failures += report(f"CALIBRATE arch={arch} layers={len(got) if arch else 0}", problems)

    def infer():
        done = run(snn_run, module, "infer", "--device", "cpu", "--weights",
                   f"{d}/w.safetensors", "--data", f"{d}/x.npy", "--output",
                   f"{d}/out.npy")
        return done.stdout, np.load(f"{d}/out.npy")

    def grads(name):
        run(snn_run, module, "grads", "--device", "cpu", "--weights", f"{d}/w.safetensors",
            "--data", f"{d}/x.npy", "--labels", f"{d}/y.npy", "--output",
            f"{d}/{name}.safetensors")
        return read_safetensors(f"{d}/{name}.safetensors")[0]

    text, _ = infer()
    problems = []
    if f"event-driven crossovers: calibrated for {arch}" not in text:
        problems.append("the report does not say calibrated")
    if len(re.findall(r"^event layer fc[12]\s+forward .*\(calibrated\)$", text, re.M)) != 2:
        problems.append("not every forward layer reports its calibrated crossover")
    failures += report("USED", problems)

    # Every crossover 0 (dense path: the inputs are not all zero) or 1.
    results = {}
    for forced in (0, 1):
        for ds in cal["entries"][arch]["layers"].values():
            for c in ds.values():
                c["crossover"] = forced
        json.dump(cal, open(path, "w"))
        text, out = infer()
        text += run(snn_run, module, "train", "--device", "cpu", "--weights",
                    f"{d}/w.safetensors", "--data", f"{d}/x.npy", "--labels",
                    f"{d}/y.npy", "--no-progress").stdout
        shares = re.findall(r"^event layer \S+\s+(\w+)\s+input density [\d.]+, "
                            r"event path ([\d.]+) of", text, re.M)
        results[forced] = (out, grads(f"g{forced}"), sorted(set(shares)))
    problems = []
    if results[0][2] != [("backward", "0.0000"), ("forward", "0.0000")] or \
            results[1][2] != [("backward", "1.0000"), ("forward", "1.0000")]:
        problems.append(f"event path shares {results[0][2]} / {results[1][2]}")
    if not np.array_equal(results[0][0], results[1][0]):
        problems.append("output spikes differ")
    g0, g1 = results[0][1], results[1][1]
    worst = max(rel(g1[k], g0[k]) if np.any(g0[k]) else float(np.abs(g1[k]).max())
                for k in g0)
    if not worst <= 1e-6:
        problems.append(f"loss/gradients differ by {worst:.1e}")
    failures += report(f"FORCED max_rel={worst:.1e}", problems)

    # Only another architecture's entry: the compile-time crossovers.
    json.dump({"format": "snn-calibration", "version": 1, "entries": {"sm_00": other}},
              open(path, "w"))
    text, _ = infer()
    failures += report("OTHER", [] if re.search(
        r"event-driven crossovers: compile-time \(.*calibration.json has no entry for "
        + re.escape(arch) + r"; it has sm_00\)", text) else [f"report: {text}"])

    # Malformed files: one error naming the file, non-zero exit.
    good = {"format": "snn-calibration", "version": 1,
            "entries": {arch: dict(cal["entries"][arch])}}
    cases = {"range": lambda e: e["layers"]["fc1"]["forward"].update(crossover=1.5),
             "field": lambda e: e.pop("manifest_hash"),
             "json": None}
    for name, spoil in cases.items():
        if spoil is None:
            open(path, "w").write("{\"format\": \"snn-calibration\", ")
        else:
            bad = json.loads(json.dumps(good))
            spoil(bad["entries"][arch])
            json.dump(bad, open(path, "w"))
        done = run(snn_run, module, "infer", "--device", "cpu", "--data", f"{d}/x.npy",
                   fail_ok=True)
        lines = done.stderr.strip().splitlines()
        problems = []
        if done.returncode == 0:
            problems.append("exit status 0")
        if len(lines) != 1 or path not in lines[0]:
            problems.append(f"stderr {done.stderr!r}")
        print(f"MALFORMED {name}: " + (lines[-1] if lines else "") + " "
              + ("OK" if not problems else "FAIL " + "; ".join(problems)))
        failures += bool(problems)
    shutil.rmtree(f"{d}/m.snnmod", ignore_errors=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
