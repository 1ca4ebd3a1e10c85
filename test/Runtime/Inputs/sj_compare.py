#!/usr/bin/env python3
"""One training step of a compiled module against SpikingJelly's golden data.

    sj_compare.py SNN_RUN MODULE.snnmod GOLDEN_DIR WORK_DIR [--device cpu|cuda:N]

GOLDEN_DIR is what bench/sj_equivalence.py wrote for one network (weights,
input, labels, loss, gradients). Runs `snn-run MODULE grads` on the same
weights and input and compares the loss (relative error) and every parameter
gradient (normwise: max |ours - sj| / max |sj|) with a 1e-5 tolerance in fp32.
Prints one line per tensor, then "SJ-EQUIVALENCE <name> MATCH" or "MISMATCH".
"""

import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "python"))

from snnref.tensorio import read_npy, read_safetensors  # noqa: E402

TOL = 1e-5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("snn_run")
    ap.add_argument("module")
    ap.add_argument("golden")
    ap.add_argument("work")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    out = os.path.join(args.work, "grads.safetensors")
    g = lambda name: os.path.join(args.golden, name)
    cmd = [args.snn_run, args.module, "grads", "--device", args.device,
           "--data", g("x.npy"), "--labels", g("labels.npy"),
           "--weights", g("weights.safetensors"), "--output", out]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"snn-run failed ({run.returncode}): {run.stderr.strip()}")
    ours = read_safetensors(out)[0]
    sj = read_safetensors(g("grads.safetensors"))[0]
    sj_loss = float(np.asarray(read_npy(g("loss.npy"))).reshape(-1)[0])
    name = os.path.basename(os.path.normpath(args.golden))
    ok = True
    loss = float(np.asarray(ours["loss"]).reshape(-1)[0])
    err = abs(loss - sj_loss) / abs(sj_loss)
    ok &= err <= TOL
    print(f"loss ours {loss:.8f} sj {sj_loss:.8f} rel {err:.2e}")
    missing = sorted(set(sj) - set(ours))
    if missing:
        print(f"gradients missing from ours: {missing}")
        ok = False
    for key in sorted(sj):
        if key not in ours:
            continue
        a, b = np.asarray(ours[key], np.float64), np.asarray(sj[key], np.float64)
        if a.shape != b.shape:
            print(f"{key}: shape {a.shape} vs {b.shape}")
            ok = False
            continue
        scale = float(np.abs(b).max())
        err = float(np.abs(a - b).max()) / scale if scale > 0 else float(np.abs(a).max())
        good = err <= TOL
        ok &= good
        print(f"{key:24s} max|sj| {scale:.3e} normwise rel {err:.2e} {'ok' if good else 'FAIL'}")
    print(f"SJ-EQUIVALENCE {name} {'MATCH' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
