"""The manifest interpreter: loads a compiled module (docs/artifact-format.md)
and runs its programs op by op in float64.

Storage follows the contract: a tensor with `alias_of` shares the storage of
the tensor it names; gradients overwrite their outputs unless the op says
`accumulate: true`. Dropout in training mode takes its keep mask from the
caller (`masks`), since the runtime's random stream is not part of the spec.
"""

import json
import os

import numpy as np

from . import layers, losses, optim
from .errors import RefError
from .neuron import Neuron
from .tensorio import read_safetensors

PROGRAMS = ("infer", "train_forward", "backward", "update")
NEURON_PARAMS = ("k", "c", "v_leak", "v_th", "v_reset", "v_init",
                 "k_syn", "c_syn", "i_init")


class OpError(RefError):
    pass


def round_to_bf16(v):
    """The float32 value of v rounded to bfloat16 (nearest, ties to even):
    what a bf16 tensor of the runtime holds."""
    bits = np.asarray(v, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


class Module:
    def __init__(self, source):
        """source: a .snnmod directory, a manifest.json path or a dict."""
        self.dir = None
        if isinstance(source, dict):
            m, where = source, "<manifest>"
        else:
            path = source
            if os.path.isdir(path):
                self.dir, path = path, os.path.join(path, "manifest.json")
            else:
                self.dir = os.path.dirname(path)
            where = path
            try:
                with open(path) as f:
                    m = json.load(f)
            except OSError as e:
                raise RefError(f"{path}: cannot read the manifest: {e.strerror}"
                               " (is this a compiled .snnmod directory?)") from None
            except json.JSONDecodeError as e:
                raise RefError(f"{path}: not valid JSON: {e}") from None
        self.where = where
        if m.get("format") != "snn-module" or m.get("version") != 1:
            raise RefError(f"{where}: expected format 'snn-module' version 1, "
                           f"got {m.get('format')!r} version {m.get('version')!r}")
        self.m = m
        self.tensors = {}
        for t in m.get("tensors", []):
            try:
                tid, shape = int(t["id"]), [int(d) for d in t["shape"]]
            except (KeyError, TypeError, ValueError):
                raise RefError(f"{where}: tensor entry {t!r} needs an integer "
                               "'id' and a 'shape' list") from None
            if tid in self.tensors:
                raise RefError(f"{where}: tensor id {tid} appears twice")
            self.tensors[tid] = dict(t, shape=shape)
        self.by_name = {t["name"]: i for i, t in self.tensors.items() if "name" in t}
        for tid, t in self.tensors.items():
            root = self.root(tid)
            if self.numel(root) != self.numel(tid):
                raise RefError(f"{where}: tensor '{t.get('name')}' aliases "
                               f"tensor {root} with a different element count")
        self.programs = m.get("programs", {})
        self.store = {}
        # Per layer (an op's "layer"), its s/v/h of the last run: arrays
        # [T, B, ...] for scans, lists of steps for neuron_step ops.
        self.traces = {}
        self.masks = {}
        self.step = 0

    # -- tensors -----------------------------------------------------------
    def info(self, tid):
        if tid not in self.tensors:
            raise RefError(f"{self.where}: no tensor with id {tid}")
        return self.tensors[tid]

    def root(self, tid):
        seen = set()
        while "alias_of" in self.info(tid):
            if tid in seen:
                raise RefError(f"{self.where}: alias_of cycle at tensor {tid}")
            seen.add(tid)
            tid = int(self.tensors[tid]["alias_of"])
        return tid

    def numel(self, tid):
        return int(np.prod(self.info(tid)["shape"], dtype=np.int64))

    def id_of(self, key):
        if isinstance(key, (int, np.integer)):
            self.info(int(key))
            return int(key)
        if key in ("input", "output", "labels", "loss", "correct") and key in self.m \
                and key not in self.by_name:
            return int(self.m[key])
        if key not in self.by_name:
            raise RefError(f"{self.where}: no tensor named '{key}'")
        return self.by_name[key]

    def get(self, key):
        tid = self.id_of(key)
        root = self.root(tid)
        if root not in self.store:
            t = self.info(tid)
            raise RefError(f"{self.where}: tensor '{t.get('name', tid)}' "
                           f"(id {tid}, role {t.get('role')}) is read before "
                           "it has a value")
        return self.store[root].reshape(self.info(tid)["shape"])

    def set(self, key, value, accumulate=False):
        tid = self.id_of(key)
        t, root = self.info(tid), self.root(tid)
        v = np.asarray(value, dtype=np.float64)
        if v.size != self.numel(tid):
            raise RefError(f"{self.where}: tensor '{t.get('name', tid)}' has "
                           f"shape {t['shape']}; a value of shape "
                           f"{list(v.shape)} does not fit")
        v = v.reshape(self.info(root)["shape"])
        if accumulate and root in self.store:
            v = self.store[root] + v
        if t.get("dtype") == "bf16":
            v = round_to_bf16(v)
        self.store[root] = v.copy()

    # -- initial values ------------------------------------------------------
    def initialize(self, weights=None, seed=0, require_given=False):
        """Every param/buffer/constant/optimizer_state from `weights` (by name)
        when given there, else from its `init`. With require_given, a random
        init is an error (the runtime's random stream cannot be reproduced)."""
        weights = dict(weights or {})
        file_values = None
        rng = np.random.default_rng(seed)
        for tid in sorted(self.tensors):
            t = self.tensors[tid]
            if "alias_of" in t or t.get("role") not in (
                    "param", "buffer", "constant", "optimizer_state"):
                continue
            name = t.get("name", str(tid))
            if name in weights:
                self.set(tid, weights.pop(name))
                continue
            init = t.get("init", {"kind": "zeros"})
            kind, shape = init.get("kind"), t["shape"]
            if kind == "file":
                if file_values is None:
                    file_values = self._init_file()
                if name not in file_values:
                    raise RefError(f"{self.where}: tensor '{name}' has init "
                                   "'file' but init.safetensors has no tensor "
                                   "of that name (recompile the module)")
                self.set(tid, file_values[name])
            elif kind == "zeros":
                self.set(tid, np.zeros(shape))
            elif kind == "ones":
                self.set(tid, np.ones(shape))
            elif kind == "constant":
                self.set(tid, np.full(shape, float(init["value"])))
            elif kind in ("uniform", "kaiming_uniform", "normal"):
                if require_given:
                    raise RefError(f"{self.where}: tensor '{name}' is randomly "
                                   f"initialized ({kind}); pass the weights the "
                                   "runtime used (a snn-run checkpoint, "
                                   "--weights) so both sides compute with the "
                                   "same values")
                if kind == "normal":
                    self.set(tid, rng.normal(0.0, float(init["std"]), shape))
                else:
                    b = float(init["bound"]) if kind == "uniform" else \
                        1.0 / np.sqrt(float(init["fan_in"]))
                    self.set(tid, rng.uniform(-b, b, shape))
            else:
                raise RefError(f"{self.where}: tensor '{name}': unknown init "
                               f"kind {kind!r}")
        unused = [n for n in weights if n not in self.by_name]
        if unused:
            raise RefError(f"{self.where}: the weights name tensors the module "
                           f"does not have: {', '.join(sorted(unused)[:5])}")
        for n, v in weights.items():
            self.set(n, v)

    def _init_file(self):
        path = os.path.join(self.dir or ".", "init.safetensors")
        if not os.path.exists(path):
            raise RefError(f"{path}: missing; the manifest has tensors with "
                           "init 'file' (recompile the module)")
        return read_safetensors(path)[0]

    # -- programs ------------------------------------------------------------
    def run(self, program, lr=None, step=None, smooth=False, masks=None):
        """Runs one program. `lr` is needed by `update`; `step` is the 1-based
        optimizer step (default: one more than the last update). `masks` maps
        a dropout mask tensor (id or name) to its keep mask."""
        if program not in self.programs:
            raise RefError(f"{self.where}: the module has no program "
                           f"'{program}' (it has: {', '.join(self.programs)})")
        for k, v in (masks or {}).items():
            self.set(k, v)
        self.traces = {}
        if program == "update":
            self.step = self.step + 1 if step is None else int(step)
            if lr is None:
                raise RefError("the update program needs a learning rate")
        for index, op in enumerate(self.programs[program]):
            try:
                _run_op(self, op, lr=lr, smooth=smooth)
            except OpError as e:
                raise RefError(f"{self.where}: program '{program}' op #{index} "
                               f"({op.get('op')}): {e}") from None

    def neuron_of(self, op):
        """The Neuron of a neuron/neuron_bwd op, parameters resolved."""
        return _neuron(self, op)

    def layer_traces(self):
        """{"<layer>.<s|v|h>": [T, B, ...]} of the last run (what snn-run
        --record writes); li layers have no s."""
        out = {}
        for layer, qs in self.traces.items():
            for q, v in qs.items():
                out[f"{layer}.{q}"] = np.stack(v) if isinstance(v, list) else v
        return out

    def _trace(self, op, s, v, h, step):
        layer = op.get("layer")
        if not isinstance(layer, str):
            return
        qs = self.traces.setdefault(layer, {})
        values = {"v": v, "h": h} if s is None else {"s": s, "v": v, "h": h}
        for q, val in values.items():
            val = np.array(val, dtype=np.float64)
            if step:
                qs.setdefault(q, []).append(val)
            else:
                qs[q] = val


# -- ops ---------------------------------------------------------------------
def _ids(op, key, lo, hi, what):
    ids = op.get(key, [])
    if not (lo <= len(ids) <= hi):
        raise OpError(f"expects {lo}..{hi} {what}, got {len(ids)}")
    return [int(i) for i in ids]


def _param_value(mod, op, name, default):
    v = op.get(name, default)
    if isinstance(v, dict):
        if "tensor" not in v:
            raise OpError(f"neuron parameter '{name}' must be a number or "
                          f"{{\"tensor\": id}}, got {v!r}")
        return mod.get(int(v["tensor"]))
    if v is not None and not isinstance(v, (int, float)):
        raise OpError(f"neuron parameter '{name}' must be a number or "
                      f"{{\"tensor\": id}}, got {v!r}")
    return v


def _neuron(mod, op):
    # A fused neuron_bwd reads the pooled gradient, or the gy of the thin
    # linear after it: its neurons are gx's.
    pooled_bwd = op.get("op") == "neuron_bwd" and (
        op.get("pool") is not None or op.get("linear_grad") is not None)
    x = mod.info(int(op["out"][0] if pooled_bwd else op["in"][0]))
    n = int(np.prod(x["shape"][1:], dtype=np.int64))
    F = int(op.get("features", n))
    if F <= 0 or n % F:
        raise OpError(f"'features' = {F} does not divide the {n} neurons of "
                      "each step")
    kw = {name: _param_value(mod, op, name, None) for name in NEURON_PARAMS}
    kw = {k: v for k, v in kw.items() if v is not None}
    plif_w = None
    if op.get("model") == "plif":
        w = op.get("plif_w")
        if not isinstance(w, dict) or "tensor" not in w:
            raise OpError("plif needs 'plif_w': {\"tensor\": id}")
        plif_w = mod.get(int(w["tensor"]))
    try:
        return Neuron(model=op.get("model", "lif"), features=F,
                      reset=op.get("reset", "hard"), strict=op.get("strict", False),
                      detach_reset=op.get("detach_reset", False),
                      surrogate=op.get("surrogate"), plif_w=plif_w,
                      decay_input=op.get("decay_input", True), **kw)
    except RefError as e:
        raise OpError(str(e)) from None


def _segment(op, key="segment"):
    """The positive row count `key` of a column-list op."""
    segment = op.get(key)
    if not isinstance(segment, int) or isinstance(segment, bool) or segment < 1:
        raise OpError(f"'{key}' must be a positive integer, got {segment!r}")
    return segment


def _rows(mod, tid, inner):
    """x viewed as [rows, *inner]."""
    return mod.get(tid).reshape((-1,) + tuple(inner))


def _planes_shape(shape, channels_last):
    """[C, H, W] of a pooling's [..., C, H, W] or [..., H, W, C] tensor."""
    if channels_last:
        h, w, c = shape[-3:]
        return (c, h, w)
    return tuple(shape[-3:])


def _planes(mod, tid, channels_last):
    """x as [rows, C, H, W] (channels last: transposed from [rows, H, W, C])."""
    shape = mod.info(tid)["shape"]
    if not channels_last:
        return _rows(mod, tid, shape[-3:])
    return np.moveaxis(_rows(mod, tid, shape[-3:]), -1, 1)


def _from_planes(y, channels_last):
    """[rows, C, H, W] back to the op's layout."""
    return np.moveaxis(y, 1, -1) if channels_last else y


def _window_attrs(op):
    kernel = op.get("kernel")
    if kernel is None:
        raise OpError("needs 'kernel'")
    return kernel, op.get("stride", kernel), op.get("padding", [0, 0])


def _rows_of(mod, op, x, count, flag):
    """A compaction's input as [rows, features]: x itself, or (op[flag]) the
    row bits a neuron kernel wrote in its place, `count` entries."""
    if not op.get(flag, False):
        return x.reshape(-1, x.shape[-1])
    k = int(op.get("features", 0))
    if k <= 0 or count % k:
        raise OpError(f"{op.get('op')} of bits needs 'features' dividing its "
                      "lists' length")
    return layers.unpack_bits(x, count).reshape(-1, k)


def _run_op(mod, op, lr, smooth):
    kind = op.get("op")
    count = op.get("spike_count") if kind in ("neuron", "neuron_bwd") else None
    if count is not None:
        # The layer counts its output for an event-driven layer: the same
        # function as the op without the count, then its density op.
        limit, decision = int(count["limit"]), int(count["decision"])
        bits = int(count["bits"]) if "bits" in count else None
        plain = {k: v for k, v in op.items() if k != "spike_count"}
        plain["in"] = [i for i in op.get("in", []) if int(i) != limit]
        plain["out"] = [i for i in op.get("out", [])
                        if int(i) not in (decision, bits)]
        _run_op(mod, plain, lr, smooth)
        if bits is not None:
            # A neuron backward's gx occupancy as row bits, for the
            # reader's compact_columns.
            mod.set(bits, layers.pack_bits(mod.get(int(plain["out"][0])),
                                           occupancy=True))
        _run_op(mod, count["density"], lr, smooth)
        return
    if kind == "kernel":
        # A generated kernel: what it computes is the list of ops `of`.
        of = op.get("of")
        if not isinstance(of, list) or not of:
            raise OpError("a kernel op needs the ops it computes ('of')")
        for sub in of:
            _run_op(mod, sub, lr, smooth)
        return
    acc = bool(op.get("accumulate", False))
    # A layer op's scratch tensors (its `columns`) are not results.
    scratch = {int(i) for i in op.get("scratch", [])}
    # A layer's fused time mean (--snn-fuse) is an output of its own.
    mean = op.get("time_mean") if kind == "neuron" else None
    if mean is not None:
        if not isinstance(mean, dict) or "tensor" not in mean or \
                not isinstance(mean.get("scale"), (int, float)):
            raise OpError("'time_mean' must be {\"tensor\": id, \"scale\": "
                          f"s}}, got {mean!r}")
        if int(mean["tensor"]) not in [int(i) for i in op.get("out", [])]:
            raise OpError("the 'time_mean' tensor must be an output of the op")
        scratch.add(int(mean["tensor"]))
    out = [int(i) for i in op.get("out", []) if int(i) not in scratch]

    def put(i, value, grad=False):
        mod.set(out[i], value, accumulate=acc and grad)

    try:
        if kind == "linear" and op.get("unless_event_path", False):
            # The dense path of an event-driven layer (the decision is its
            # last input): the same function whichever path ran.
            ins = _ids(op, "in", 3, 4, "inputs (x, w, b?, decision)")
            w = mod.get(ins[1])
            b = mod.get(ins[2]) if op.get("has_bias", False) else None
            put(0, layers.linear(_rows(mod, ins[0], [w.shape[1]]), w, b))
        elif kind == "spike_density":
            # [nonzero count, 1 if count <= limit (event-driven path)]; the
            # limit is a one-word tensor (the runtime may calibrate it).
            ins = _ids(op, "in", 2, 2, "inputs (x, limit)")
            x = mod.get(ins[0])
            if "elements" in op:  # x: a spiking layer's row bits
                x = layers.unpack_bits(x, int(op["elements"]))
            count = int(np.count_nonzero(x))
            limit = int(np.asarray(mod.get(ins[1])).reshape(-1)[0])
            put(0, np.array([count, 1 if count <= limit else 0]))
        elif kind == "transpose_weight":
            # Of a weight [N, K], or of an output gradient [..., N] as rows.
            ins = _ids(op, "in", 2, 2, "inputs (decision, w)")
            # [A, B...] from B x A: a weight [N, K] (a convolution's [O, C
            # KH KW] from [C KH KW, O] and back) or rows [M, N] of an output
            # gradient.
            w = mod.get(ins[1])
            shape = mod.info(out[0])["shape"]
            # `batch` matrices one after the other (an NCHW gradient's
            # images: [O, OH OW] -> [OH OW, O]).
            batch, size = int(op.get("batch", 1)), int(np.prod(shape))
            if batch > 1:  # out [batch, K, N]
                n = int(shape[-1])
                k = size // (batch * n)
            else:  # out [K, N...]
                k = int(shape[0])
                n = size // k
            put(0, w.reshape(batch, n, k).transpose(0, 2, 1).reshape(shape))
        elif kind == "event_linear":
            # wt [K, N]: a transposed weight, or for an event-driven
            # backward a weight [N, K] (gx) or the layer's input rows (gw).
            ins = _ids(op, "in", 3, 4, "inputs (x, wt, b?, decision)")
            wt = mod.get(ins[1])
            wt = wt.reshape(-1, wt.shape[-1])
            b = mod.get(ins[2]) if op.get("has_bias", False) else None
            # x_bits: x is a spiking layer's row bits (a thin readout).
            rows = mod.numel(out[0]) // wt.shape[1]
            x = _rows_of(mod, op, mod.get(ins[0]), rows * wt.shape[0], "x_bits")
            put(0, layers.linear(x.reshape(-1, wt.shape[0]), wt.T, b))
        elif kind == "thin_weight_grad_bits":
            # parts[s] = gy[rows of s]^T x[rows of s]: segments of
            # `segment_rows` rows of gy [M, N] and x [M, K] (row bits);
            # time_sum then adds the parts into gw [N, K].
            ins = _ids(op, "in", 2, 2, "inputs (gy, x's row bits)")
            seg = int(op.get("segment_rows", 0))
            parts_shape = mod.info(out[0])["shape"]
            if seg <= 0 or len(parts_shape) != 3:
                raise OpError("thin_weight_grad_bits needs 'segment_rows' and "
                              "parts [S, N, K]")
            n, k = int(parts_shape[1]), int(parts_shape[2])
            gy = np.asarray(mod.get(ins[0]), dtype=np.float64).reshape(-1, n)
            x = _rows_of(mod, op, mod.get(ins[1]), gy.shape[0] * k, "x_bits")
            x = np.asarray(x, dtype=np.float64).reshape(-1, k)
            put(0, np.stack([gy[r:r + seg].T @ x[r:r + seg]
                             for r in range(0, gy.shape[0], seg)]))
        elif kind == "event_linear_band":
            # gx = gy w only where |h - v_th| <= band (the test of the
            # surrogate that reads gx, NaN in the band), else 0.
            ins = _ids(op, "in", 4, 4, "inputs (gy, w, h, decision)")
            wt = mod.get(ins[1])
            wt = wt.reshape(-1, wt.shape[-1])
            gx = layers.linear(_rows(mod, ins[0], [wt.shape[0]]), wt.T, None)
            h = np.asarray(mod.get(ins[2]), dtype=np.float64).reshape(gx.shape)
            outside = np.abs(h - float(op["v_th"])) > float(op["band"])
            put(0, np.where(outside, 0.0, gx))
        elif kind == "event_linear_tiles":
            # y = x w^T + b with x as compact_rows' lists, w [N, K].
            values = bool(op.get("x_values", False))
            bias = bool(op.get("has_bias", False))
            n = 3 + int(values) + int(bias)
            ins = _ids(op, "in", n, n,
                       "inputs (columns, values?, w, b?, decision)")
            w = mod.get(ins[1 + int(values)])
            x = layers.rows_from_lists(mod.get(ins[0]), w.shape[1],
                                       mod.get(ins[1]) if values else None)
            b = mod.get(ins[2 + int(values)]) if bias else None
            put(0, layers.linear(x, w, b))
        elif kind == "linear":
            ins = _ids(op, "in", 2, 3, "inputs (x, w, b?)")
            w = mod.get(ins[1])
            b = mod.get(ins[2]) if op.get("has_bias", len(ins) == 3) else None
            put(0, layers.linear(_rows(mod, ins[0], [w.shape[1]]), w, b))
        elif kind == "linear_bwd":
            # The dense path of an event-driven backward also reads the
            # decision (a 4th input): the same function whichever path ran.
            ins = _ids(op, "in", 3, 4 if op.get("unless_event_path", False) else 3,
                       "inputs (gy, x, w, decision?)")
            w = mod.get(ins[2])
            has_bias, need_gx = op.get("has_bias", False), op.get("need_gx", True)
            gx, gw, gb = layers.linear_bwd(_rows(mod, ins[0], [w.shape[0]]),
                                           _rows(mod, ins[1], [w.shape[1]]), w,
                                           has_bias)
            _put_grads(op, out, put, gx if need_gx else None, gw, gb)
        elif kind in ("conv2d", "conv2d_bwd", "event_conv2d",
                      "event_conv2d_weight_grad"):
            _conv(mod, op, kind, put, out)
        elif kind in ("avg_pool2d", "sum_pool2d", "max_pool2d"):
            ins = _ids(op, "in", 1, 1, "input")
            last = bool(op.get("channels_last", False))
            x = _planes(mod, ins[0], last)
            y = layers.pool2d(kind.split("_")[0], x, *_window_attrs(op))
            put(0, _from_planes(y, last))
        elif kind in ("avg_pool2d_bwd", "sum_pool2d_bwd", "max_pool2d_bwd"):
            pool = kind.split("_")[0]
            ins = _ids(op, "in", 2 if pool == "max" else 1, 2, "inputs")
            last = bool(op.get("channels_last", False))
            gy = _planes(mod, ins[0], last)
            x = _planes(mod, ins[1], last) if pool == "max" else None
            xshape = _planes_shape(mod.info(out[0])["shape"], last)
            gx = layers.pool2d_bwd(pool, gy, (gy.shape[0],) + tuple(xshape),
                                   *_window_attrs(op), x=x)
            put(0, _from_planes(gx, last), grad=True)
        elif kind == "transpose":
            ins = _ids(op, "in", 1, 1, "input")
            perm = op.get("permutation")
            shape = mod.info(ins[0])["shape"]
            if not isinstance(perm, list) or sorted(perm) != list(range(len(shape))):
                raise OpError(f"'permutation' {perm} is not a permutation of "
                              f"the dims of {list(shape)}")
            put(0, np.transpose(mod.get(ins[0]).reshape(shape), perm))
        elif kind == "batch_norm":
            _batch_norm(mod, op, put, out)
        elif kind == "batch_norm_bwd":
            ins = _ids(op, "in", 5, 5, "inputs (gy, x, gamma, mean, invstd)")
            gy, x, g, mu, inv = (mod.get(i) for i in ins)
            gx, gg, gb = layers.batch_norm_bwd(gy, x, g, mu, inv,
                                               int(op.get("spatial_rank", 2)))
            for i, v in enumerate((gx, gg, gb)):
                put(i, v, grad=True)
        elif kind in ("add", "accumulate"):
            ins = _ids(op, "in", 2, 2, "inputs")
            a, b = mod.get(ins[0]), mod.get(ins[1])
            if a.size != b.size:
                raise OpError(f"adds {list(a.shape)} and {list(b.shape)}")
            put(0, a + b.reshape(a.shape), grad=kind == "accumulate")
        elif kind == "scale":
            ins = _ids(op, "in", 1, 1, "input")
            put(0, float(op.get("scale", 1.0)) * mod.get(ins[0]), grad=True)
        elif kind == "dropout":
            ins = _ids(op, "in", 1, 1, "input")
            x = mod.get(ins[0])
            if not op.get("training", False):
                put(0, x)
            else:
                if len(out) < 2:
                    raise OpError("training dropout needs a mask output")
                mask = _mask(mod, out[1])
                put(0, layers.dropout(x, mask.reshape(x.shape), float(op.get("p", 0.5))))
        elif kind == "dropout_bwd":
            ins = _ids(op, "in", 2, 2, "inputs (gy, mask)")
            gy = mod.get(ins[0])
            put(0, layers.dropout_bwd(gy, mod.get(ins[1]).reshape(gy.shape),
                                      float(op.get("p", 0.5))), grad=True)
        elif kind == "pack_bits":
            ins = _ids(op, "in", 1, 1, "input (spikes)")
            put(0, layers.pack_bits(mod.get(ins[0]),
                                    bool(op.get("occupancy", False))))
        elif kind == "event_weight_grad_bits":
            # gw = gyᵀ x with x's bits (and, with x_values, x itself).
            values = bool(op.get("x_values", False))
            n = 4 if values else 3
            ins = _ids(op, "in", n, n, "inputs (gy^T, words, x?, decision)")
            gy_t = mod.get(ins[0])
            gy_t = gy_t.reshape(-1, gy_t.shape[-1])
            k = mod.numel(out[0]) // gy_t.shape[0]
            x = mod.get(ins[2]) if values else None
            put(0, layers.event_weight_grad_bits(gy_t, mod.get(ins[1]), k, x))
        elif kind == "compact_rows":
            # Per row of x: its nonzeros' columns (and values), then -1.
            ins = _ids(op, "in", 2, 2, "inputs (x, decision)")
            # x: or a spiking layer's row bits (pack_bits' layout).
            x = _rows_of(mod, op, mod.get(ins[0]), mod.numel(out[0]), "x_bits")
            columns, values = layers.compact_rows(x)
            put(0, columns)
            if len(out) > 1:
                put(1, values)
        elif kind == "compact_columns":
            # Per column of gy [..., N] and segment of rows: its nonzero rows.
            ins = _ids(op, "in", 2, 2, "inputs (gy, decision)")
            # gy: or its occupancy row bits, which its neuron backward wrote.
            gy = _rows_of(mod, op, mod.get(ins[0]), mod.numel(out[0]), "gy_bits")
            put(0, layers.compact_columns(gy, _segment(op)))
        elif kind == "event_weight_grad_lists":
            # gw = gyᵀ x with x as compact_rows' lists; gy's nonzeros from
            # gyᵀ, or (gy_segment) from gy and compact_columns' lists.
            values = bool(op.get("x_values", False))
            columns = "gy_segment" in op
            n = 3 + int(values) + int(columns)
            ins = _ids(op, "in", n, n,
                       "inputs (gy^T or gy and its rows, columns, values?, "
                       "decision)")
            if columns:
                gy = mod.get(ins[0])
                gy_t = layers.columns_from_lists(
                    gy.reshape(-1, gy.shape[-1]), mod.get(ins[1]),
                    _segment(op, "gy_segment"))
                ins = ins[1:]
            else:
                gy_t = mod.get(ins[0])
                gy_t = gy_t.reshape(-1, gy_t.shape[-1])
            k = mod.numel(out[0]) // gy_t.shape[0]
            put(0, layers.event_weight_grad_lists(
                gy_t, mod.get(ins[1]), k,
                mod.get(ins[2]) if values else None))
        elif kind == "unpack_bits":
            ins = _ids(op, "in", 1, 1, "input (words)")
            put(0, layers.unpack_bits(mod.get(ins[0]), mod.numel(out[0])))
        elif kind == "neuron":
            nrn = _neuron(mod, op)
            s, h, i = nrn.forward(_neuron_input(mod, op), smooth=smooth)
            pool = op.get("pool")
            if pool is not None:
                # Fused with its pooling (--snn-fuse): out[0] is the pooling
                # of the spikes, windows that tile the map.
                k = pool["kernel"]
                last = bool(pool.get("channels_last", False))
                sv = np.reshape(s, (-1,) + tuple(np.shape(s)[-3:]))
                sv = np.moveaxis(sv, -1, 1) if last else sv
                put(0, _from_planes(layers.pool2d(pool["kind"], sv, k, k,
                                                  [0, 0]), last))
            elif op.get("spike_bits") == "rows":
                # The training spikes as row bits (pack_bits' layout).
                put(0, layers.pack_bits(s))
            else:
                put(0, h if nrn.model == "li" else s)
            if mean is not None:
                # What time_sum would read: the layer's output as floats.
                y = np.asarray(h if nrn.model == "li" else s)
                mod.set(int(mean["tensor"]),
                        float(mean["scale"]) * y.sum(axis=0, keepdims=True))
            # The membrane after each step's reset (li: H).
            hv = nrn._view(h)
            v = hv if nrn.model == "li" else \
                nrn.after_reset(hv, nrn._view(s)).reshape(np.shape(h))
            v = np.reshape(v, np.shape(h))
            mod._trace(op, None if nrn.model == "li" else s, v, h, step=False)
            if op.get("record"):  # snn-run --record: out = S, H, V
                put(1, h)
                put(2, v)
                return
            chunk = int(op.get("recompute_chunk", 0))
            if len(out) > 1 and chunk > 0:
                # The membrane before steps C, 2C, ...: H after its reset.
                hv = nrn._view(h)
                starts = range(chunk, hv.shape[0], chunk)
                ckpt = [nrn.after_reset(hv[t - 1], nrn.spikes(hv[t - 1], smooth))
                        for t in starts]
                put(1, np.stack(ckpt) if ckpt else np.zeros(mod.info(out[1])["shape"]))
            elif len(out) > 1:
                put(1, h)
            if len(out) > 2 and i is not None:
                put(2, i)
        elif kind == "neuron_step":
            ins = [int(i) for i in op["in"]]
            nrn = _neuron(mod, op)
            x = mod.get(ins[0])
            addend = op.get("addend")
            if isinstance(addend, dict):
                x = x + mod.get(int(addend["tensor"])).reshape(x.shape)
            if nrn.model == "cuba_lif":  # in: x, i, v; out: s, i', v', (h)
                o, v, h, i = nrn.step(x, mod.get(ins[2]), smooth=smooth,
                                      i=mod.get(ins[1]))
                put(0, o)
                put(1, i)
                put(2, v)
                n = 3
            else:
                o, v, h = nrn.step(x, mod.get(ins[1]), smooth=smooth)
                put(0, o)
                n = 1
                if nrn.model != "li":
                    put(1, v)
                    n = 2
            mod._trace(op, None if nrn.model == "li" else o, v, h, step=True)
            if op.get("save_h"):
                put(n, h)
        elif kind == "neuron_step_bwd":
            ins = _ids(op, "in", 3, 16, "inputs (gs, [gi], gv, h, ...)")
            nrn = _neuron(mod, op)
            if nrn.model == "cuba_lif":
                gx, gv, gi = nrn.step_backward(mod.get(ins[0]), mod.get(ins[2]),
                                               mod.get(ins[3]), smooth=smooth,
                                               gi_next=mod.get(ins[1]))
                put(0, gx, grad=True)
                put(1, gi, grad=True)
                put(2, gv, grad=True)
            elif nrn.model == "plif":  # in: gs, gv', h, v before, w, ...
                gx, gv, gw = nrn.step_backward(mod.get(ins[0]), mod.get(ins[1]),
                                               mod.get(ins[2]), smooth=smooth,
                                               v_before=mod.get(ins[3]))
                put(0, gx, grad=True)
                put(1, gv, grad=True)
                put(2, gw, grad=True)
            else:
                gx, gv = nrn.step_backward(mod.get(ins[0]), mod.get(ins[1]),
                                           mod.get(ins[2]), smooth=smooth)
                put(0, gx, grad=True)
                put(1, gv, grad=True)
        elif kind == "time_loop":
            _time_loop(mod, op, lr, smooth)
        elif kind == "time_slice":
            ins = _ids(op, "in", 1, 1, "input")
            x = mod.get(ins[0])
            index = int(op.get("index", -1))
            if not 0 <= index < x.shape[0]:
                raise OpError(f"index {index} outside the {x.shape[0]} steps")
            put(0, x[index])
        elif kind == "time_stack":
            ins = [int(i) for i in op["in"]]
            put(0, np.stack([mod.get(i) for i in ins]))
        elif kind == "neuron_bwd":
            ins = _ids(op, "in", 2, 16, "inputs (gs, h, ...)")
            nrn = _neuron(mod, op)
            if int(op.get("recompute_chunk", 0)) > 0:
                # in: gs, X, checkpoints: H recomputed from X; with a fused
                # batch norm ("bn") X is the batch norm's input, normalized
                # again with the forward's gamma, beta and statistics
                # (in[3..6]).
                x = mod.get(ins[1])
                bn = op.get("bn")
                if bn is not None:
                    ins = _ids(op, "in", 8, 64, "inputs (gs, x, checkpoints, "
                               "gamma, beta, saved_mean, saved_invstd, scratch)")
                    g, b, mean, invstd = (mod.get(i) for i in ins[3:7])
                    x = layers.batch_norm_apply(x, g, b, mean, invstd,
                                                int(bn.get("spatial_rank", 2)))
                h = nrn.forward(x, smooth=smooth)[1]
            else:
                h = mod.get(ins[1])
            gs = mod.get(ins[0])
            pool = op.get("pool")
            if pool is not None:
                # Fused with its pooling (--snn-fuse): in[0] is the gradient
                # of the pooled spikes, spread over the windows.
                k = pool["kernel"]
                last = bool(pool.get("channels_last", False))
                hshape = np.shape(h)
                gy = np.reshape(gs, (-1,) + tuple(np.shape(gs)[-3:]))
                gy = np.moveaxis(gy, -1, 1) if last else gy
                xshape = _planes_shape(hshape, last)
                gs = layers.pool2d_bwd(pool["kind"], gy,
                                       (gy.shape[0],) + tuple(xshape),
                                       k, k, [0, 0])
                gs = _from_planes(gs, last).reshape(hshape)
            broadcast = op.get("grad_broadcast")
            if broadcast is not None:
                # The gradient of the layer's time mean (--snn-fuse): in[0]
                # is [1, ...], every step's gradient scale times it.
                if not isinstance(broadcast, dict) or \
                        not isinstance(broadcast.get("scale"), (int, float)):
                    raise OpError("'grad_broadcast' must be {\"scale\": s}, "
                                  f"got {broadcast!r}")
                steps = np.shape(h)[0]
                gs = np.repeat(float(broadcast["scale"]) *
                               np.reshape(gs, (1,) + np.shape(h)[1:]),
                               steps, axis=0)
            if op.get("linear_grad") is not None:
                # Forms gx of the thin linear after it (--snn-fuse): in[0]
                # is that linear's gy [.., C], the last input its weight
                # [C, F].
                w = mod.get(ins[-1])
                c = int(op["linear_grad"]["outputs"])
                if w.ndim != 2 or w.shape[0] != c or np.shape(gs)[-1] != c:
                    raise OpError(f"'linear_grad' outputs = {c} needs gy "
                                  f"[.., {c}] and a weight [{c}, F], got "
                                  f"{list(np.shape(gs))} and {list(w.shape)}")
                gs = (gs @ w).reshape(np.shape(h))
            gx, gw = nrn.backward(gs, h, smooth=smooth)
            put(0, gx, grad=True)
            if nrn.model == "plif":
                if len(out) < 2:
                    raise OpError("plif backward needs outputs (gx, gw)")
                put(1, gw, grad=True)
        elif kind == "time_sum":
            # y[1, ...] = scale * sum_t x[t]: a time mean taken before the
            # loss (long T) or a rank's share of it (a time split).
            ins = _ids(op, "in", 1, 1, "inputs (x)")
            x = mod.get(ins[0])
            put(0, float(op["scale"]) * x.sum(axis=0, keepdims=True))
        elif kind == "time_broadcast":
            # y[t] = scale * x[0] for each of y's steps: time_sum's gradient.
            ins = _ids(op, "in", 1, 1, "inputs (x)")
            x = mod.get(ins[0])
            steps = int(mod.info(out[0])["shape"][0])
            put(0, np.repeat(float(op["scale"]) * x, steps, axis=0), grad=True)
        elif kind in losses.KINDS and len(out) == 2:
            # The evaluate program's loss: (loss, correct), no gradient.
            ins = _ids(op, "in", 2, 2, "inputs (y, labels)")
            loss, correct = losses.eval_loss(kind, mod.get(ins[0]),
                                             mod.get(ins[1]))
            put(0, loss)
            put(1, correct)
        elif kind in losses.KINDS:
            ins = _ids(op, "in", 2, 2, "inputs (y, labels)")
            loss, gy, correct = losses.rate_loss(kind, mod.get(ins[0]),
                                                 mod.get(ins[1]))
            put(0, loss)
            put(1, gy, grad=True)
            if len(out) > 2:
                put(2, correct)
        elif kind == "sgd":
            ins = _ids(op, "in", 2, 3, "inputs (param, grad, momentum_buf?)")
            buf = mod.get(ins[2]) if len(ins) > 2 else None
            p, buf = optim.sgd(mod.get(ins[0]), mod.get(ins[1]), buf, lr, mod.step,
                               momentum=float(op.get("momentum", 0.0)),
                               dampening=float(op.get("dampening", 0.0)),
                               weight_decay=float(op.get("weight_decay", 0.0)),
                               nesterov=bool(op.get("nesterov", False)))
            put(0, p)
            if buf is not None and len(out) > 1:
                put(1, buf)
        elif kind == "adam":
            ins = _ids(op, "in", 4, 4, "inputs (param, grad, m, v)")
            p, m, v = optim.adam(*(mod.get(i) for i in ins), lr=lr, step=mod.step,
                                 beta1=float(op.get("beta1", 0.9)),
                                 beta2=float(op.get("beta2", 0.999)),
                                 eps=float(op.get("eps", 1e-8)),
                                 weight_decay=float(op.get("weight_decay", 0.0)),
                                 decoupled=bool(op.get("decoupled", False)))
            for i, val in enumerate((p, m, v)):
                put(i, val)
        else:
            raise OpError(f"unknown op kind {kind!r}; snnref implements the ops "
                          "of docs/artifact-format.md")
    except RefError as e:
        if isinstance(e, OpError):
            raise
        raise OpError(str(e)) from None
    except IndexError:
        raise OpError(f"has too few outputs ({len(out)})") from None


def _time_loop(mod, op, lr, smooth):
    """docs/artifact-format.md `time_loop`: the body once per step, on slice t
    of the inputs and the state of step t-1; step outputs stacked."""
    ins, args = [int(i) for i in op["in"]], [int(i) for i in op["args"]]
    yields, out = [int(i) for i in op["yields"]], [int(i) for i in op["out"]]
    ni, steps = int(op.get("num_inputs", 0)), int(op["steps"])
    ns = len(ins) - ni
    no = len(out) - ns
    if len(args) != len(ins) or len(yields) != len(out) or no < 0:
        raise OpError("needs one block argument per input and init, and one "
                      "yield per result")
    for j in range(ns):
        mod.set(args[ni + j], mod.get(ins[ni + j]))
    stacked = [[] for _ in range(no)]
    for t in range(steps):
        for i in range(ni):
            mod.set(args[i], mod.get(ins[i])[t])
        for index, body_op in enumerate(op.get("body", [])):
            try:
                _run_op(mod, body_op, lr=lr, smooth=smooth)
            except OpError as e:
                raise OpError(f"step {t}, body op #{index} "
                              f"({body_op.get('op')}): {e}") from None
        for k in range(no):
            stacked[k].append(mod.get(yields[k]).copy())
        state = [mod.get(yields[no + j]).copy() for j in range(ns)]
        for j in range(ns):
            mod.set(args[ni + j], state[j])
    for k in range(no):
        mod.set(out[k], np.stack(stacked[k]))
    for j in range(ns):
        mod.set(out[no + j], mod.get(args[ni + j]))


def _put_grads(op, out, put, gx, gw, gb):
    vals = [v for v in (gx, gw, gb) if v is not None]
    if len(out) != len(vals):
        raise OpError(f"expects {len(vals)} outputs (gx if need_gx, gw, gb if "
                      f"has_bias), got {len(out)}")
    for i, v in enumerate(vals):
        put(i, v, grad=True)


def _conv(mod, op, kind, put, out):
    geo = dict(stride=op.get("stride", [1, 1]), padding=op.get("padding", [0, 0]),
               dilation=op.get("dilation", [1, 1]), groups=int(op.get("groups", 1)),
               channels_last=bool(op.get("channels_last", False)))
    if kind == "event_conv2d":
        # wt: the weight transposed to [taps, O] (OIHW or OHWI order).
        ins = _ids(op, "in", 3, 4, "inputs (x, wt, b?, decision)")
        x = _rows(mod, ins[0], mod.info(ins[0])["shape"][-3:])
        wt = mod.get(ins[1])
        o = wt.shape[-1]
        kh, kw = int(op["kernel"][0]), int(op["kernel"][1])
        c = wt.shape[0] // (kh * kw)
        w = wt.T.reshape((o, kh, kw, c) if geo["channels_last"] else (o, c, kh, kw))
        b = mod.get(ins[2]) if op.get("has_bias", False) else None
        put(0, layers.conv2d(x, w, b, **geo))
        return
    if kind == "conv2d":
        # The dense path of an event-driven convolution also reads the
        # decision (its last input): the same function whichever path ran.
        ins = _ids(op, "in", 2, 4 if op.get("unless_event_path", False) else 3,
                   "inputs (x, w, b?, decision?)")
        x = _rows(mod, ins[0], mod.info(ins[0])["shape"][-3:])
        w = mod.get(ins[1])
        b = mod.get(ins[2]) if op.get("has_bias", len(ins) == 3) else None
        put(0, layers.conv2d(x, w, b, **geo))
        return
    if kind == "event_conv2d_weight_grad":
        # gwT [taps, O] from x and gy as [images, OH OW, O].
        ins = _ids(op, "in", 3, 3, "inputs (x, gy rows, decision)")
        x = _rows(mod, ins[0], mod.info(ins[0])["shape"][-3:])
        taps, o = mod.info(out[0])["shape"]
        kh, kw = int(op["kernel"][0]), int(op["kernel"][1])
        c = int(taps) // (kh * kw)
        last = geo["channels_last"]
        oh, ow = (int(v) for v in op["output"])
        gy = mod.get(ins[1]).reshape(x.shape[0], oh, ow, int(o))
        if not last:  # gy rows back to [images, O, OH, OW]
            gy = gy.transpose(0, 3, 1, 2)
        wshape = (int(o), kh, kw, c) if last else (int(o), c, kh, kw)
        _, gw, _ = layers.conv2d_bwd(gy, x, np.zeros(wshape), has_bias=False,
                                     **geo)
        put(0, gw.reshape(int(o), -1).T)
        return
    # The dense path of an event-driven weight gradient also reads the
    # decision (its 4th input): the same function whichever path ran.
    ins = _ids(op, "in", 3, 4 if op.get("unless_event_path", False) else 3,
               "inputs (gy, x, w, decision?)")
    x = _rows(mod, ins[1], mod.info(ins[1])["shape"][-3:])
    w = mod.get(ins[2])
    gy = _rows(mod, ins[0], mod.info(ins[0])["shape"][-3:])
    has_bias, need_gx = op.get("has_bias", False), op.get("need_gx", True)
    gx, gw, gb = layers.conv2d_bwd(gy, x, w, has_bias=has_bias, **geo)
    _put_grads(op, out, put, gx if need_gx else None, gw, gb)


def _batch_norm(mod, op, put, out):
    ins = _ids(op, "in", 5, 5, "inputs (x, gamma, beta, running_mean, running_var)")
    training = bool(op.get("training", False))
    x, g, b, rm, rv = (mod.get(i) for i in ins)
    y, rm2, rv2, mu, inv = layers.batch_norm(
        x, g, b, rm, rv, eps=float(op.get("eps", 1e-5)),
        momentum=float(op.get("momentum", 0.1)), training=training,
        spatial_rank=int(op.get("spatial_rank", 2)))
    # Applied by the neuron op after it (--snn-fuse): no y.
    applied = bool(op.get("applied_by_neuron", False))
    if not applied:
        put(0, y)
    if training:
        mod.set(ins[3], rm2)
        mod.set(ins[4], rv2)
        first = 0 if applied else 1
        if len(out) < first + 2:
            raise OpError("training batch_norm needs outputs (y, saved_mean, "
                          "saved_invstd), without y when applied_by_neuron")
        put(first, mu)
        put(first + 1, inv)


def _neuron_input(mod, op):
    """The input of a neuron op: in[0], normalized first when the op applies
    the batch norm in front of it ("bn", --snn-fuse): in[1..4] are gamma,
    beta and the statistics (training: saved_mean, saved_invstd; inference:
    running_mean, running_var)."""
    x = mod.get(int(op["in"][0]))
    bn = op.get("bn")
    if bn is None:
        return x
    if not isinstance(bn, dict):
        raise OpError(f"'bn' must be an object, got {bn!r}")
    ins = _ids(op, "in", 5, 64, "inputs (x, gamma, beta, 2 statistics, ...)")
    g, b, first, second = (mod.get(i) for i in ins[1:5])
    if bn.get("training", False):
        mean, invstd = first, second
    else:
        mean, invstd = first, 1.0 / np.sqrt(second + float(bn.get("eps", 1e-5)))
    return layers.batch_norm_apply(x, g, b, mean, invstd,
                                   int(bn.get("spatial_rank", 2)))


def _mask(mod, tid):
    root = mod.root(tid)
    if root not in mod.store:
        name = mod.info(tid).get("name", tid)
        raise OpError(f"training dropout needs its keep mask '{name}': pass it "
                      "in `masks` (e.g. the runtime's mask tensor)")
    return mod.store[root]
