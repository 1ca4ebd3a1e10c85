#!/usr/bin/env python3
"""Synthetic event data in the layout of the Spiking Heidelberg Digits.

The file holds /spikes/times (float32 seconds) and /spikes/units (uint16
channels) as one variable-length array per sample, /labels (uint8) and
/extra/density (the requested density), the layout `snn-run` reads
(`--data FILE.h5 --time-steps T --spike-duration D`). Nothing is downloaded.

Each class is a spectrogram-like pattern, as spoken digits in a cochlea
model: a few ridges whose channel moves linearly in time from a class-given
start to a class-given end (formant sweeps). A sample jitters the pattern
(time stretch, channel shift) and adds uniform background noise. The rate
is set by `density`: the expected fraction of (channel, step) cells that
hold a spike when binned into `steps` bins over `duration` (at most one
spike per cell, placed uniformly inside it), so binning with the same T
gives that density on average; `signal` is the share of spikes that belong
to the class pattern.

usage: synthetic_shd.py OUT.h5 [--samples N] [--channels 700] [--classes 20]
                        [--steps 100] [--duration 1.0] [--density 0.05]
                        [--signal 0.5] [--seed S] [--task K]
"""
import argparse
import os
import tempfile

import numpy as np


def class_patterns(classes, channels, rng, ridges=3):
    """Per class: (start channel, end channel, width) of each ridge."""
    start = rng.uniform(0.05, 0.95, (classes, ridges)) * channels
    end = rng.uniform(0.05, 0.95, (classes, ridges)) * channels
    width = rng.uniform(0.01, 0.03, (classes, ridges)) * channels
    return start, end, width


def intensity(label, patterns, steps, channels, density, signal, rng):
    """Spike probability per (step, channel) of one sample, mean `density`."""
    start, end, width = (p[label] for p in patterns)
    stretch = rng.uniform(0.85, 1.15)
    shift = rng.normal(0.0, 0.01 * channels)
    t = np.clip(np.arange(steps) / max(steps - 1, 1) * stretch, 0.0, 1.0)
    c = np.arange(channels)[None, :]
    pattern = np.zeros((steps, channels))
    for s, e, w in zip(start, end, width):
        centre = (s + (e - s) * t + shift)[:, None]
        pattern += np.exp(-0.5 * ((c - centre) / w) ** 2)
    pattern *= signal * density / pattern.mean()
    return np.clip(pattern + (1.0 - signal) * density, 0.0, 1.0)


def generate(samples, channels=700, classes=20, steps=100, duration=1.0,
             density=0.05, signal=0.5, seed=0, task=0):
    """Returns (times, units, labels): per sample float32 seconds (sorted)
    and uint16 channels, and the uint8 labels. The class patterns depend on
    `task` (and the sizes) only, so files with other seeds and the same task
    are a training and a test split of one task."""
    if not (0.0 <= density <= 1.0) or not (0.0 <= signal <= 1.0):
        raise ValueError("density and signal must lie in [0, 1]")
    if channels > 65536 or classes > 256 or min(samples, channels, classes,
                                                   steps) < 1:
        raise ValueError("need 1 <= channels <= 65536, 1 <= classes <= 256 "
                         "and positive samples and steps")
    patterns = class_patterns(classes, channels,
                              np.random.default_rng([task, classes, channels]))
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, samples).astype(np.uint8)
    bin_width = duration / steps
    times, units = [], []
    for label in labels:
        p = intensity(label, patterns, steps, channels, density, signal, rng)
        step, unit = np.nonzero(rng.random(p.shape) < p)
        # Times inside the bin, kept off its edges so that float32 rounding
        # cannot move a spike into a neighbouring bin.
        t = (step + rng.uniform(0.02, 0.98, step.size)) * bin_width
        order = np.argsort(t, kind="stable")
        times.append(t[order].astype(np.float32))
        units.append(unit[order].astype(np.uint16))
    return times, units, labels


def write(path, times, units, labels, density):
    """Writes atomically: a failed write leaves no partial file."""
    import h5py

    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".h5.tmp")
    os.close(fd)
    try:
        with h5py.File(tmp, "w") as f:
            g = f.create_group("spikes")
            g.create_dataset("times", data=np.array(times + [None], dtype=object)[:-1],
                             dtype=h5py.vlen_dtype(np.float32))
            g.create_dataset("units", data=np.array(units + [None], dtype=object)[:-1],
                             dtype=h5py.vlen_dtype(np.uint16))
            f.create_dataset("labels", data=labels)
            f.create_group("extra").create_dataset("density", data=density)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("output")
    ap.add_argument("--samples", type=int, default=1024)
    ap.add_argument("--channels", type=int, default=700)
    ap.add_argument("--classes", type=int, default=20)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--density", type=float, default=0.05)
    ap.add_argument("--signal", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0,
                    help="the samples (use another seed for a test split)")
    ap.add_argument("--task", type=int, default=0,
                    help="the class patterns (keep it for every split)")
    a = ap.parse_args(argv)
    try:
        times, units, labels = generate(a.samples, a.channels, a.classes,
                                        a.steps, a.duration, a.density,
                                        a.signal, a.seed, a.task)
    except ValueError as e:
        ap.error(str(e))
    write(a.output, times, units, labels, a.density)
    spikes = sum(t.size for t in times)
    print(f"{a.output}: {a.samples} samples, {a.classes} classes, "
          f"{a.channels} channels, {spikes} spikes, density "
          f"{spikes / (a.samples * a.steps * a.channels):.4f} at T={a.steps}")


if __name__ == "__main__":
    main()
