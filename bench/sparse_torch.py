#!/usr/bin/env python3
"""torch dense vs torch.sparse (CSR) on the layers of bench/gpu-sparse.sh:
spike input S [4096, N] at each density, W [N, N], gY [4096, N]; forward
S W^T, grad-weight gY^T S (sparse: S^T as CSR times gY), grad-input gY W
(dense in both: gY is not sparse). The sparse timings include building the
CSR from the dense spike tensor, as a training step would have to.
Usage: sparse_torch.py "DENSITIES" > sparse-torch.json"""
import json
import sys

import torch


def timed(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps


def main():
    densities = [float(d) for d in sys.argv[1].split()]
    torch.backends.cuda.matmul.allow_tf32 = False
    rows, out = 4096, []
    for n in (1024, 2048, 4096):
        w = torch.randn(n, n, device="cuda") / n ** 0.5
        gy = torch.randn(rows, n, device="cuda")
        for d in densities:
            s = (torch.rand(rows, n, device="cuda") < d).float()
            r = {"n": n, "density": d,
                 "torch_dense_fwd_ms": timed(lambda: s @ w.t()),
                 "torch_sparse_fwd_ms": timed(lambda: s.to_sparse_csr() @ w.t()),
                 "torch_dense_gw_ms": timed(lambda: gy.t() @ s),
                 "torch_sparse_gw_ms": timed(lambda: (s.t().to_sparse_csr() @ gy).t()),
                 "torch_dense_gx_ms": timed(lambda: gy @ w)}
            out.append(r)
            print(r, file=sys.stderr)
    json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
               "tf32": False, "rows": out}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
