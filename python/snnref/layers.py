"""Stateless layers and their gradients, in float64, with PyTorch's
conventions (NCHW, cross-correlation, count_include_pad=True average pooling,
biased batch variance for normalization and unbiased for running_var).

Leading dims the op does not interpret are rows: callers pass x as
[M, ...] with M = T*B.
"""

import numpy as np

from .errors import RefError


def _pair(v, name):
    if isinstance(v, (int, float)):
        return int(v), int(v)
    if len(v) != 2:
        raise RefError(f"'{name}' must have 2 values, got {v!r}")
    return int(v[0]), int(v[1])


# -- linear ------------------------------------------------------------------
def linear(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


def linear_bwd(gy, x, w, has_bias=False):
    return gy @ w, gy.T @ x, (gy.sum(axis=0) if has_bias else None)


# -- windows shared by conv and pooling ----------------------------------------
class Window:
    """Output geometry of a 2-D window op over x[M, C, H, W]."""

    def __init__(self, in_hw, kernel, stride, padding, dilation=(1, 1)):
        self.kh, self.kw = _pair(kernel, "kernel")
        self.sh, self.sw = _pair(stride, "stride")
        # [top, left] on both sides, or [top, left, bottom, right].
        padding = list(np.ravel(padding)) if not np.isscalar(padding) else padding
        if not np.isscalar(padding) and len(padding) == 4:
            self.ph, self.pw = int(padding[0]), int(padding[1])
            self.ph2, self.pw2 = int(padding[2]), int(padding[3])
        else:
            self.ph, self.pw = _pair(padding, "padding")
            self.ph2, self.pw2 = self.ph, self.pw
        self.dh, self.dw = _pair(dilation, "dilation")
        H, W = in_hw
        self.oh = (H + self.ph + self.ph2 - self.dh * (self.kh - 1) - 1) // self.sh + 1
        self.ow = (W + self.pw + self.pw2 - self.dw * (self.kw - 1) - 1) // self.sw + 1
        if min(self.sh, self.sw, self.dh, self.dw, self.kh, self.kw) < 1 or \
                min(self.ph, self.pw, self.ph2, self.pw2) < 0 or \
                self.oh < 1 or self.ow < 1:
            raise RefError(f"window kernel {[self.kh, self.kw]} stride "
                           f"{[self.sh, self.sw]} padding {[self.ph, self.pw]} "
                           f"dilation {[self.dh, self.dw]} does not fit a "
                           f"{H}x{W} input")

    def pad(self, x, value=0.0):
        return np.pad(x, ((0, 0), (0, 0), (self.ph, self.ph2), (self.pw, self.pw2)),
                      constant_values=value)

    def taps(self):
        """(i, j, slice of the padded input that tap (i, j) reads)."""
        for i in range(self.kh):
            for j in range(self.kw):
                r0, c0 = i * self.dh, j * self.dw
                yield i, j, (slice(None), slice(None),
                             slice(r0, r0 + self.sh * (self.oh - 1) + 1, self.sh),
                             slice(c0, c0 + self.sw * (self.ow - 1) + 1, self.sw))

    def unpad(self, xp):
        H = xp.shape[2] - self.ph - self.ph2
        W = xp.shape[3] - self.pw - self.pw2
        return xp[:, :, self.ph:self.ph + H, self.pw:self.pw + W]


# -- conv2d ----------------------------------------------------------------
def _conv_geometry(x, w, groups):
    M, C, H, W = x.shape
    O, Cg = w.shape[0], w.shape[1]
    if groups < 1 or C % groups or O % groups or C // groups != Cg:
        raise RefError(f"conv2d: x has {C} channels and w {list(w.shape)} with "
                       f"groups={groups}: need C = groups * w.shape[1] and "
                       "O divisible by groups")
    return O // groups, Cg


# channels_last: x [M, H, W, C], w [O, KH, KW, C], y [M, OH, OW, O]. The
# reference computes in NCHW and transposes around it.
_TO_NCHW, _TO_NHWC = (0, 3, 1, 2), (0, 2, 3, 1)


def conv2d(x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
           channels_last=False):
    if channels_last:
        y = conv2d(x.transpose(_TO_NCHW), w.transpose(_TO_NCHW), b, stride,
                   padding, dilation, groups)
        return y.transpose(_TO_NHWC)
    og, cg = _conv_geometry(x, w, groups)
    win = Window(x.shape[2:], w.shape[2:], stride, padding, dilation)
    xp = win.pad(x)
    y = np.zeros((x.shape[0], w.shape[0], win.oh, win.ow))
    for i, j, sl in win.taps():
        xs = xp[sl]
        for g in range(groups):
            y[:, g * og:(g + 1) * og] += np.einsum(
                "mcij,oc->moij", xs[:, g * cg:(g + 1) * cg],
                w[g * og:(g + 1) * og, :, i, j])
    if b is not None:
        y += b[None, :, None, None]
    return y


def conv2d_bwd(gy, x, w, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
               groups=1, has_bias=False, channels_last=False):
    if channels_last:
        gx, gw, gb = conv2d_bwd(gy.transpose(_TO_NCHW), x.transpose(_TO_NCHW),
                                w.transpose(_TO_NCHW), stride, padding, dilation,
                                groups, has_bias)
        return gx.transpose(_TO_NHWC), gw.transpose(_TO_NHWC), gb
    og, cg = _conv_geometry(x, w, groups)
    win = Window(x.shape[2:], w.shape[2:], stride, padding, dilation)
    xp = win.pad(x)
    gxp = np.zeros_like(xp)
    gw = np.zeros_like(w, dtype=np.float64)
    for i, j, sl in win.taps():
        for g in range(groups):
            go, gc = slice(g * og, (g + 1) * og), slice(g * cg, (g + 1) * cg)
            gw[go, :, i, j] = np.einsum("moij,mcij->oc", gy[:, go], xp[sl][:, gc])
            view = gxp[sl]
            view[:, gc] += np.einsum("moij,oc->mcij", gy[:, go], w[go, :, i, j])
    gb = gy.sum(axis=(0, 2, 3)) if has_bias else None
    return win.unpad(gxp), gw, gb


# -- pooling -------------------------------------------------------------------
def pool2d(kind, x, kernel, stride, padding):
    win = Window(x.shape[2:], kernel, stride, padding)
    if kind == "max":
        xp = win.pad(x, -np.inf)
        y = np.full(x.shape[:2] + (win.oh, win.ow), -np.inf)
        for _, _, sl in win.taps():
            y = np.maximum(y, xp[sl])
        return y
    xp = win.pad(x)
    y = np.zeros(x.shape[:2] + (win.oh, win.ow))
    for _, _, sl in win.taps():
        y += xp[sl]
    return y / (win.kh * win.kw) if kind == "avg" else y


def pool2d_bwd(kind, gy, input_shape, kernel, stride, padding, x=None):
    """Max pooling sends the gradient to the first maximum of each window in
    row-major tap order (PyTorch's CPU rule)."""
    win = Window(tuple(input_shape[2:]), kernel, stride, padding)
    gxp = np.zeros(tuple(input_shape[:2]) + (input_shape[2] + 2 * win.ph,
                                             input_shape[3] + 2 * win.pw))
    if kind == "max":
        xp = win.pad(x, -np.inf)
        best = np.full(gy.shape, -np.inf)
        for _, _, sl in win.taps():
            best = np.maximum(best, xp[sl])
        taken = np.zeros(gy.shape, dtype=bool)
        for _, _, sl in win.taps():
            hit = (xp[sl] == best) & ~taken
            taken |= hit
            view = gxp[sl]
            view += np.where(hit, gy, 0.0)
        return win.unpad(gxp)
    g = gy / (win.kh * win.kw) if kind == "avg" else gy
    for _, _, sl in win.taps():
        view = gxp[sl]
        view += g
    return win.unpad(gxp)


# -- batch norm ----------------------------------------------------------------
def _bn_view(x, C, spatial_rank):
    r = x.ndim
    if spatial_rank < 0 or spatial_rank + 1 > r or x.shape[r - 1 - spatial_rank] != C:
        raise RefError(f"batch_norm: x {list(x.shape)} does not have {C} "
                       f"channels before its {spatial_rank} spatial dims")
    S = int(np.prod(x.shape[r - spatial_rank:], dtype=np.int64))
    return x.reshape(-1, C, S)


def batch_norm(x, gamma, beta, running_mean, running_var, eps=1e-5,
               momentum=0.1, training=False, spatial_rank=2):
    """Returns (y, new_running_mean, new_running_var, saved_mean, saved_invstd);
    the last two are None in eval mode."""
    C = gamma.size
    xv = _bn_view(x, C, spatial_rank)
    if training:
        n = xv.shape[0] * xv.shape[2]
        mean = xv.mean(axis=(0, 2))
        var = ((xv - mean[None, :, None]) ** 2).mean(axis=(0, 2))
        unbiased = var * n / (n - 1) if n > 1 else var
        rm = (1 - momentum) * running_mean + momentum * mean
        rv = (1 - momentum) * running_var + momentum * unbiased
    else:
        mean, var = running_mean, running_var
        rm, rv = running_mean, running_var
    invstd = 1.0 / np.sqrt(var + eps)
    y = batch_norm_apply(x, gamma, beta, mean, invstd, spatial_rank)
    saved = (mean, invstd) if training else (None, None)
    return (y, rm, rv) + saved


def batch_norm_apply(x, gamma, beta, mean, invstd, spatial_rank=2):
    """x normalized with the per-channel statistics (mean, invstd) and
    affine (gamma, beta)."""
    C = gamma.size
    xv = _bn_view(x, C, spatial_rank)
    y = (xv - mean[None, :, None]) * (invstd * gamma)[None, :, None] + beta[None, :, None]
    return y.reshape(x.shape)


def batch_norm_bwd(gy, x, gamma, saved_mean, saved_invstd, spatial_rank=2):
    C = gamma.size
    xv, gv = _bn_view(x, C, spatial_rank), _bn_view(gy, C, spatial_rank)
    n = xv.shape[0] * xv.shape[2]
    xhat = (xv - saved_mean[None, :, None]) * saved_invstd[None, :, None]
    gbeta = gv.sum(axis=(0, 2))
    ggamma = (gv * xhat).sum(axis=(0, 2))
    gx = (gamma * saved_invstd)[None, :, None] / n * (
        n * gv - gbeta[None, :, None] - xhat * ggamma[None, :, None])
    return gx.reshape(x.shape), ggamma, gbeta


# -- elementwise ---------------------------------------------------------------
def dropout(x, mask, p):
    """Training-mode dropout with a given keep mask (1 = kept)."""
    if not 0.0 <= p < 1.0:
        raise RefError(f"dropout: 'p' must be in [0, 1), got {p}")
    return x * mask / (1.0 - p)


def dropout_bwd(gy, mask, p):
    return gy * mask / (1.0 - p)


def pack_bits(spikes, occupancy=False):
    """Spikes (0/1) -> u32 words: element 32 w + j of the flattened tensor is
    bit j of word w (docs/artifact-format.md, bit-packed saved spikes).
    `occupancy`: any values, bit = (value != 0)."""
    flat = np.asarray(spikes, dtype=np.float64).reshape(-1)
    if not occupancy and not np.all((flat == 0) | (flat == 1)):
        raise RefError("pack_bits packs spikes; its input holds values other "
                       "than 0 and 1")
    words = -(-flat.size // 32)
    bits = np.zeros(words * 32, dtype=np.uint64)
    bits[:flat.size] = flat != 0
    weights = np.uint64(1) << np.arange(32, dtype=np.uint64)
    return (bits.reshape(words, 32) * weights).sum(axis=1).astype(np.float64)


def event_weight_grad_bits(gy_t, words, k, x=None):
    """gw [N, K] = gy_t [N, M] @ x [M, K], x read where its bits (M K of
    `words`, pack_bits' layout) are set: 1 there, or x's value when given."""
    m = gy_t.shape[1]
    bits = unpack_bits(words, m * k).reshape(m, k)
    values = bits if x is None else np.where(bits != 0, x.reshape(m, k), 0.0)
    return gy_t @ values


def compact_rows(x):
    """Per row of x [M, K], in a row of K slots: the columns of its nonzeros
    in order, then -1 unless the row is full (the slots after it are left
    0; docs/artifact-format.md, compact_rows); their values likewise."""
    x = np.asarray(x, dtype=np.float64)
    m, k = x.shape
    columns = np.zeros((m, k))
    values = np.zeros((m, k))
    for r in range(m):
        nz = np.flatnonzero(x[r])
        columns[r, :nz.size] = nz
        values[r, :nz.size] = x[r, nz]
        if nz.size < k:
            columns[r, nz.size] = -1
    return columns.reshape(-1), values.reshape(-1)


def rows_from_lists(columns, k, values=None):
    """x [M, K] rebuilt from compact_rows' lists (K slots a row): 1 at the
    listed columns, or the listed values when given."""
    columns = np.asarray(columns).reshape(-1, k).astype(np.int64)
    m = columns.shape[0]
    values = None if values is None else np.asarray(values).reshape(m, k)
    x = np.zeros((m, k))
    for r in range(m):
        ends = np.flatnonzero(columns[r] == -1)
        n = ends[0] if ends.size else k
        cols = columns[r, :n]
        if np.any(cols < 0) or np.any(cols >= k) or np.unique(cols).size != n:
            raise RefError(f"compact_rows: row {r} lists columns outside "
                           f"[0, {k}) or twice")
        x[r, cols] = 1.0 if values is None else values[r, :n]
    return x


def event_weight_grad_lists(gy_t, columns, k, values=None):
    """gw [N, K] = gy_t [N, M] @ x [M, K], x rebuilt from compact_rows' lists:
    1 at the listed columns, or the listed values when given."""
    return gy_t @ rows_from_lists(columns, k, values)


def compact_columns(gy, segment):
    """Per column j of gy [M, N] and segment s of `segment` rows: the rows
    r of the segment with gy[r, j] != 0 in order at slots j M + s segment
    + i, then -1 unless the segment is full (docs/artifact-format.md,
    compact_columns); the other slots are left 0."""
    gy = np.asarray(gy, dtype=np.float64)
    m, n = gy.shape
    rows = np.zeros((n, m))
    for j in range(n):
        for first in range(0, m, segment):
            nz = first + np.flatnonzero(gy[first:first + segment, j])
            rows[j, first:first + nz.size] = nz
            if nz.size < min(segment, m - first):
                rows[j, first + nz.size] = -1
    return rows.reshape(-1)


def columns_from_lists(gy, rows, segment):
    """gyᵀ [N, M] rebuilt from compact_columns' lists of gy [M, N]: gy's
    values at the listed rows, 0 elsewhere."""
    gy = np.asarray(gy, dtype=np.float64)
    m, n = gy.shape
    rows = np.asarray(rows).reshape(n, m).astype(np.int64)
    gy_t = np.zeros((n, m))
    for j in range(n):
        for first in range(0, m, segment):
            last = min(first + segment, m)
            seg = rows[j, first:last]
            ends = np.flatnonzero(seg == -1)
            listed = seg[:ends[0] if ends.size else seg.size]
            if (np.any(listed < first) or np.any(listed >= last)
                    or np.any(np.diff(listed) <= 0)):
                raise RefError(f"compact_columns: column {j} lists rows "
                               f"outside [{first}, {last}) or out of order")
            gy_t[j, listed] = gy[listed, j]
    return gy_t


def unpack_bits(words, count):
    """u32 words -> the first `count` spikes (0/1) they hold."""
    w = np.asarray(words, dtype=np.float64).reshape(-1).astype(np.uint64)
    bits = (w[:, None] >> np.arange(32, dtype=np.uint64)) & np.uint64(1)
    return bits.reshape(-1)[:count].astype(np.float64)
