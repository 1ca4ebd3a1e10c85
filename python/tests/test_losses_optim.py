import numpy as np
import pytest

from snnref import RefError, losses, optim
from snnref.gradcheck import check_grad


@pytest.mark.parametrize("kind", losses.KINDS)
def test_loss_values_and_gradients(kind, rng):
    T, B, C = 5, 4, 6
    y = rng.uniform(0, 1, (T, B, C))
    labels = rng.integers(0, C, B)
    loss, gy, correct = losses.rate_loss(kind, y, labels)
    m = y.max(0) if kind == "loss_ce_membrane_max" else y.mean(0)
    if kind == "loss_mse_rate":
        expected = np.mean((m - np.eye(C)[labels]) ** 2)
    else:
        p = np.exp(m) / np.exp(m).sum(1, keepdims=True)
        expected = -np.mean(np.log(p[np.arange(B), labels]))
    assert loss == pytest.approx(expected, rel=1e-12)
    assert correct == float(np.sum(np.argmax(m, 1) == labels))
    assert check_grad(lambda v: losses.rate_loss(kind, v, labels)[0], y, gy) < 1e-7


def test_max_over_time_gradient_goes_to_the_first_maximum():
    y = np.zeros((3, 1, 2))
    y[1, 0, 0] = y[2, 0, 0] = 2.0  # a tie: the first step wins
    y[0, 0, 1] = 1.0
    _, gy, _ = losses.rate_loss("loss_ce_membrane_max", y, [1])
    assert gy[1, 0, 0] > 0 and gy[2, 0, 0] == 0 and gy[0, 0, 0] == 0
    assert gy[0, 0, 1] < 0 and not gy[1:, 0, 1].any()


def test_loss_rejects_bad_labels():
    with pytest.raises(RefError, match="outside"):
        losses.rate_loss("loss_ce_rate", np.zeros((2, 3, 4)), [0, 4, 1])
    with pytest.raises(RefError, match="labels for a batch"):
        losses.rate_loss("loss_ce_rate", np.zeros((2, 3, 4)), [0, 1])


def test_sgd_momentum_nesterov_weight_decay(rng):
    p0, g1, g2 = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
    lr, mu, wd = 0.1, 0.9, 0.01
    p1, buf = optim.sgd(p0, g1, np.zeros(3), lr, 1, momentum=mu, weight_decay=wd)
    d1 = g1 + wd * p0
    np.testing.assert_allclose(p1, p0 - lr * d1, rtol=1e-12)  # buf = g at step 1
    p2, _ = optim.sgd(p1, g2, buf, lr, 2, momentum=mu, weight_decay=wd,
                      nesterov=True)
    d2 = g2 + wd * p1
    b2 = mu * d1 + d2
    np.testing.assert_allclose(p2, p1 - lr * (d2 + mu * b2), rtol=1e-12)
    with pytest.raises(RefError, match="Nesterov"):
        optim.sgd(p0, g1, buf, lr, 1, momentum=0.9, dampening=0.1, nesterov=True)


@pytest.mark.parametrize("decoupled", [False, True])
def test_adam_two_steps(decoupled, rng):
    p0, g1, g2 = rng.normal(size=4), rng.normal(size=4), rng.normal(size=4)
    lr, b1, b2, eps, wd = 1e-2, 0.8, 0.95, 1e-8, 0.05
    kw = dict(beta1=b1, beta2=b2, eps=eps, weight_decay=wd, decoupled=decoupled)
    p1, m, v = optim.adam(p0, g1, np.zeros(4), np.zeros(4), lr, 1, **kw)
    p2, _, _ = optim.adam(p1, g2, m, v, lr, 2, **kw)
    # The same two steps, written out.
    q, mm, vv = p0.copy(), 0.0, 0.0
    for t, g in ((1, g1), (2, g2)):
        if decoupled:
            q = q - lr * wd * q
        else:
            g = g + wd * q
        mm = b1 * mm + (1 - b1) * g
        vv = b2 * vv + (1 - b2) * g ** 2
        q = q - lr * (mm / (1 - b1 ** t)) / (np.sqrt(vv / (1 - b2 ** t)) + eps)
        if t == 1:
            np.testing.assert_allclose(p1, q, rtol=1e-10)
    np.testing.assert_allclose(p2, q, rtol=1e-10)
