#!/usr/bin/env python3
"""The generated CPU kernels give the same bits on every number of threads.

  threads_check.py SNN_RUN MODULE DIR THREADS...

DIR holds w.safetensors, x.npy and y.npy (grads_reference.py make, or
sparse_check.py prepare). Runs `snn-run infer --output` and `snn-run grads
--update-steps 2 --output` (loss, every gradient, the parameters and the
optimizer state after two updates) with --threads 1, then with each of
THREADS; SNNRT_CPU_GRAIN=1 lets even the smallest kernel split its work
items over the threads (uneven ranges when the items do not divide).
OPENBLAS_NUM_THREADS=1 keeps the GEMMs' rounding fixed (OpenBLAS may round
differently on another thread count). Every tensor must equal the one-thread
run bit for bit. One line per thread count.
"""
import os
import subprocess
import sys

import numpy as np

from snnref.tensorio import read_safetensors


def run(cmd, env):
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"FAILED: {' '.join(cmd)}\n{done.stdout}{done.stderr}")
    return done.stdout + done.stderr


def outputs(snn_run, module, d, threads, grain):
    # OpenBLAS's own thread count fixed: its GEMMs may round differently on
    # another one; the check is about the generated kernels.
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env.pop("SNN_NUM_THREADS", None)
    if grain:
        env["SNNRT_CPU_GRAIN"] = str(grain)
    tag = f"t{threads}g{grain}"
    common = ["--device", "cpu", "--threads", str(threads), "--weights", f"{d}/w.safetensors",
              "--data", f"{d}/x.npy"]
    log = run([snn_run, module, "infer", "--verbose", *common, "--output", f"{d}/{tag}.out.npy"], env)
    run([snn_run, module, "grads", *common, "--labels", f"{d}/y.npy", "--update-steps", "2",
         "--output", f"{d}/{tag}.grads.safetensors"], env)
    tensors = read_safetensors(f"{d}/{tag}.grads.safetensors")[0]
    tensors["infer output"] = np.load(f"{d}/{tag}.out.npy")
    return tensors, log


def main():
    snn_run, module, d = sys.argv[1:4]
    base, _ = outputs(snn_run, module, d, 1, 0)
    if not any(np.any(v) for k, v in base.items() if k.startswith("grad:")):
        sys.exit("the gradients are all zero: the check would prove nothing")
    failures = 0
    for threads in (int(t) for t in sys.argv[4:]):
        for grain in (1, 0):
            got, log = outputs(snn_run, module, d, threads, grain)
            said = f"{threads} threads" in log
            differ = [k for k in base if base[k].tobytes() != got[k].tobytes()]
            print(f"THREADS {threads} grain={'1' if grain else 'kernel'} "
                  f"tensors={len(base)} reported={said} "
                  + ("IDENTICAL" if not differ and said else
                     "DIFFERENT " + ", ".join(differ)))
            failures += bool(differ) or not said
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
