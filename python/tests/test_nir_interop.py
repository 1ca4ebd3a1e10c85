"""NIR interop with the real libraries (bench/interop/run.py): every model
that a library's exporter writes, or that its importer reads from our
--export-nir, must give the library's own outputs unless its row names a
known cause. Runs only where torch, nir and the library import and snn-opt,
snn-translate and snn-run are built (build/ or $SNN_BUILD_DIR); skips
otherwise (CI has no torch). With the interop virtual environment:

    .interop-cache/venv/bin/python -m pytest -q python/tests/test_nir_interop.py
"""
import importlib
import importlib.util
import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
INTEROP = os.path.join(ROOT, "bench", "interop")
BUILD = os.environ.get("SNN_BUILD_DIR", os.path.join(ROOT, "build"))


def _driver():
    for mod in ("torch", "nir", "nirtorch", "h5py"):
        pytest.importorskip(mod)
    for exe in ("bin/snn-opt", "bin/snn-translate", "runtime/snn-run"):
        if not os.path.exists(os.path.join(BUILD, exe)):
            pytest.skip(f"{exe} is not built in {BUILD}")
    if INTEROP not in sys.path:
        sys.path.insert(0, INTEROP)
    spec = importlib.util.spec_from_file_location("interop_run", os.path.join(INTEROP, "run.py"))
    driver = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(driver)  # also puts SpikingJelly's source on sys.path
    return driver


@pytest.mark.parametrize("library", ["snntorch", "norse", "spikingjelly", "sinabs"])
def test_library_matches(library, tmp_path):
    driver = _driver()
    pytest.importorskip(library)
    results, skipped = driver.run_all(BUILD, [library], str(tmp_path), seed=2026,
                                      log=lambda *a: None)
    assert not skipped, skipped
    assert results
    unexpected = [(r.model, r.direction, r.note or f"{r.mismatches} differ")
                  for r in results if not r.equal and r.expect == "equal"]
    assert not unexpected, unexpected
    assert sum(r.equal for r in results) >= 3
    # Equal rows must have exercised the model: some spikes came out.
    assert all(r.rate > 0.01 for r in results if r.equal and r.output == "spikes")
