#!/usr/bin/env python3
"""Checks a NIR round trip of training: the accuracy before training (from
`snn-run infer` output), the metrics of `snn-run train`, and the outputs of
the re-imported trained NIR model against the trained module's.

    check_training.py BEFORE.txt METRICS.jsonl TRAINED_OUT.npy EXPORTED_OUT.npy
"""

import json
import re
import sys

import numpy as np

before = float(re.search(r"accuracy: ([0-9.]+)", open(sys.argv[1]).read()).group(1))
rows = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
after = rows[-1]["test_acc"]
print(f"accuracy before {before:.3f} after {after:.3f}")
print("LEARNT" if after >= 0.9 and after > before + 0.2 else "NOT LEARNT")
a, b = np.load(sys.argv[3]), np.load(sys.argv[4])
same = a.shape == b.shape and np.array_equal(a, b)
print("EXPORTED MODEL EQUAL" if same else
      f"EXPORTED MODEL DIFFERS (max |diff| {np.abs(a - b).max() if a.shape == b.shape else 'shape'})")
