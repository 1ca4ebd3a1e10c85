#!/usr/bin/env python3
"""A channels-last (NHWC) model against its NCHW twin, run by snn-run.

  channels_last_twin.py nchw CL_DIR NCHW_DIR
        the NHWC draw of CL_DIR (grads_reference.py make: w.safetensors,
        x.npy [T, B, H, W, C], y.npy) in NCHW for the twin: every 4-D weight
        [O, KH, KW, I] -> [O, I, KH, KW], x -> [T, B, C, H, W].
  channels_last_twin.py compare CL_DIR NCHW_DIR [TOL]
        the loss and every gradient of the two runs (grads.safetensors, the
        twin's 4-D gradients permuted to [O, KH, KW, I]) within TOL (1e-5)
        normwise relative error, the output spikes of `snn-run infer
        --output` (out.npy) and every layer's spike rate it prints
        (infer.txt, its stdout) equal. The two differ only in float32 summation
        order: on the CPU typically 1e-7 to 8e-7, each as far from float64;
        a small bias gradient that sums values of both signs reached 1.4e-6
        and 3.4e-6 in two draws of 21. (cuDNN picks other fp32 algorithms per layout:
        the GPU check passes 1e-4, the bound of grads_reference.py.)
"""
import sys

import numpy as np

from snnref.tensorio import read_safetensors, write_safetensors

TOL = 1e-5


def nchw(cl, twin):
    weights = read_safetensors(f"{cl}/w.safetensors")[0]
    write_safetensors(f"{twin}/w.safetensors", {
        k: np.ascontiguousarray(v.transpose(0, 3, 1, 2)) if v.ndim == 4 else v
        for k, v in weights.items()})
    np.save(f"{twin}/x.npy", np.ascontiguousarray(
        np.load(f"{cl}/x.npy").transpose(0, 1, 4, 2, 3)))
    np.save(f"{twin}/y.npy", np.load(f"{cl}/y.npy"))
    return 0


def spike_rates(path):
    """The "spike rate LAYER R" lines of `snn-run infer` as [R, ...]."""
    return [line.split()[-1] for line in open(path)
            if line.startswith("spike rate")]


def compare(cl, twin, tol=TOL):
    ours = read_safetensors(f"{cl}/grads.safetensors")[0]
    theirs = read_safetensors(f"{twin}/grads.safetensors")[0]
    names = sorted(k for k in ours if k == "loss" or k.startswith("grad:"))
    failed, worst = [], 0.0
    if "loss" not in names or len(names) < 2 or sorted(
            k for k in theirs if k == "loss" or k.startswith("grad:")) != names:
        failed.append("the two runs hold other tensors")
    for name in names:
        a = ours[name].astype(np.float64)
        b = theirs.get(name, np.zeros(0)).astype(np.float64)
        if b.ndim == 4:
            b = b.transpose(0, 2, 3, 1)
        if a.shape != b.shape:
            failed.append(f"{name} {list(a.shape)} vs {list(b.shape)}")
            continue
        if not np.any(a != 0):
            failed.append(f"{name} is all zero: the check proves nothing")
        err = float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))
        worst = max(worst, err)
        if not err < tol:
            failed.append(f"{name} (rel {err:.2e})")
    sa, sb = np.load(f"{cl}/out.npy"), np.load(f"{twin}/out.npy")
    if sa.shape != sb.shape or np.any(sa != sb):
        failed.append("the output spikes differ")
    ra, rb = (spike_rates(f"{d}/infer.txt") for d in (cl, twin))
    if not ra or ra != rb:
        failed.append(f"spike rates {ra} vs {rb}")
    print(f"TWIN {len(names)} tensors max_rel={worst:.1e} spikes="
          f"{int(np.sum(sa != 0))}/{sa.size} rates={','.join(ra)} "
          + ("MATCH" if not failed else "MISMATCH " + ", ".join(failed)))
    return 0 if not failed else 1


if __name__ == "__main__":
    cmd, cl, twin = sys.argv[1:4]
    if cmd == "nchw":
        sys.exit(nchw(cl, twin))
    sys.exit(compare(cl, twin, *map(float, sys.argv[4:5])))
