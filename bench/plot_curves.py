#!/usr/bin/env python3
"""Training curves from `snn-run train --metrics` files (JSON lines) as a PNG.

    python3 bench/plot_curves.py OUT.png LABEL=metrics.jsonl [LABEL=...]  (the last "=" splits)
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    fig, (loss_ax, acc_ax) = plt.subplots(1, 2, figsize=(10, 4))
    for arg in sys.argv[2:]:
        label, path = arg.rsplit("=", 1)
        rows = [json.loads(line) for line in open(path) if line.strip()]
        epochs = [r["epoch"] for r in rows]
        loss_ax.plot(epochs, [r["train_loss"] for r in rows], "--", label=f"{label} train")
        loss_ax.plot(epochs, [r["test_loss"] for r in rows], label=f"{label} test")
        acc_ax.plot(epochs, [r["train_acc"] for r in rows], "--", label=f"{label} train")
        acc_ax.plot(epochs, [r["test_acc"] for r in rows], label=f"{label} test")
    loss_ax.set(xlabel="epoch", ylabel="cross-entropy", title="loss")
    acc_ax.set(xlabel="epoch", ylabel="accuracy", title="accuracy")
    for ax in (loss_ax, acc_ax):
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=100)


if __name__ == "__main__":
    main()
