#!/usr/bin/env python3
"""Four Gaussian classes in 16 dimensions, scaled into [0, 1] (the input of
examples/nir/mlp.nir): OUT/x{train,test}.npy and OUT/y{train,test}.npy.
Fresh draws each run; the class centres are far enough apart to be learnt,
close enough that an untrained network is near chance."""

import sys

import numpy as np

out = sys.argv[1]
seed = int(np.random.SeedSequence().entropy % (1 << 32))
print(f"seed {seed}")
rng = np.random.default_rng(seed)
centres = rng.normal(0.0, 1.0, (4, 16))
for split, n in (("train", 2048), ("test", 512)):
    y = rng.integers(0, 4, n).astype(np.int32)
    x = centres[y] + 0.8 * rng.normal(0.0, 1.0, (n, 16))
    np.save(f"{out}/x{split}.npy", np.clip(0.5 + 0.5 * x, 0.0, 1.0).astype(np.float32))
    np.save(f"{out}/y{split}.npy", y)
