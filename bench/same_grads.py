"""Whether two `snn-run grads` outputs hold the same loss and gradients bit
for bit: prints "LABEL: loss and N gradients identical" (or DIFFER, with
the tensors that differ) and exits non-zero when they differ.

    python3 bench/same_grads.py LABEL A.safetensors B.safetensors
"""
import sys

import numpy as np
from snnref.tensorio import read_safetensors


def main():
    label, a_path, b_path = sys.argv[1:4]
    a = read_safetensors(a_path)[0]
    b = read_safetensors(b_path)[0]
    differ = sorted(k for k in a.keys() | b.keys()
                    if k not in a or k not in b
                    or not np.array_equal(np.asarray(a[k]), np.asarray(b[k])))
    verdict = "identical" if not differ else "DIFFER: " + ", ".join(differ)
    print(f"{label}: loss and {len(a) - 1} gradients {verdict}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
