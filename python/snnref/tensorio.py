"""Minimal .npy and safetensors readers/writers with NumPy only.

.npy: format versions 1.0-3.0, little/big-endian numeric dtypes, C or
Fortran order (no pickled object arrays). safetensors: an 8-byte
little-endian header length, a JSON header {name: {dtype, shape,
data_offsets}} (+ optional "__metadata__"), then the raw little-endian data.
"""

import ast
import json
import os
import struct

import numpy as np

from .errors import RefError

_NPY_MAGIC = b"\x93NUMPY"

_ST_DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2",
    "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
    "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?",
}
_ST_NAMES = {np.dtype(v).str: k for k, v in _ST_DTYPES.items()}


def _read_bytes(path, what):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise RefError(f"{path}: cannot read the {what}: {e.strerror}") from None


def read_npy(path):
    data = _read_bytes(path, ".npy file")
    if not data.startswith(_NPY_MAGIC) or len(data) < 10:
        raise RefError(f"{path}: not a .npy file (no \\x93NUMPY magic); "
                       "save the array with numpy.save")
    major = data[6]
    if major == 1:
        hlen, start = struct.unpack("<H", data[8:10])[0], 10
    elif major in (2, 3):
        if len(data) < 12:
            raise RefError(f"{path}: truncated .npy header")
        hlen, start = struct.unpack("<I", data[8:12])[0], 12
    else:
        raise RefError(f"{path}: unsupported .npy format version {major}")
    try:
        header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
        dtype = np.dtype(header["descr"])
        shape = tuple(int(d) for d in header["shape"])
        fortran = bool(header["fortran_order"])
    except (ValueError, SyntaxError, KeyError, TypeError) as e:
        raise RefError(f"{path}: malformed .npy header ({e})") from None
    if dtype.hasobject:
        raise RefError(f"{path}: object arrays are not supported; save a "
                       "numeric array")
    count = int(np.prod(shape, dtype=np.int64))
    body = data[start + hlen:]
    if len(body) < count * dtype.itemsize:
        raise RefError(f"{path}: truncated: the header says {shape} "
                       f"{dtype} ({count * dtype.itemsize} bytes) but only "
                       f"{len(body)} bytes follow")
    arr = np.frombuffer(body, dtype=dtype, count=count)
    if fortran:
        return arr.reshape(shape[::-1]).T.copy()
    return arr.reshape(shape).copy()


def write_npy(path, array):
    array = np.ascontiguousarray(array)
    if array.dtype.hasobject:
        raise RefError(f"{path}: cannot write an object array")
    header = repr({"descr": array.dtype.str, "fortran_order": False,
                   "shape": tuple(array.shape)}).encode("latin1")
    pad = 64 - (10 + len(header) + 1) % 64
    header += b" " * pad + b"\n"
    with open(path, "wb") as f:
        f.write(_NPY_MAGIC + b"\x01\x00" + struct.pack("<H", len(header)))
        f.write(header)
        f.write(array.tobytes())


def read_safetensors(path):
    """Returns ({name: array}, metadata dict)."""
    data = _read_bytes(path, "safetensors file")
    if len(data) < 8:
        raise RefError(f"{path}: not a safetensors file (shorter than its "
                       "8-byte header length)")
    hlen = struct.unpack("<Q", data[:8])[0]
    if 8 + hlen > len(data):
        raise RefError(f"{path}: the header length {hlen} runs past the end "
                       f"of the file ({len(data)} bytes)")
    try:
        header = json.loads(data[8:8 + hlen].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RefError(f"{path}: malformed safetensors header: {e}") from None
    if not isinstance(header, dict):
        raise RefError(f"{path}: the safetensors header is not a JSON object")
    meta = header.pop("__metadata__", {}) or {}
    body = data[8 + hlen:]
    out = {}
    for name, info in header.items():
        try:
            dtype = np.dtype(_ST_DTYPES[info["dtype"]])
            shape = tuple(int(d) for d in info["shape"])
            begin, end = (int(o) for o in info["data_offsets"])
        except KeyError as e:
            raise RefError(f"{path}: tensor '{name}': missing or unknown "
                           f"field {e}") from None
        count = int(np.prod(shape, dtype=np.int64))
        if end - begin != count * dtype.itemsize or end > len(body) or begin < 0:
            raise RefError(f"{path}: tensor '{name}': data_offsets "
                           f"[{begin}, {end}) do not hold {shape} {info['dtype']}")
        out[name] = np.frombuffer(body[begin:end], dtype=dtype).reshape(shape).copy()
    return out, meta


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: array} (F32/F64/I32/... by the array's dtype)."""
    header, chunks, offset = {}, [], 0
    for name, arr in tensors.items():
        arr = np.ascontiguousarray(arr)
        le = arr.astype(arr.dtype.newbyteorder("<"), copy=False)
        code = _ST_NAMES.get(le.dtype.str)
        if code is None:
            raise RefError(f"{path}: tensor '{name}': dtype {arr.dtype} has no "
                           "safetensors code")
        raw = le.tobytes()
        header[name] = {"dtype": code, "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    blob = json.dumps(header, separators=(",", ":")).encode("utf-8")
    blob += b" " * (-len(blob) % 8)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for c in chunks:
            f.write(c)
    os.replace(tmp, path)
