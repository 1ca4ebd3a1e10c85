#!/usr/bin/env python3
"""Writes a safetensors checkpoint: `make_safetensors.py OUT NAME=SHAPE:FILL ...`.

NAME=2x3:0.25 gives a 2x3 F32 tensor whose elements are 0.25 + 0.01 * index,
so that a test can check which tensor ended up where. A `:f64` suffix writes
F64. No third-party package is needed.
"""
import json
import struct
import sys

import numpy as np


def main():
    out, specs = sys.argv[1], sys.argv[2:]
    header, blobs, offset = {}, [], 0
    for spec in specs:
        name, rest = spec.split("=", 1)
        parts = rest.split(":")
        shape = [int(d) for d in parts[0].split("x")] if parts[0] else []
        dtype = np.float64 if len(parts) > 2 and parts[2] == "f64" else np.float32
        data = (float(parts[1]) + 0.01 * np.arange(int(np.prod(shape)))).astype(dtype)
        blob = data.tobytes()
        header[name] = {"dtype": "F64" if dtype == np.float64 else "F32",
                        "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    header["__metadata__"] = {"epoch": "3"}
    text = json.dumps(header).encode()
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


if __name__ == "__main__":
    main()
