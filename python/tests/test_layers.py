"""Layers against naive loops (forward) and central differences (backward)."""

import numpy as np
import pytest

from snnref import RefError, layers
from snnref.gradcheck import check_grad


def naive_conv(x, w, b, stride, pad, dil, groups):
    M, C, H, W = x.shape
    O, Cg, KH, KW = w.shape
    OH = (H + 2 * pad[0] - dil[0] * (KH - 1) - 1) // stride[0] + 1
    OW = (W + 2 * pad[1] - dil[1] * (KW - 1) - 1) // stride[1] + 1
    y = np.zeros((M, O, OH, OW))
    og = O // groups
    for m in range(M):
        for o in range(O):
            g = o // og
            for oh in range(OH):
                for ow in range(OW):
                    acc = 0.0 if b is None else b[o]
                    for c in range(Cg):
                        for i in range(KH):
                            for j in range(KW):
                                r = oh * stride[0] - pad[0] + i * dil[0]
                                q = ow * stride[1] - pad[1] + j * dil[1]
                                if 0 <= r < H and 0 <= q < W:
                                    acc += x[m, g * Cg + c, r, q] * w[o, c, i, j]
                    y[m, o, oh, ow] = acc
    return y


CONVS = [((1, 1), (0, 0), (1, 1), 1), ((2, 1), (1, 2), (1, 1), 1),
         ((1, 1), (1, 1), (2, 2), 2), ((2, 2), (2, 1), (1, 2), 4)]


@pytest.mark.parametrize("stride,pad,dil,groups", CONVS)
def test_conv2d_forward(stride, pad, dil, groups, rng):
    x = rng.normal(size=(2, 4, 7, 6))
    w = rng.normal(size=(4, 4 // groups, 3, 2))
    b = rng.normal(size=4)
    np.testing.assert_allclose(layers.conv2d(x, w, b, stride, pad, dil, groups),
                               naive_conv(x, w, b, stride, pad, dil, groups),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("stride,pad,dil,groups", CONVS)
def test_conv2d_backward(stride, pad, dil, groups, rng):
    x = rng.normal(size=(2, 4, 6, 5))
    w = rng.normal(size=(4, 4 // groups, 2, 3))
    b = rng.normal(size=4)
    geo = dict(stride=stride, padding=pad, dilation=dil, groups=groups)
    r = rng.normal(size=layers.conv2d(x, w, b, **geo).shape)
    gx, gw, gb = layers.conv2d_bwd(r, x, w, has_bias=True, **geo)
    assert check_grad(lambda v: (r * layers.conv2d(v, w, b, **geo)).sum(), x, gx) < 1e-7
    assert check_grad(lambda v: (r * layers.conv2d(x, v, b, **geo)).sum(), w, gw) < 1e-7
    assert check_grad(lambda v: (r * layers.conv2d(x, w, v, **geo)).sum(), b, gb) < 1e-7


@pytest.mark.parametrize("stride,pad,dil", [c[:3] for c in CONVS])
def test_conv2d_channels_last(stride, pad, dil, rng):
    """NHWC x [M, H, W, C] and w [O, KH, KW, C]: the naive NCHW loops on the
    permuted tensors; the backward by central differences."""
    x = rng.normal(size=(2, 7, 6, 3))
    w = rng.normal(size=(4, 3, 2, 3))
    b = rng.normal(size=4)
    geo = dict(stride=stride, padding=pad, dilation=dil, channels_last=True)
    y = layers.conv2d(x, w, b, **geo)
    ref = naive_conv(x.transpose(0, 3, 1, 2), w.transpose(0, 3, 1, 2), b, stride,
                     pad, dil, 1)
    np.testing.assert_allclose(y, ref.transpose(0, 2, 3, 1), rtol=1e-12, atol=1e-12)
    r = rng.normal(size=y.shape)
    gx, gw, gb = layers.conv2d_bwd(r, x, w, has_bias=True, **geo)
    assert check_grad(lambda v: (r * layers.conv2d(v, w, b, **geo)).sum(), x, gx) < 1e-7
    assert check_grad(lambda v: (r * layers.conv2d(x, v, b, **geo)).sum(), w, gw) < 1e-7
    assert check_grad(lambda v: (r * layers.conv2d(x, w, v, **geo)).sum(), b, gb) < 1e-7


def test_conv2d_rejects_bad_groups(rng):
    with pytest.raises(RefError, match="groups"):
        layers.conv2d(np.zeros((1, 3, 4, 4)), np.zeros((2, 3, 1, 1)), groups=2)
    with pytest.raises(RefError, match="does not fit"):
        layers.conv2d(np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 3, 3)))


def test_linear_backward(rng):
    x, w, b = rng.normal(size=(5, 4)), rng.normal(size=(3, 4)), rng.normal(size=3)
    r = rng.normal(size=(5, 3))
    gx, gw, gb = layers.linear_bwd(r, x, w, has_bias=True)
    assert check_grad(lambda v: (r * layers.linear(v, w, b)).sum(), x, gx) < 1e-8
    assert check_grad(lambda v: (r * layers.linear(x, v, b)).sum(), w, gw) < 1e-8
    assert check_grad(lambda v: (r * layers.linear(x, w, v)).sum(), b, gb) < 1e-8


def naive_pool(kind, x, k, s, p):
    M, C, H, W = x.shape
    OH, OW = (H + 2 * p[0] - k[0]) // s[0] + 1, (W + 2 * p[1] - k[1]) // s[1] + 1
    y = np.zeros((M, C, OH, OW))
    for oh in range(OH):
        for ow in range(OW):
            vals = []
            for i in range(k[0]):
                for j in range(k[1]):
                    r, q = oh * s[0] - p[0] + i, ow * s[1] - p[1] + j
                    inside = 0 <= r < H and 0 <= q < W
                    vals.append(x[:, :, r, q] if inside else
                                np.full((M, C), -np.inf if kind == "max" else 0.0))
            v = np.stack(vals)
            y[:, :, oh, ow] = {"max": v.max(0), "sum": v.sum(0),
                               "avg": v.sum(0) / (k[0] * k[1])}[kind]
    return y


POOLS = [((2, 2), (2, 2), (0, 0)), ((3, 3), (2, 1), (1, 1)), ((3, 2), (1, 2), (1, 0))]


@pytest.mark.parametrize("kind", ["avg", "sum", "max"])
@pytest.mark.parametrize("k,s,p", POOLS)
def test_pools(kind, k, s, p, rng):
    x = rng.normal(size=(2, 3, 7, 6))
    y = layers.pool2d(kind, x, k, s, p)
    np.testing.assert_allclose(y, naive_pool(kind, x, k, s, p), rtol=1e-12)
    r = rng.normal(size=y.shape)
    gx = layers.pool2d_bwd(kind, r, x.shape, k, s, p, x=x)
    assert check_grad(lambda v: (r * layers.pool2d(kind, v, k, s, p)).sum(), x, gx) < 1e-7


def test_max_pool_ties_go_to_the_first_maximum():
    x = np.array([[[[1.0, 1.0], [0.0, 1.0]]]])  # spikes tie all the time
    gx = layers.pool2d_bwd("max", np.ones((1, 1, 1, 1)), x.shape, (2, 2), (2, 2),
                           (0, 0), x=x)
    np.testing.assert_array_equal(gx[0, 0], [[1.0, 0.0], [0.0, 0.0]])


def test_batch_norm_training(rng):
    M, C, H, W = 6, 3, 4, 2
    x = rng.normal(1.0, 2.0, (M, C, H, W))
    g, b = rng.normal(1, 0.3, C), rng.normal(0, 0.3, C)
    rm, rv = rng.normal(size=C), rng.uniform(0.5, 2, C)
    y, rm2, rv2, mu, inv = layers.batch_norm(x, g, b, rm, rv, eps=1e-5,
                                             momentum=0.1, training=True)
    xc = x.transpose(1, 0, 2, 3).reshape(C, -1)
    np.testing.assert_allclose(mu, xc.mean(1), rtol=1e-12)
    np.testing.assert_allclose(inv, 1 / np.sqrt(xc.var(1) + 1e-5), rtol=1e-12)
    np.testing.assert_allclose(rm2, 0.9 * rm + 0.1 * xc.mean(1), rtol=1e-12)
    np.testing.assert_allclose(rv2, 0.9 * rv + 0.1 * xc.var(1, ddof=1), rtol=1e-12)
    r = rng.normal(size=x.shape)
    gx, gg, gb = layers.batch_norm_bwd(r, x, g, mu, inv)
    fwd = lambda xx, gg_, bb: (r * layers.batch_norm(xx, gg_, bb, rm, rv,
                                                     training=True)[0]).sum()
    assert check_grad(lambda v: fwd(v, g, b), x, gx) < 1e-6
    assert check_grad(lambda v: fwd(x, v, b), g, gg) < 1e-6
    assert check_grad(lambda v: fwd(x, g, v), b, gb) < 1e-6


def test_batch_norm_eval_and_rank(rng):
    x = rng.normal(size=(5, 4))  # spatial_rank 0: [rows, C]
    g, b, rm, rv = rng.normal(size=4), rng.normal(size=4), rng.normal(size=4), \
        rng.uniform(0.5, 2, 4)
    y = layers.batch_norm(x, g, b, rm, rv, eps=1e-3, spatial_rank=0)[0]
    np.testing.assert_allclose(y, (x - rm) / np.sqrt(rv + 1e-3) * g + b, rtol=1e-12)
    with pytest.raises(RefError, match="channels"):
        layers.batch_norm(x, g[:3], b[:3], rm[:3], rv[:3], spatial_rank=0)


def test_dropout_with_mask(rng):
    x = rng.normal(size=(4, 5))
    mask = (rng.uniform(size=x.shape) > 0.3).astype(float)
    y = layers.dropout(x, mask, 0.3)
    np.testing.assert_allclose(y, np.where(mask > 0, x / 0.7, 0.0), rtol=1e-12)
    r = rng.normal(size=x.shape)
    assert check_grad(lambda v: (r * layers.dropout(v, mask, 0.3)).sum(), x,
                      layers.dropout_bwd(r, mask, 0.3)) < 1e-8
    with pytest.raises(RefError, match="'p'"):
        layers.dropout(x, mask, 1.0)


@pytest.mark.parametrize("n", [1, 31, 32, 33, 100, 257])
def test_pack_bits_round_trip(n, rng):
    s = (rng.random(n) < 0.3).astype(np.float64)
    words = layers.pack_bits(s)
    assert words.shape == (-(-n // 32),)
    assert np.array_equal(layers.unpack_bits(words, n), s)


def test_pack_bits_layout():
    # Element 32 w + j is bit j of word w.
    s = np.zeros(40)
    s[[0, 5, 31, 32, 39]] = 1
    words = layers.pack_bits(s)
    assert list(words) == [float((1 << 0) | (1 << 5) | (1 << 31)),
                           float((1 << 0) | (1 << 7))]


def test_pack_bits_refuses_non_spikes():
    with pytest.raises(RefError, match="values other than 0 and 1"):
        layers.pack_bits(np.array([0.0, 0.5, 1.0]))


def test_pack_bits_occupancy():
    words = layers.pack_bits(np.array([0.0, 0.5, 2.0, 0.0, -1.0]), occupancy=True)
    assert list(words) == [float(0b10110)]


@pytest.mark.parametrize("values", [False, True])
def test_event_weight_grad_bits(values, rng):
    # gw = gy^T x over rows that are not word aligned (K = 37).
    m, k, n = 9, 37, 5
    x = (rng.random((m, k)) < 0.2) * (rng.choice([0.5, 2.0], (m, k)) if values else 1.0)
    gy_t = rng.normal(size=(n, m)) * (rng.random((n, m)) < 0.5)
    words = layers.pack_bits(x, occupancy=values)
    gw = layers.event_weight_grad_bits(gy_t, words, k, x if values else None)
    np.testing.assert_allclose(gw, gy_t @ x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("values", [False, True])
def test_event_weight_grad_lists(values, rng):
    # gw = gy^T x from x's row lists, an empty row and a full one among them.
    m, k, n = 9, 37, 5
    x = (rng.random((m, k)) < 0.2) * (rng.choice([0.5, 2.0], (m, k)) if values else 1.0)
    x[2] = 0.0
    x[4] = 1.0
    gy_t = rng.normal(size=(n, m)) * (rng.random((n, m)) < 0.5)
    columns, vals = layers.compact_rows(x)
    assert columns[2 * k] == -1 and list(columns[4 * k:5 * k]) == list(range(k))
    row = np.flatnonzero(x[0])
    assert list(columns[:row.size + 1]) == list(row) + [-1]
    gw = layers.event_weight_grad_lists(gy_t, columns, k,
                                        vals if values else None)
    np.testing.assert_allclose(gw, gy_t @ x, rtol=1e-12, atol=1e-12)


def test_event_weight_grad_lists_refuses_bad_lists():
    with pytest.raises(layers.RefError, match="outside"):
        layers.event_weight_grad_lists(np.ones((1, 2)),
                                       np.array([7.0, -1, 0, 0, 0, 0, 0, 0]), 4)
    with pytest.raises(layers.RefError, match="twice"):
        layers.event_weight_grad_lists(np.ones((1, 2)),
                                       np.array([1.0, 1, -1, 0, -1, 0, 0, 0]), 4)


def test_compact_columns(rng):
    # gy [11, 6] in segments of 4 rows (the last has 3): an empty column, a
    # full one, and a full segment (no -1 after it).
    m, n, segment = 11, 6, 4
    gy = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.4)
    gy[:, 1] = 0.0
    gy[:, 2] = 1.5
    gy[4:8, 3] = 2.0
    rows = layers.compact_columns(gy, segment).reshape(n, m)
    assert list(rows[1, [0, 4, 8]]) == [-1, -1, -1]
    assert list(rows[2]) == list(range(m))
    assert list(rows[3, 4:8]) == [4, 5, 6, 7]
    nz = np.flatnonzero(gy[0:4, 0])
    assert list(rows[0, :nz.size]) == list(nz)
    if nz.size < 4:
        assert rows[0, nz.size] == -1
    np.testing.assert_array_equal(layers.columns_from_lists(gy, rows, segment),
                                  gy.T)


def test_columns_from_lists_refuses_bad_lists():
    gy = np.ones((4, 1))
    with pytest.raises(layers.RefError, match="outside"):
        layers.columns_from_lists(gy, np.array([2.0, -1, 0, 0]), 2)
    with pytest.raises(layers.RefError, match="out of order"):
        layers.columns_from_lists(gy, np.array([1.0, 0, -1, 0]), 2)
