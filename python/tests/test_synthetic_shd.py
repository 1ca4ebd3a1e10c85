"""The synthetic SHD generator: its density is the one asked for, its classes
are separable (and not without the class signal), the file layout is the one
snn-run reads, and a failed write leaves no file."""
import os

import h5py
import numpy as np
import pytest

from snnref import synthetic_shd


def binned(times, units, steps, channels, duration=1.0):
    """Spike counts [N, steps, channels] as snn-run bins them."""
    out = np.zeros((len(times), steps, channels), np.float32)
    for i, (t, u) in enumerate(zip(times, units)):
        b = np.floor(t.astype(np.float64) / duration * steps).astype(np.int64)
        np.add.at(out[i], (b, u.astype(np.int64)), 1.0)
    return out


@pytest.mark.parametrize("density", [0.0, 0.01, 0.05, 0.2])
def test_density(density, rng):
    times, units, labels = synthetic_shd.generate(
        48, channels=300, classes=5, steps=50, density=density,
        seed=int(rng.integers(1 << 30)))
    x = binned(times, units, 50, 300)
    assert x.max() <= 1.0  # at most one spike per cell
    assert abs(x.mean() - density) <= 0.05 * density + 1e-12, x.mean()
    assert labels.dtype == np.uint8 and labels.max() < 5
    for t in times:
        assert np.all(np.diff(t) >= 0) and t.min(initial=0) >= 0 and t.max(initial=0) < 1.0


def nearest_centroid_accuracy(signal, seed):
    times, units, labels = synthetic_shd.generate(
        400, channels=700, classes=20, steps=100, density=0.05, signal=signal,
        seed=seed)
    # Coarse rate features: 10 time bins x 70 channel bins.
    x = binned(times, units, 10, 700).reshape(400, 10, 70, 10).sum(-1).reshape(400, -1)
    train, test = slice(0, 300), slice(300, 400)
    centroids = np.stack([x[train][labels[train] == k].mean(0) if np.any(labels[train] == k)
                          else np.full(x.shape[1], np.inf) for k in range(20)])
    d = ((x[test][:, None, :] - centroids[None]) ** 2).sum(-1)
    return float(np.mean(d.argmin(1) == labels[test]))


def test_classes_are_separable(rng):
    seed = int(rng.integers(1 << 30))
    assert nearest_centroid_accuracy(0.7, seed) > 0.8
    assert nearest_centroid_accuracy(0.0, seed) < 0.25  # pure noise: chance


def test_file_layout(tmp_path):
    path = str(tmp_path / "syn.h5")
    synthetic_shd.main([path, "--samples", "7", "--channels", "40", "--classes", "3",
                        "--steps", "20", "--density", "0.1", "--seed", "3"])
    with h5py.File(path) as f:
        assert f["spikes/times"].shape == (7,) and f["spikes/units"].shape == (7,)
        assert f["spikes/times"].dtype.metadata["vlen"] == np.float32
        assert f["spikes/units"].dtype.metadata["vlen"] == np.uint16
        assert f["labels"].shape == (7,) and float(f["extra/density"][()]) == 0.1
        assert max(int(u.max(initial=0)) for u in f["spikes/units"]) < 40
    assert os.listdir(tmp_path) == ["syn.h5"]


def test_bad_options_leave_no_file(tmp_path):
    with pytest.raises(SystemExit):
        synthetic_shd.main([str(tmp_path / "x.h5"), "--density", "1.5"])
    assert os.listdir(tmp_path) == []
