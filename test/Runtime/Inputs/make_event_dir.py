#!/usr/bin/env python3
"""Writes an event-camera dataset in N-MNIST's layout with fresh random
events: OUT/Train/<label>/<n>.bin and OUT/Test/<label>/<n>.bin, each file 5
bytes per event (x, y, polarity in bit 7 of byte 2 with the timestamp's bits
22-16 below it, then timestamp bits 15-0, big-endian; microseconds). Also the
same events binned the way the format is documented (step floor(t / duration
* T), channel p*S*S + y*S + x, events at or after `duration` dropped) into a
dense .npy [T, N, 2*S*S] of counts with its labels, for the Test split in the
order snn-run reads it (labels ascending, file names sorted), and bad inputs.

usage: make_event_dir.py OUT SIDE T DURATION CLASSES PER_CLASS
"""
import os
import sys

import numpy as np


def encode(x, y, p, us):
    b = np.zeros((len(x), 5), dtype=np.uint8)
    b[:, 0] = x
    b[:, 1] = y
    b[:, 2] = (p << 7) | ((us >> 16) & 0x7F)
    b[:, 3] = (us >> 8) & 0xFF
    b[:, 4] = us & 0xFF
    return b.tobytes()


def main():
    out, side, steps, duration, classes, per_class = sys.argv[1:7]
    side, steps, classes, per_class = int(side), int(steps), int(classes), int(per_class)
    duration = float(duration)
    rng = np.random.default_rng()
    channels = 2 * side * side
    dense, labels = [], []
    for split in ("Train", "Test"):
        for label in range(classes):
            os.makedirs(f"{out}/{split}/{label}", exist_ok=True)
            for n in range(per_class):
                count = int(rng.integers(300, 600))
                # class structure: each class prefers one quadrant and polarity
                x = np.clip(rng.normal(side * (0.25 + 0.5 * (label % 2)), side / 5, count), 0, side - 1).astype(np.int64)
                y = np.clip(rng.normal(side * (0.25 + 0.5 * (label // 2 % 2)), side / 5, count), 0, side - 1).astype(np.int64)
                p = (rng.random(count) < (0.8 if label % 3 == 0 else 0.2)).astype(np.int64)
                us = np.sort(rng.integers(0, int(duration * 1.2e6), count))
                if n == 0:  # timestamps on the bin edges and past 2^16
                    us[:3] = [0, int(round(duration * 1e6 / steps)), 70000]
                # a file name that sorts before the others
                with open(f"{out}/{split}/{label}/{n:05d}.bin", "wb") as f:
                    f.write(encode(x, y, p, us))
                if split == "Test":
                    frame = np.zeros((steps, channels), dtype=np.float32)
                    t = np.floor(us * 1e-6 / duration * steps).astype(np.int64)
                    keep = t < steps
                    np.add.at(frame, (t[keep], (p * side + y)[keep] * side + x[keep]), 1.0)
                    dense.append(frame)
                    labels.append(label)
    np.save(f"{out}/dense.npy", np.stack(dense, axis=1))
    np.save(f"{out}/labels.npy", np.asarray(labels, dtype=np.int64))
    os.makedirs(f"{out}/bad/0", exist_ok=True)
    with open(f"{out}/bad/0/a.bin", "wb") as f:
        f.write(encode(np.array([side]), np.array([0]), np.array([1]), np.array([5])))
    os.makedirs(f"{out}/torn/1", exist_ok=True)
    with open(f"{out}/torn/1/a.bin", "wb") as f:
        f.write(encode(np.array([1]), np.array([0]), np.array([1]), np.array([5]))[:4])


if __name__ == "__main__":
    main()
