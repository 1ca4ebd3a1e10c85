import struct

import numpy as np
import pytest

from snnref import RefError
from snnref.tensorio import read_npy, read_safetensors, write_npy, write_safetensors


@pytest.mark.parametrize("dtype", ["<f4", ">f8", "<i4", "u1"])
@pytest.mark.parametrize("fortran", [False, True])
def test_npy_reads_numpy_files(tmp_path, dtype, fortran, rng):
    a = (rng.normal(size=(3, 4, 2)) * 50).astype(dtype)
    if fortran:
        a = np.asfortranarray(a)
    np.save(tmp_path / "a.npy", a)
    b = read_npy(str(tmp_path / "a.npy"))
    assert b.shape == a.shape
    np.testing.assert_array_equal(b, a)


def test_npy_roundtrip_and_errors(tmp_path, rng):
    a = rng.normal(size=(5, 2)).astype(np.float32)
    write_npy(str(tmp_path / "a.npy"), a)
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), a)
    (tmp_path / "bad.npy").write_bytes(b"hello")
    with pytest.raises(RefError, match="not a .npy file"):
        read_npy(str(tmp_path / "bad.npy"))
    raw = (tmp_path / "a.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(raw[:-4])
    with pytest.raises(RefError, match="truncated"):
        read_npy(str(tmp_path / "cut.npy"))
    with pytest.raises(RefError, match="cannot read"):
        read_npy(str(tmp_path / "missing.npy"))


def test_safetensors_roundtrip_and_errors(tmp_path, rng):
    t = {"w": rng.normal(size=(3, 2)).astype(np.float32),
         "n": rng.integers(0, 9, 4).astype(np.int32)}
    p = str(tmp_path / "t.safetensors")
    write_safetensors(p, t, {"step": 3})
    back, meta = read_safetensors(p)
    assert meta == {"step": "3"}
    for k in t:
        assert back[k].dtype == t[k].dtype
        np.testing.assert_array_equal(back[k], t[k])
    (tmp_path / "x").write_bytes(struct.pack("<Q", 1000) + b"{}")
    with pytest.raises(RefError, match="runs past the end"):
        read_safetensors(str(tmp_path / "x"))
    hdr = b'{"w":{"dtype":"F32","shape":[4],"data_offsets":[0,8]}}'
    (tmp_path / "y").write_bytes(struct.pack("<Q", len(hdr)) + hdr + bytes(8))
    with pytest.raises(RefError, match="data_offsets"):
        read_safetensors(str(tmp_path / "y"))
