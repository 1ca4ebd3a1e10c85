"""Rate / membrane losses over the time mean m[b, c] = mean_t y[t, b, c]:

    loss_ce_rate, loss_ce_membrane: mean_b [ logsumexp(m_b) - m_b[label_b] ]
    loss_mse_rate:                  mean_{b,c} (m_b[c] - onehot_b[c])^2
    correct = #{b : argmax_c m_b = label_b}  (first maximum on ties)

Returns (loss, gy, correct); gy spreads dL/dm evenly over the T steps.

    loss_ce_membrane_max: the same cross-entropy on m[b, c] = max_t y[t, b, c]
    (Spiking Heidelberg Digits readouts); gy puts dL/dm at the first step
    that reaches the maximum, 0 elsewhere.
"""

import numpy as np

from .errors import RefError

KINDS = ("loss_ce_rate", "loss_mse_rate", "loss_ce_membrane",
         "loss_ce_membrane_max")


def rate_loss(kind, y, labels):
    if kind not in KINDS:
        raise RefError(f"unknown loss '{kind}' (expected {', '.join(KINDS)})")
    y = np.asarray(y, dtype=np.float64)
    T, B = y.shape[:2]
    y = y.reshape(T, B, -1)
    C = y.shape[2]
    labels = np.asarray(labels).reshape(-1).astype(np.int64)
    if labels.size != B:
        raise RefError(f"{kind}: {labels.size} labels for a batch of {B}")
    bad = (labels < 0) | (labels >= C)
    if bad.any():
        b = int(np.argmax(bad))
        raise RefError(f"{kind}: label {labels[b]} of sample {b} is outside "
                       f"[0, {C}): the labels do not match the {C} outputs")
    if kind == "loss_ce_membrane_max":
        first = np.argmax(y, axis=0)  # the first step that reaches the max
        m = np.take_along_axis(y, first[None], axis=0)[0]
    else:
        m = y.mean(axis=0)
    onehot = np.eye(C)[labels]
    correct = float((np.argmax(m, axis=1) == labels).sum())
    if kind == "loss_mse_rate":
        d = m - onehot
        loss = (d ** 2).sum() / (B * C)
        gm = 2.0 * d / (B * C)
    else:
        mx = m.max(axis=1, keepdims=True)
        e = np.exp(m - mx)
        lse = np.log(e.sum(axis=1)) + mx[:, 0]
        loss = (lse - m[np.arange(B), labels]).mean()
        gm = (e / e.sum(axis=1, keepdims=True) - onehot) / B
    if kind == "loss_ce_membrane_max":
        gy = np.zeros((T, B, C))
        np.put_along_axis(gy, first[None], gm[None], axis=0)
    else:
        gy = np.broadcast_to(gm / T, (T, B, C)).copy()
    return float(loss), gy, correct


def eval_loss(kind, y, labels):
    """The evaluation's (loss, correct): samples labeled -1 (the padding of a
    partial batch) are skipped; the loss is the mean over the others."""
    y = np.asarray(y, dtype=np.float64)
    T, B = y.shape[:2]
    labels = np.asarray(labels).reshape(-1).astype(np.int64)
    keep = labels != -1
    if not keep.any():
        return float("nan"), 0.0
    loss, _, correct = rate_loss(kind, y.reshape(T, B, -1)[:, keep],
                                 labels[keep])
    return loss, correct
