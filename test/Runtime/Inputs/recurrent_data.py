#!/usr/bin/env python3
"""A small temporal task for a recurrent network, and its learning check.

  recurrent_data.py make DIR T B FEATURES CLASSES
      DIR/{xtrain,ytrain,xtest,ytest}.npy: pre-encoded [T, N, FEATURES]
      sequences whose class is the step at which a burst of input arrives
      (early, middle, late), on top of noise: the class is in the timing,
      not in the total input.
  recurrent_data.py check BEFORE.txt METRICS.jsonl
      prints LEARNT when the final test accuracy is >= 0.8 and at least 0.25
      above the accuracy before training.
"""
import json
import re
import sys

import numpy as np


def make(d, T, B, F, C):
    rng = np.random.default_rng()  # fresh every run
    pattern = rng.normal(0.0, 1.0, F) + 1.5
    for split, n in (("train", 40 * B), ("test", 10 * B)):
        y = rng.integers(0, C, n)
        x = rng.normal(0.0, 0.3, (T, n, F))
        for i, c in enumerate(y):
            t = min(T - 1, int(c * T / C))  # the burst's step
            x[t, i] += pattern
        np.save(f"{d}/x{split}.npy", x.astype(np.float32))
        np.save(f"{d}/y{split}.npy", y.astype(np.int64))


def check(before_file, metrics):
    before = float(re.search(r"accuracy: ([0-9.]+)", open(before_file).read()).group(1))
    rows = [json.loads(line) for line in open(metrics) if line.strip()]
    after = rows[-1]["test_acc"]
    print(f"accuracy before {before:.3f} after {after:.3f}")
    print("LEARNT" if after >= 0.8 and after > before + 0.25 else "NOT LEARNT")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], *(int(a) for a in sys.argv[3:7]))
    else:
        check(sys.argv[2], sys.argv[3])
