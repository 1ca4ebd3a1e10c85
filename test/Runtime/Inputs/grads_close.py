"""grads_close.py A B TOL: every tensor of safetensors file A within TOL
(absolute, relative to the largest magnitude of B's) of B's; prints one
line per tensor and exits 1 on the first that is not."""
import sys

import numpy as np

from snnref.tensorio import read_safetensors

a, b = (read_safetensors(p)[0] for p in sys.argv[1:3])
tol = float(sys.argv[3])
if sorted(a) != sorted(b):
    sys.exit(f"different tensors: {sorted(a)} vs {sorted(b)}")
for name in sorted(a):
    scale = max(float(np.abs(b[name]).max()), 1e-30)
    off = float(np.abs(a[name] - b[name]).max()) / scale
    print(f"{name} {'OK' if off <= tol else 'DIFFERS'} rel={off:.1e} max={scale:.3g}")
    if not off <= tol:
        sys.exit(1)
