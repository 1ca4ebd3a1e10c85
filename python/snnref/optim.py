"""torch.optim.SGD and Adam/AdamW update rules, in float64.

SGD (step >= 1):  g = grad + wd p;  buf = g at step 1, else
                  momentum buf + (1 - dampening) g;  g = g + momentum buf
                  (nesterov) or buf;  p -= lr g
Adam:             decoupled (AdamW): p *= 1 - lr wd, else g = grad + wd p;
                  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
                  p -= lr/(1-b1^t) m / (sqrt(v)/sqrt(1-b2^t) + eps)
"""

import numpy as np

from .errors import RefError


def sgd(param, grad, buf, lr, step, momentum=0.0, dampening=0.0,
        weight_decay=0.0, nesterov=False):
    """Returns (new_param, new_buf); buf is None without momentum."""
    if nesterov and (momentum <= 0 or dampening != 0):
        raise RefError("sgd: Nesterov momentum requires a momentum and zero "
                       "dampening")
    g = grad + weight_decay * param if weight_decay else grad
    if momentum:
        if buf is None:
            raise RefError("sgd with momentum needs its momentum buffer")
        buf = g.copy() if step <= 1 else momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf
    return param - lr * g, buf


def adam(param, grad, m, v, lr, step, beta1=0.9, beta2=0.999, eps=1e-8,
         weight_decay=0.0, decoupled=False):
    """Returns (new_param, new_m, new_v)."""
    if step < 1:
        raise RefError("adam: the step counter starts at 1")
    p, g = param, grad
    if weight_decay:
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    c1, c2 = 1 - beta1 ** step, 1 - beta2 ** step
    p = p - (lr / c1) * m / (np.sqrt(v) / np.sqrt(c2) + eps)
    return p, m, v
