"""snnref: an independent float64 NumPy reference of snn-mlir's semantics.

It reads a compiled module's manifest.json (docs/artifact-format.md) and runs
its programs op by op in float64, simulates NIR nodes at a step dt
(docs/nir.md), and checks its own backward with central finite differences.
Nothing here imports the C++ runtime: it is the yardstick the runtime is
compared against (`python3 -m snnref.compare`).
"""

from .errors import RefError

__all__ = ["RefError"]
