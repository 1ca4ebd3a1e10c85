#!/usr/bin/env python3
"""Writes a small archive in the layout of DVS128 Gesture (DvsGesture/) with
fresh random events: per trial an AEDAT 3.1 file (text header, then packets
of 28-byte headers and 8-byte polarity events, interleaved with special-event
packets that a reader must skip, timestamps crossing the 2^31 overflow of a
packet, invalidated events), <trial>_labels.csv (class 1..11, start and end
microseconds), trials_to_train.txt and trials_to_test.txt. Also the test
split's gestures binned as documented (step floor((t - start) / duration *
T) for start <= t < end, channel p*S*S + (y // (128/S))*S + x // (128/S),
events after the window dropped) into a dense .npy [T, N, 2*S*S] of counts
with their labels (class - 1), and bad archives.

usage: make_dvs_gesture.py OUT SIDE T DURATION
"""
import os
import struct
import sys

import numpy as np

HEADER = b"#!AEDAT-3.1\r\n#Format: RAW\r\n#Source 1: DVS128\r\n#!END-HEADER\r\n"


def packet(kind, events, overflow=0, size=8):
    head = struct.pack("<hhiiiiii", kind, 1, size, 4, overflow, len(events), len(events), len(events))
    return head + b"".join(events)


def polarity(x, y, p, us, valid=1):
    return struct.pack("<Ii", (x << 17) | (y << 2) | (p << 1) | valid, us)


def trial(path, rng, gestures, overflow):
    """Random events for each (class, start, end); returns the events."""
    events = []
    for c, start, end in gestures:
        n = int(rng.integers(3000, 5000))
        us = np.sort(rng.integers(start - 5000, end + 5000, n))
        x = np.clip(rng.normal(32 + 64 * (c % 2), 20, n), 0, 127).astype(int)
        y = np.clip(rng.normal(32 + 64 * (c // 2 % 2), 20, n), 0, 127).astype(int)
        p = (rng.random(n) < 0.5).astype(int)
        events += list(zip(us, x, y, p, (rng.random(n) > 0.05).astype(int)))
    events.sort()
    body = bytearray(HEADER)
    for i in range(0, len(events), 97):  # several packets per file
        chunk = events[i:i + 97]
        base = overflow << 31
        body += packet(1, [polarity(x, y, p, int(t - base), v) for t, x, y, p, v in chunk], overflow)
        body += packet(0, [struct.pack("<Ii", 1, 0)] * 3)  # special events
    with open(path, "wb") as f:
        f.write(body)
    return events


def main():
    out, side, steps, duration = sys.argv[1:5]
    side, steps, duration = int(side), int(steps), float(duration)
    pool = 128 // side
    rng = np.random.default_rng()
    os.makedirs(out, exist_ok=True)
    trials = {"train": ["user01_led.aedat", "user02_natural.aedat"], "test": ["user24_led.aedat"]}
    dense, labels = [], []
    for split, names in trials.items():
        for k, name in enumerate(names):
            base = (1 << 31) if k == 1 or split == "test" else 0  # past 2^31 us: overflow
            gestures = [(int(rng.integers(1, 12)), base + s, base + s + int(rng.integers(200000, 400000)))
                        for s in (100000, 700000, 1300000)]
            events = trial(f"{out}/{name}", rng, gestures, base >> 31)
            with open(f"{out}/{name[:-6]}_labels.csv", "w") as f:
                f.write("class,startTime_usec,endTime_usec\r\n")
                f.writelines(f"{c},{s},{e}\r\n" for c, s, e in gestures)
            if split != "test":
                continue
            for c, s, e in gestures:
                frame = np.zeros((steps, 2 * side * side), dtype=np.float32)
                for t, x, y, p, v in events:
                    b = int(np.floor((t - s) * 1e-6 / duration * steps))
                    if v and s <= t < e and b < steps:
                        frame[b, (p * side + y // pool) * side + x // pool] += 1
                dense.append(frame)
                labels.append(c - 1)
        with open(f"{out}/trials_to_{split}.txt", "w") as f:
            f.write("\n".join(names) + "\n")
    np.save(f"{out}/dense.npy", np.stack(dense, axis=1))
    np.save(f"{out}/labels.npy", np.asarray(labels, dtype=np.int64))
    # Bad archives: a truncated packet, a label class 0.
    for bad in ("torn", "class0"):
        os.makedirs(f"{out}/{bad}", exist_ok=True)
        for split in ("train", "test"):
            with open(f"{out}/{bad}/trials_to_{split}.txt", "w") as f:
                f.write("a.aedat\n")
        data = HEADER + packet(1, [polarity(1, 2, 1, 5)] * 4)
        with open(f"{out}/{bad}/a.aedat", "wb") as f:
            f.write(data[:-3] if bad == "torn" else data)
        with open(f"{out}/{bad}/a_labels.csv", "w") as f:
            f.write("class,startTime_usec,endTime_usec\n" + ("0,0,10\n" if bad == "class0" else "1,0,10\n"))


if __name__ == "__main__":
    main()
