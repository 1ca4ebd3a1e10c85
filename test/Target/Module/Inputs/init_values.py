"""Round trip of imported values through init.safetensors.

`gen OUT.mlir OUT.npz`: writes a module whose parameters carry `value`s and
whose neurons carry per-neuron parameters, all freshly drawn at random, and
the same values as float64 arrays.
`check MODULE_DIR IN.npz`: reads init.safetensors with its own parser and
compares every tensor with the drawn values (exact after rounding to f32).
"""
import json
import struct
import sys

import numpy as np


def mlir_float(v):
    """repr() (exact), with the '.' that MLIR's float literals need: "1e-05"
    would not parse as a float."""
    r = repr(float(v))
    return r.replace("e", ".0e") if "e" in r and "." not in r else r


def literal(values):
    if values.ndim == 0:
        return mlir_float(values)
    return "[" + ", ".join(literal(v) for v in values) + "]"


def dense(values):
    return "dense<" + literal(values) + ">"


def gen(mlir_path, npz_path):
    rng = np.random.default_rng()
    w = rng.standard_normal((4, 6))
    b = rng.uniform(-1, 1, 4)
    k = rng.uniform(0.05, 0.95, 4)
    v_th = rng.uniform(0.5, 2.0, 4)
    v_reset = rng.uniform(-1.0, 0.0, 4)
    ir = f"""
func.func @forward(%x: tensor<3x2x6xf32>) -> tensor<3x2x4xf32> {{
  %w = snn.param "fc.weight" {{value = {dense(w)} : tensor<4x6xf32>}} : tensor<4x6xf32>
  %b = snn.param "fc.bias" {{value = {dense(b)} : tensor<4xf32>}} : tensor<4xf32>
  %h = snn.linear %x, %w, %b : tensor<3x2x6xf32>, tensor<4x6xf32>, tensor<4xf32> -> tensor<3x2x4xf32>
  %s = snn.lif %h {{k = {dense(k)} : tensor<4xf32>, v_th = {dense(v_th)} : tensor<4xf32>,
                   v_reset = {dense(v_reset)} : tensor<4xf32>, snn.name = "lif"}} : tensor<3x2x4xf32>
  return %s : tensor<3x2x4xf32>
}}
"""
    with open(mlir_path, "w") as f:
        f.write(ir)
    np.savez(npz_path, **{"fc.weight": w, "fc.bias": b, "lif.k": k,
                          "lif.v_th": v_th, "lif.v_reset": v_reset})


def check(module_dir, npz_path):
    with open(module_dir + "/init.safetensors", "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    expected = np.load(npz_path)
    names = sorted(n for n in header if n != "__metadata__")
    if names != sorted(expected.files):
        sys.exit(f"init.safetensors holds {names}, expected {sorted(expected.files)}")
    for name in names:
        t = header[name]
        begin, end = t["data_offsets"]
        got = np.frombuffer(data[8 + size + begin:8 + size + end], dtype="<f4")
        want = expected[name].astype(np.float32)
        if t["dtype"] != "F32" or list(want.shape) != t["shape"]:
            sys.exit(f"{name}: {t['dtype']} {t['shape']}, expected F32 {list(want.shape)}")
        if not np.array_equal(got.reshape(want.shape), want):
            sys.exit(f"{name}: values differ, max error "
                     f"{np.abs(got.reshape(want.shape) - want).max()}")
    manifest = json.load(open(module_dir + "/manifest.json"))
    roles = {t["name"]: t["role"] for t in manifest["tensors"]}
    for name in names:
        want_role = "param" if name.startswith("fc.") else "constant"
        if roles.get(name) != want_role:
            sys.exit(f"{name}: role {roles.get(name)}, expected {want_role}")
    print(f"init.safetensors: {len(names)} tensors match")


if __name__ == "__main__":
    {"gen": gen, "check": check}[sys.argv[1]](*sys.argv[2:])
