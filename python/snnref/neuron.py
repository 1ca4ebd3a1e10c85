"""The neuron scan and its BPTT (DESIGN §2), in float64.

    H[t] = V[t-1] + k (v_leak - V[t-1]) + c X[t]
    S[t] = Θ(H[t] - v_th)            (H >= v_th, or H > v_th when strict)
    hard: V[t] = H[t] (1 - S[t]) + v_reset S[t];   soft: V[t] = H[t] - v_th S[t]
    V[-1] = v_init (default v_reset for hard reset, 0 for soft)

`if` is lif with k = 0; `li` outputs H and never resets; `cuba_lif` feeds
I[t] = I[t-1] - k_syn I[t-1] + c_syn X[t] (I[-1] = i_init) in as X;
`plif` has k = sigmoid(w) and c = k (decay_input) or 1.

Backward, t = T-1..0, sg = σ'(H - v_th) (0 where H < theta_grad):
    dV/dH = hard: (1 - S) + (v_reset - H) sg;  soft: 1 - v_th sg
            (detach_reset: 1 - S, resp. 1)
    gH = gS sg + gV dV/dH;  gX = c gH;  gV <- gH (1 - k)

`smooth=True` replaces Θ by the surrogate's primitive σ in the forward, so
that the same backward is the exact gradient (finite-difference checks);
`reset_spikes` freezes the S used by the reset (what detach_reset means).
"""

import numpy as np

from .errors import RefError
from .surrogate import Surrogate

MODELS = ("lif", "if", "plif", "li", "cuba_lif")


def _sigmoid(w):
    return 1.0 / (1.0 + np.exp(-w))


class Neuron:
    """One neuron layer's parameters, each a float64 array of F values."""

    def __init__(self, model="lif", features=1, k=0.5, c=0.5, v_leak=0.0,
                 v_th=1.0, v_reset=0.0, v_init=None, reset="hard",
                 strict=False, detach_reset=False, surrogate=None,
                 k_syn=0.5, c_syn=1.0, i_init=0.0, plif_w=None,
                 decay_input=True):
        if model not in MODELS:
            raise RefError(f"unknown neuron model '{model}' (expected "
                           + ", ".join(MODELS) + ")")
        if reset not in ("hard", "soft"):
            raise RefError(f"'reset' must be hard or soft, not '{reset}'")
        self.model, self.F = model, int(features)
        self.reset, self.strict = reset, bool(strict)
        self.detach_reset = bool(detach_reset)
        self.surrogate = surrogate if isinstance(surrogate, Surrogate) \
            else Surrogate.from_attr(surrogate)
        self.decay_input = bool(decay_input)
        p = self._per_feature
        self.v_leak, self.v_th, self.v_reset = p(v_leak), p(v_th), p(v_reset)
        if v_init is None:
            v_init = self.v_reset if reset == "hard" else 0.0
        self.v_init = p(v_init)
        self.k_syn, self.c_syn, self.i_init = p(k_syn), p(c_syn), p(i_init)
        self.plif_w = None
        if model == "plif":
            if plif_w is None:
                raise RefError("plif needs its weight plif_w (k = sigmoid(w))")
            self.plif_w = np.asarray(plif_w, dtype=np.float64).reshape(-1)
            if self.plif_w.size not in (1, self.F):
                raise RefError(f"plif_w has {self.plif_w.size} values; "
                               f"expected 1 or {self.F}")
            self.k = p(_sigmoid(self.plif_w))
            self.c = self.k.copy() if self.decay_input else p(1.0)
        else:
            self.k = p(0.0 if model == "if" else k)
            self.c = p(c)

    def _per_feature(self, v):
        a = np.asarray(v, dtype=np.float64).reshape(-1)
        if a.size == 1:
            return np.full(self.F, a[0])
        if a.size != self.F:
            raise RefError(f"a neuron parameter has {a.size} values; expected "
                           f"1 or {self.F} (one per feature)")
        return a.copy()

    # -- pieces shared by forward and backward --------------------------------
    def spikes(self, h, smooth=False):
        u = h - self.v_th
        if smooth:
            return self.surrogate.primitive(u)
        return (u > 0 if self.strict else u >= 0).astype(np.float64)

    def after_reset(self, h, s):
        if self.reset == "hard":
            return h * (1.0 - s) + self.v_reset * s
        return h - self.v_th * s

    def _view(self, x):
        x = np.asarray(x, dtype=np.float64)
        T = x.shape[0]
        n = x.size // max(T, 1)
        if T == 0 or n % self.F:
            raise RefError(f"neuron: input {list(x.shape)} is not [T, B*{self.F}]")
        return x.reshape(T, n // self.F, self.F)

    def _dvdh(self, h, sg, smooth):
        """dV/dH of the reset, given the surrogate derivative sg at h."""
        if self.reset == "hard":
            dvdh = 1.0 - self.spikes(h, smooth)
            return dvdh if self.detach_reset else dvdh + (self.v_reset - h) * sg
        return np.ones_like(h) if self.detach_reset else 1.0 - self.v_th * sg

    # -- forward ---------------------------------------------------------------
    def forward(self, x, smooth=False, reset_spikes=None):
        """Returns (out, h, i): out = S (H for li), h = H, i = I (cuba) or None,
        all shaped like x."""
        return self.forward_from(x, None, smooth, reset_spikes)[:3]

    def initial_state(self, batch):
        """(i, v) as one process starts them: [B, F] each."""
        return (np.broadcast_to(self.i_init, (batch, self.F)).copy(),
                np.broadcast_to(self.v_init, (batch, self.F)).copy())

    def forward_from(self, x, state, smooth=False, reset_spikes=None):
        """forward starting from `state` = (i, v) ([B, F] each; None: the
        initial state), as a rank of a time split does. Returns (out, h, i,
        final_state) with final_state = (i, v) after the last step."""
        shape = np.shape(x)
        x = self._view(x)
        T, B, F = x.shape
        cur, v = self.initial_state(B) if state is None else (
            np.asarray(state[0], dtype=np.float64).reshape(B, F).copy(),
            np.asarray(state[1], dtype=np.float64).reshape(B, F).copy())
        out, hs = np.empty_like(x), np.empty_like(x)
        isaved = np.empty_like(x) if self.model == "cuba_lif" else None
        rs = None if reset_spikes is None else self._view(reset_spikes)
        for t in range(T):
            inp = x[t]
            if isaved is not None:
                cur = cur - self.k_syn * cur + self.c_syn * inp
                isaved[t] = cur
                inp = cur
            h = v + self.k * (self.v_leak - v) + self.c * inp
            hs[t] = h
            if self.model == "li":
                out[t] = v = h
                continue
            s = self.spikes(h, smooth)
            out[t] = s
            v = self.after_reset(h, s if rs is None else rs[t])
        i_out = None if isaved is None else isaved.reshape(shape)
        return out.reshape(shape), hs.reshape(shape), i_out, (cur, v)

    # -- one step of a recurrent layer (unrolled loops) ------------------------
    def step(self, x, v, smooth=False, i=None):
        """One step from the membrane v (and cuba's current i):
        (out, v_next, h), and i_next last for cuba; li's out is h."""
        if self.model not in ("lif", "if", "plif", "li", "cuba_lif"):
            raise RefError(f"no step form for {self.model} in snnref")
        shape = np.shape(x)
        x = np.asarray(x, dtype=np.float64).reshape(-1, self.F)
        v = np.asarray(v, dtype=np.float64).reshape(-1, self.F)
        if self.model == "cuba_lif":
            i = np.asarray(i, dtype=np.float64).reshape(-1, self.F)
            x = i - self.k_syn * i + self.c_syn * x
            out = self.step_lif(x, v, smooth, shape)
            return out + (x.reshape(shape),)
        return self.step_lif(x, v, smooth, shape)

    def step_lif(self, x, v, smooth=False, shape=None):
        shape = shape if shape is not None else x.shape
        h = v + self.k * (self.v_leak - v) + self.c * x
        if self.model == "li":
            return h.reshape(shape), h.reshape(shape), h.reshape(shape)
        s = self.spikes(h, smooth)
        return (s.reshape(shape), self.after_reset(h, s).reshape(shape),
                h.reshape(shape))

    def step_backward(self, gs, gv_next, h, smooth=False, gi_next=None,
                      v_before=None):
        """Gradients (input, previous membrane) of one step from those of its
        output and of the next membrane; for cuba also of the next current,
        and the previous current's gradient comes last; for plif (v_before:
        the membrane before the step) the weight's gradient comes last."""
        shape = np.shape(h)
        gs, gv_next, h = (np.asarray(a, dtype=np.float64).reshape(-1, self.F)
                          for a in (gs, gv_next, h))
        if self.model == "li":
            gh = gs + gv_next
        else:
            sg = self.surrogate.grad(h - self.v_th, h)
            gh = gs * sg + gv_next * self._dvdh(h, sg, smooth)
        gin = self.c * gh
        gv = (gh * (1.0 - self.k)).reshape(shape)
        if self.model == "plif":
            vb = np.asarray(v_before, dtype=np.float64).reshape(-1, self.F)
            # ∂H/∂k with V fixed: (v_leak - V) + X (decay_input: c = k).
            dk = self.v_leak - vb
            if self.decay_input:
                dk = dk + (h - vb - self.k * (self.v_leak - vb)) / self.k
            gw = (gh * dk).sum(axis=0) * self.k * (1.0 - self.k)
            if self.plif_w.size == 1:
                gw = np.array([gw.sum()])
            return gin.reshape(shape), gv, gw
        if self.model == "cuba_lif":
            g = gin + np.asarray(gi_next, dtype=np.float64).reshape(-1, self.F)
            return ((self.c_syn * g).reshape(shape), gv,
                    (g * (1.0 - self.k_syn)).reshape(shape))
        return gin.reshape(shape), gv

    # -- backward --------------------------------------------------------------
    def backward(self, gs, h, smooth=False):
        """BPTT from the output gradient gs and the saved H. Returns (gx, gw):
        gw is the gradient of plif_w (same size), None for other models."""
        return self.backward_from(gs, h, None, None, smooth)[:2]

    def backward_from(self, gs, h, grad_final, state, smooth=False):
        """backward of forward_from: grad_final = the gradients (gi, gv) of
        its final state (None: zeros, as at the end of the sequence), state
        the (i, v) it started from (None: the initial state). Returns (gx,
        gw, grad_initial) with grad_initial = (gi, gv) of the starting
        state: what a rank of a time split hands to the previous rank."""
        shape = np.shape(h)
        gs, h = self._view(gs), self._view(h)
        T, B, F = h.shape
        gx = np.empty_like(h)
        gi, gv = (np.zeros((B, F)), np.zeros((B, F))) if grad_final is None \
            else (np.asarray(grad_final[0], dtype=np.float64).reshape(B, F).copy(),
                  np.asarray(grad_final[1], dtype=np.float64).reshape(B, F).copy())
        v_start = self.initial_state(B)[1] if state is None else \
            np.asarray(state[1], dtype=np.float64).reshape(B, F)
        gk = np.zeros(F)
        for t in range(T - 1, -1, -1):
            ht = h[t]
            if self.model == "li":
                gh = gs[t] + gv
            else:
                sg = self.surrogate.grad(ht - self.v_th, ht)
                gh = gs[t] * sg + gv * self._dvdh(ht, sg, smooth)
            if self.model == "plif":
                if t > 0:
                    hp = h[t - 1]
                    vprev = self.after_reset(hp, self.spikes(hp, smooth))
                else:
                    vprev = v_start
                # ∂H/∂k with V[t-1] fixed: (v_leak - V) + X (decay_input) or
                # (v_leak - V); with decay_input c X = H - V - k (v_leak - V).
                dk = self.v_leak - vprev
                if self.decay_input:
                    dk = dk + (ht - vprev - self.k * (self.v_leak - vprev)) / self.k
                gk += (gh * dk).sum(axis=0)
            gin = self.c * gh
            gv = gh * (1.0 - self.k)
            if self.model == "cuba_lif":
                g = gin + gi
                gin = self.c_syn * g
                gi = g * (1.0 - self.k_syn)
            gx[t] = gin
        gw = None
        if self.model == "plif":
            gw = gk * self.k * (1.0 - self.k)
            if self.plif_w.size == 1:
                gw = np.array([gw.sum()])
        return gx.reshape(shape), gw, (gi, gv)
