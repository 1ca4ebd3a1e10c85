#!/usr/bin/env python3
"""Writes a spike file in the layout of the Spiking Heidelberg Digits (HDF5:
/spikes/times in seconds and /spikes/units as one variable-length array per
sample, /labels) with fresh random spikes, and the same spikes binned into a
dense .npy [T, N, channels] of counts (floor(time / duration * T), spikes at
or after `duration` dropped) with its labels: snn-run must read both the same.

usage: make_spike_file.py OUT_DIR N CHANNELS T DURATION CLASSES
  -> OUT_DIR/spikes.h5, OUT_DIR/dense.npy, OUT_DIR/labels.npy
     and OUT_DIR/bad-unit.h5 (a unit outside the channels)
"""
import sys

import h5py
import numpy as np


def write(path, times, units, labels):
    with h5py.File(path, "w") as f:
        g = f.create_group("spikes")
        g.create_dataset("times", data=np.array(times, dtype=object),
                         dtype=h5py.vlen_dtype(np.float32))
        g.create_dataset("units", data=np.array(units, dtype=object),
                         dtype=h5py.vlen_dtype(np.uint16))
        f.create_dataset("labels", data=np.asarray(labels, dtype=np.uint8))


def main():
    out, n, channels, steps, duration, classes = sys.argv[1:7]
    n, channels, steps, classes = int(n), int(channels), int(steps), int(classes)
    duration = float(duration)
    rng = np.random.default_rng()  # fresh every run
    times, units, labels = [], [], []
    dense = np.zeros((steps, n, channels), np.float32)
    edges = np.float32(np.arange(1, steps) * duration / steps)
    edges = edges[np.floor(edges.astype(np.float64) / duration * steps) !=
                  np.floor(edges.astype(np.float64) / np.float32(duration) * steps)]
    for i in range(n):
        k = int(rng.integers(3000, 8000))
        # Some spikes after the duration, which the binning drops.
        t = rng.uniform(0.0, duration * 1.2, k).astype(np.float32)
        if i == 0:  # spikes at bin edges, where a float duration bins wrong
            t[:len(edges)] = edges
        t = np.sort(t)
        u = rng.integers(0, channels, k).astype(np.uint16)
        times.append(t)
        units.append(u)
        labels.append(int(rng.integers(0, classes)))
        bins = np.floor(t.astype(np.float64) / duration * steps).astype(np.int64)
        keep = bins < steps
        np.add.at(dense[:, i, :], (bins[keep], u[keep].astype(np.int64)), 1.0)
    write(f"{out}/spikes.h5", times, units, labels)
    np.save(f"{out}/dense.npy", dense)
    np.save(f"{out}/labels.npy", np.asarray(labels, np.int64))
    units[0] = units[0].copy()
    units[0][0] = channels  # one past the last channel
    write(f"{out}/bad-unit.h5", times, units, labels)


if __name__ == "__main__":
    main()
