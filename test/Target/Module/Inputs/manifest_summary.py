"""Checks a compiled module directory against docs/artifact-format.md and
prints a one-line-per-item summary for FileCheck.

Usage: manifest_summary.py MODULE_DIR

Exits non-zero with a message naming the broken tensor or op when the module
breaks the contract: ids, references, shapes of the documented ops, aliases,
init.safetensors contents, kernel files, def-before-use in the programs.
"""
import json
import math
import os
import struct
import sys

PERSISTENT = {"input", "label", "param", "buffer", "constant", "optimizer_state"}
NEURON_PARAMS = ["k", "c", "v_leak", "v_th", "v_reset", "v_init",
                 "k_syn", "c_syn", "i_init"]


def fail(message):
    sys.exit("manifest error: " + message)


def numel(shape):
    return math.prod(shape) if shape else 1


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    if (8 + size) % 8:
        fail("init.safetensors: data is not 8-byte aligned")
    base = 8 + size
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] != "F32":
            fail(f"init.safetensors: {name} has dtype {t['dtype']}")
        begin, end = t["data_offsets"]
        if end - begin != 4 * numel(t["shape"]):
            fail(f"init.safetensors: {name} has {end - begin} bytes for shape {t['shape']}")
        out[name] = (t["shape"], struct.unpack(f"<{numel(t['shape'])}f", data[base + begin:base + end]))
    return out


def conv_out(size, k, stride, pad, dil=1):
    return (size + 2 * pad - dil * (k - 1) - 1) // stride + 1


def check_op(op, where, shape):
    kind = op["op"]
    ins, outs = op["in"], op["out"]
    if kind == "linear":
        x, w, y = shape(ins[0]), shape(ins[1]), shape(outs[0])
        if x[-1] != w[1] or y[-1] != w[0] or x[:-1] != y[:-1]:
            fail(f"{where}: linear shapes x{x} w{w} y{y}")
        # An event-driven layer's dense path also reads the decision.
        decision = 1 if op.get("unless_event_path") else 0
        if op["has_bias"] != (len(ins) == 3 + decision):
            fail(f"{where}: has_bias disagrees with the inputs")
        if decision and shape(ins[-1]) != [2]:
            fail(f"{where}: the decision of an event-driven layer is [2]")
    elif kind == "conv2d":
        x, w, y = shape(ins[0]), shape(ins[1]), shape(outs[0])
        if op.get("channels_last"):  # NHWC x, y and [O, KH, KW, C] w, as NCHW
            x, y = (s[:-3] + [s[-1]] + s[-3:-1] for s in (x, y))
            w = [w[0], w[3], w[1], w[2]]
        pad = op["padding"]  # [top, left] or [top, left, bottom, right]
        end = pad[2:] if len(pad) == 4 else pad
        oh = conv_out(x[-2] + end[0] - pad[0], w[2], op["stride"][0], pad[0],
                      op["dilation"][0])
        ow = conv_out(x[-1] + end[1] - pad[1], w[3], op["stride"][1], pad[1],
                      op["dilation"][1])
        if y != x[:-3] + [w[0], oh, ow] or x[-3] != w[1] * op["groups"]:
            fail(f"{where}: conv2d shapes x{x} w{w} y{y}")
    elif kind in ("avg_pool2d", "sum_pool2d", "max_pool2d"):
        x, y = shape(ins[0]), shape(outs[0])
        last = 1 if op.get("channels_last", False) else 0  # [..., H, W, C]
        h, w = x[-2 - last], x[-1 - last]
        oh = conv_out(h, op["kernel"][0], op["stride"][0], op["padding"][0])
        ow = conv_out(w, op["kernel"][1], op["stride"][1], op["padding"][1])
        if y != x[:-2 - last] + [oh, ow] + x[len(x) - last:]:
            fail(f"{where}: {kind} shapes x{x} y{y}")
    elif kind == "transpose":
        x, y, perm = shape(ins[0]), shape(outs[0]), op["permutation"]
        if sorted(perm) != list(range(len(x))) or y != [x[p] for p in perm]:
            fail(f"{where}: transpose of x{x} by {perm} to y{y}")
    elif kind == "batch_norm":
        x = shape(ins[0])
        c = x[len(x) - 1 - op["spatial_rank"]]
        if any(shape(i) != [c] for i in ins[1:5]) or shape(outs[0]) != x:
            fail(f"{where}: batch_norm shapes")
        if len(outs) != (3 if op["training"] else 1):
            fail(f"{where}: batch_norm training={op['training']} with {len(outs)} outputs")
    elif kind == "time_loop":
        n, steps = op["num_inputs"], op["steps"]
        args, yields = op["args"], op["yields"]
        states = len(ins) - n
        if len(args) != len(ins) or len(yields) != len(outs) or len(outs) < states:
            fail(f"{where}: time_loop with {len(ins)} operands, {len(args)} block "
                 f"arguments, {len(outs)} results and {len(yields)} yields")
        for i in range(n):
            if shape(ins[i]) != [steps] + shape(args[i]):
                fail(f"{where}: input {ins[i]} is not [steps] + its block argument's shape")
        for k in range(len(outs) - states):
            if shape(outs[k]) != [steps] + shape(yields[k]):
                fail(f"{where}: result {outs[k]} is not [steps] + its yield's shape")
        for j in range(states):
            a = shape(args[n + j])
            if shape(ins[n + j]) != a or shape(yields[len(outs) - states + j]) != a:
                fail(f"{where}: state #{j} changes shape")
            if yields[len(outs) - states + j] in args:
                fail(f"{where}: state #{j} is yielded straight from a block argument")
    elif kind == "neuron_step":
        x = shape(ins[0])
        states = 2 if op["model"] == "cuba_lif" else 1
        if any(shape(t) != x for t in ins[1:1 + states] + outs):
            fail(f"{where}: neuron_step state or output shapes differ from the input {x}")
        if len(outs) != (1 if op["model"] == "li" else 1 + states) + bool(op.get("save_h")):
            fail(f"{where}: neuron_step of {op['model']} with {len(outs)} outputs")
    elif kind == "neuron_step_bwd":
        x = shape(ins[0])
        grads = 3 if op["model"] == "cuba_lif" else 2
        # plif: then V before the step (in) and gw (out, like its weight).
        plif = op["model"] == "plif"
        like = ins[1:grads + 1 + plif] + outs[:grads]
        if any(shape(t) != x for t in like) or len(outs) != grads + plif:
            fail(f"{where}: neuron_step_bwd needs gs, [gi], gv, h and gives gx, "
                 f"[gi], gv, all like {x}")
    elif kind == "time_slice":
        x, y = shape(ins[0]), shape(outs[0])
        if x[1:] != y or not 0 <= op["index"] < x[0]:
            fail(f"{where}: time_slice {x} -> {y} at {op['index']}")
    elif kind == "time_stack":
        y = shape(outs[0])
        if y != [len(ins)] + shape(ins[0]) or any(shape(i) != shape(ins[0]) for i in ins):
            fail(f"{where}: time_stack of {len(ins)} steps into {y}")
    elif kind == "time_range":
        x, y = shape(ins[0]), shape(outs[0])
        if x[1:] != y[1:] or not 1 <= y[0] <= x[0]:
            fail(f"{where}: time_range {x} -> {y}")
    elif kind == "gather_time":
        x, y = shape(ins[0]), shape(outs[0])
        if x[1:] != y[1:] or not 1 <= x[0] <= y[0]:
            fail(f"{where}: gather_time {x} -> {y}")
    elif kind in ("recv", "all_reduce_sum"):
        if shape(ins[0]) != shape(outs[0]):
            fail(f"{where}: {kind} changes the shape")
        if kind == "recv" and (op["peer"] not in ("prev", "next") or op["tag"] < 0):
            fail(f"{where}: recv needs peer prev|next and a tag >= 0")
    elif kind == "send":
        if outs or op["peer"] not in ("prev", "next") or op["tag"] < 0:
            fail(f"{where}: send writes nothing and needs peer prev|next and a tag")
    elif kind in ("time_sum", "time_broadcast"):
        x, y = shape(ins[0]), shape(outs[0])
        one, many = (y, x) if kind == "time_sum" else (x, y)
        if one[0] != 1 or one[1:] != many[1:] or "scale" not in op:
            fail(f"{where}: {kind} {x} -> {y}")
    if kind in ("neuron", "neuron_bwd") and op.get("chained_states"):
        n = op["chained_states"]
        state = shape(ins[0])[1:]
        if any(shape(t) != state for t in ins[-n:] + outs[-n:]):
            fail(f"{where}: chained state tensors are not [B, features...] = {state}")
    if kind in ("neuron", "neuron_bwd"):
        # x: the layer's neurons (the backward's gx), s: its output (the
        # backward's gs)
        x, s = shape(ins[0]), shape(outs[0])
        if kind == "neuron_bwd":
            x, s = s, x
        f = op["features"]
        y = list(x)
        if "pool" in op:  # fused with its pooling: s is pooled
            kh, kw = op["pool"]["kernel"]
            h = -3 if op["pool"].get("channels_last") else -2
            y[h] //= kh
            y[h + 1] //= kw
        if op.get("spike_bits") == "rows":
            # The spikes as row bits: T N / 32 u32 words, rows of whole words.
            if kind != "neuron" or f % 32 or s != [numel(x) // 32] or \
                    tensors_of_kernel[outs[0]].get("dtype") != "u32":
                fail(f"{where}: {kind} row bits are not [T N / 32] u32 "
                     f"words of rows of a multiple of 32 features ({f})")
        elif "linear_grad" in op:
            # gs is the gy [.., C] of the thin linear after the layer, the
            # last input that linear's weight [C, F].
            # (before a fused count's limit).
            c = op["linear_grad"]["outputs"]
            limit = op.get("spike_count", {}).get("limit")
            w = shape([i for i in ins if i != limit][-1])
            if kind != "neuron_bwd" or numel(x) % f or \
                    s != x[:-1] + [c] or w != [c, f]:
                fail(f"{where}: linear_grad outputs={c} needs gy {x[:-1] + [c]} "
                     f"and a weight [{c}, {f}], got {s} and {w}")
        elif "grad_broadcast" in op:
            # gs is the gradient of the layer's time mean, [1, ...].
            if kind != "neuron_bwd" or numel(x) % f or s != [1] + x[1:]:
                fail(f"{where}: grad_broadcast needs gs {[1] + x[1:]}, got {s}")
        elif numel(x) % f or s != y:
            fail(f"{where}: {kind} with features={f} on {x}")
        if "time_mean" in op:
            # The training forward also writes the time mean [1, ...].
            m = op["time_mean"].get("tensor")
            if kind != "neuron" or m not in outs or \
                    shape(m) != [1] + x[1:] or "scale" not in op["time_mean"]:
                fail(f"{where}: time_mean needs an output [1] + {x[1:]} and "
                     "a scale")
        if "bn" in op and kind == "neuron_bwd" and op.get("recompute_chunk"):
            # H recomputed from the batch norm's x (in[1]): after the
            # checkpoints gamma, beta, saved_mean, saved_invstd and the
            # batch norm's scratch; with parts, the sums' scratch after gx.
            bn = op["bn"]
            channels = x[-1 - bn["spatial_rank"]]
            parts = bn.get("parts")
            if len(ins) < 8 or shape(ins[1]) != x or \
                    any(shape(t) != [channels] for t in ins[3:7]) or \
                    numel(shape(ins[7])) % channels or \
                    len(outs) != (2 if parts else 1) or \
                    (parts and shape(outs[1]) != [(4 * parts + 3) * channels]):
                fail(f"{where}: a recomputing bn neuron_bwd needs x, the "
                     "checkpoints, gamma, beta, mean, invstd, the batch "
                     "norm's scratch (and its sums after gx)")
        elif "bn" in op and kind == "neuron_bwd":
            # The batch norm backward's sums: x, saved_mean, saved_invstd
            # after H (and I), the sums' scratch after gx.
            bn = op["bn"]
            channels = x[-1 - bn["spatial_rank"]]
            first = 3 if op["model"] == "cuba_lif" else 2
            if len(ins) < first + 3 or len(outs) != 2 or \
                    shape(ins[first]) != x or \
                    any(shape(t) != [channels] for t in ins[first + 1:first + 3]) or \
                    shape(outs[1]) != [(4 * bn["parts"] + 3) * channels]:
                fail(f"{where}: bn sums need x, mean, invstd after H and "
                     f"(4 parts + 3) C floats after gx")
        elif "bn" in op:  # fused with its batch norm: in[1..4] per channel
            bn = op["bn"]
            channels = x[-1 - bn["spatial_rank"]]
            extra = 5 if bn["training"] else 4
            if kind != "neuron" or len(ins) < 1 + extra or \
                    any(shape(t) != [channels] for t in ins[1:5]):
                fail(f"{where}: bn needs {extra} inputs after x, the first "
                     f"four [C={channels}]")
        tensor_params = [op[p]["tensor"] for p in NEURON_PARAMS
                         if isinstance(op.get(p), dict)]
        for t in tensor_params:
            if numel(shape(t)) != f:
                fail(f"{where}: per-neuron parameter tensor {t} is not [F={f}]")
        for p in ("v_th", "v_reset", "v_init", "reset", "strict",
                  "detach_reset", "surrogate") if op["model"] != "li" else ("k", "c", "v_init"):
            if p not in op:
                fail(f"{where}: {kind} lacks '{p}'")


tensors_of_kernel = {}


def walk_kernel(op, where, program, indent, shape):
    """A generated kernel: its tensors are its ops' tensors (`of`), in their
    order; prints the kernel, then each op it computes."""
    of = op.get("of")
    launches = op.get("launches")
    if not of or not (isinstance(op.get("kernel"), str) or
                      (isinstance(launches, list) and launches and
                       all(isinstance(l.get("kernel"), str) for l in launches))):
        fail(f"{where}: a kernel op needs 'kernel' (or 'launches') and 'of'")
    scratch = op.get("scratch", [])
    if scratch and not launches:
        fail(f"{where}: only a kernel op of several launches has a scratch")
    # scratch_in: a scratch an earlier op wrote (a neuron_bwd's batch norm
    # sums). A tensor that an op of the kernel wrote is no input of the
    # kernel for the ops after it (a counting compact_rows' decision).
    reads, written = [], set()
    for sub in of:
        reads += [t for t in sub["in"] if t not in written]
        written |= set(sub["out"])
    if set(op["in"]) != set(reads + op.get("scratch_in", [])) or \
            sorted(op["out"]) != sorted([t for sub in of for t in sub["out"]] + scratch):
        fail(f"{where}: in/out are not those of its ops (and its scratch)")
    if launches:
        # Each launch reads and writes tensors of the op.
        for l in launches:
            if any(t not in op["in"] + op["out"] for t in l["args"]):
                fail(f"{where}: launch {l['kernel']} has args {l['args']} outside the op's tensors")
        args = [t for l in launches for t in l["args"]]
    else:
        args = [t for sub in of for t in sub["in"] + [o for o in sub["out"] if o not in sub["in"]]]
        args = list(dict.fromkeys(args))  # each tensor once, where first named
        if op["args"] != args:
            fail(f"{where}: args {op['args']} are not the tensors of its ops {args}")
    for i in args:
        shape(i)
    for n, sub in enumerate(of):
        if sub["op"] in ("add", "accumulate", "scale") and \
                any(numel(shape(t)) != numel(shape(sub["out"][0])) for t in sub["in"]):
            fail(f"{where}: {sub['op']} #{n} mixes sizes")
        if sub["op"] in ("pack_bits", "unpack_bits"):
            spikes, words = (sub["in"][0], sub["out"][0]) if sub["op"] == "pack_bits" \
                else (sub["out"][0], sub["in"][0])
            if numel(shape(words)) != -(-numel(shape(spikes)) // 32) or \
                    tensors_of_kernel[words].get("dtype") != "u32":
                fail(f"{where}: {sub['op']} #{n}: the words are not ceil(spikes / 32) u32")
        if sub["op"] == "compact_rows" and sub.get("x_bits"):
            words, columns = sub["in"][0], sub["out"][0]
            k = sub.get("features", 0)
            if k <= 0 or k % 32 or numel(shape(columns)) % k or \
                    numel(shape(words)) * 32 != numel(shape(columns)) or \
                    tensors_of_kernel[words].get("dtype") != "u32":
                fail(f"{where}: compact_rows #{n}: x_bits needs u32 row words "
                     f"of 'features' (a multiple of 32) per row")
        if sub["op"] in ("sgd", "adam") and \
                any(shape(t) != shape(sub["in"][0]) for t in sub["in"]):
            fail(f"{where}: {sub['op']} #{n}: state or gradient unlike the parameter")
    for l in launches or [op]:
        extra = f" shared_bytes={l['shared_bytes']}" if l.get("shared_bytes") else ""
        extra += " run_values" if l.get("run_values") else ""
        zero = op.get("zero_outputs")
        extra += (f" zero_outputs={zero}" if isinstance(zero, list)
                  else " zero_outputs" if zero else "")
        print(f"{program}: {indent}kernel {l['kernel']} grid={l['grid']} block={l['block']}{extra}")
    for sub in of:
        attrs = {k: v for k, v in sub.items() if k not in ("op", "in", "out")}
        text = " ".join(f"{k}={json.dumps(v, sort_keys=True, separators=(',', ':'))}"
                        for k, v in sorted(attrs.items()))
        print(f"{program}: {indent}  {sub['op']} in={sub['in']} out={sub['out']} {text}".rstrip())


def walk(ops, program, indent, live, tensors, shape):
    """Checks def-before-use and each op's shapes; prints one line per op
    (a time loop's body indented under it)."""
    for n, op in enumerate(ops):
        where = f"{program}[{n}] ({op['op']})"
        for i in op["in"]:
            base = tensors[i].get("alias_of", i)
            if i not in live and base not in live:
                fail(f"{where} reads tensor {i} before it is written")
        check_op(op, where, shape)
        if op["op"] == "kernel":
            walk_kernel(op, where, program, indent, shape)
            live.update(op["out"])
            continue
        attrs = {k: v for k, v in op.items() if k not in ("op", "in", "out", "body")}
        text = " ".join(f"{k}={json.dumps(v, sort_keys=True, separators=(',', ':'))}"
                        for k, v in sorted(attrs.items()))
        print(f"{program}: {indent}{op['op']} in={op['in']} out={op['out']} {text}".rstrip())
        if op["op"] == "time_loop":
            inner = set(live) | set(op["args"])
            walk(op["body"], program, indent + "  ", inner, tensors, shape)
            for y in op["yields"]:
                if y not in inner and tensors[y].get("alias_of") not in inner:
                    fail(f"{where} yields tensor {y}, which its body does not write")
        live.update(op["out"])
        # Aliases become readable with their base tensor.
        live.update(t["id"] for t in tensors if t.get("alias_of") in live)


def main():
    root = sys.argv[1]
    with open(os.path.join(root, "manifest.json")) as f:
        m = json.load(f)
    if m.get("format") != "snn-module" or m.get("version") != 1:
        fail("not an snn-module version 1")
    split = m.get("split_time")
    if not split:
        summarize(m, root)
        return
    # A time split: rank r runs program_sets[ranks[r]] on its steps.
    parts, steps, ranks = split["parts"], split["steps"], split["ranks"]
    print(f"split_time parts={parts} steps={steps} ranks={ranks}")
    sets = m["program_sets"]
    if len(ranks) != parts or sorted(set(ranks)) != list(range(len(sets))):
        fail("split_time ranks must name a program set for each of the parts")
    for index, program_set in enumerate(sets):
        mine = [r for r in range(parts) if ranks[r] == index]
        if program_set["ranks"] != mine:
            fail(f"program set {index} lists ranks {program_set['ranks']}, split_time {mine}")
        lengths = {(r + 1) * steps // parts - r * steps // parts for r in mine}
        if lengths != {program_set["local_steps"]} or program_set["time_steps"] != steps:
            fail(f"program set {index}: local_steps {program_set['local_steps']} "
                 f"is not the length of its ranks' ranges {sorted(lengths)}")
        print(f"program_set {index} ranks={mine} local_steps={program_set['local_steps']}")
        summarize(program_set, root)


def summarize(m, root):
    tensors = m["tensors"]
    for i, t in enumerate(tensors):
        if t["id"] != i:
            fail(f"tensor #{i} has id {t['id']}")
    names = [t["name"] for t in tensors]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        fail(f"tensor names used twice: {sorted(dupes)}")

    def shape(i):
        if not isinstance(i, int) or not 0 <= i < len(tensors):
            fail(f"bad tensor id {i}")
        return tensors[i]["shape"]

    for t in tensors:
        if "alias_of" in t:
            base = tensors[t["alias_of"]]
            if "alias_of" in base or numel(base["shape"]) != numel(t["shape"]):
                fail(f"tensor {t['id']} aliases {base['id']} of another size")
    files = {}
    if os.path.exists(os.path.join(root, "init.safetensors")):
        files = read_safetensors(os.path.join(root, "init.safetensors"))
    for t in tensors:
        if t.get("init", {}).get("kind") == "file":
            if t["name"] not in files or files[t["name"]][0] != t["shape"]:
                fail(f"tensor '{t['name']}' is not in init.safetensors with shape {t['shape']}")
    # host_triple and host_cpu describe the host library; the rest are files.
    for key, name in m.get("kernels", {}).items():
        if key in ("host_triple", "host_cpu", "host_neurons"):
            continue
        if not os.path.getsize(os.path.join(root, name)):
            fail(f"kernel file {name} is empty")
    for key in ("input", "output", "labels", "loss", "correct"):
        if key in m:
            shape(m[key])

    T, B = m["time_steps"], m["batch"]
    print(f"module time_steps={T} batch={B} input={m['input']} output={m.get('output')}"
          + "".join(f" {k}={m[k]}" for k in ("labels", "loss", "correct") if k in m))
    for t in tensors:
        extra = "".join(f" {k}={json.dumps(t[k], sort_keys=True, separators=(',', ':'))}"
                        for k in ("alias_of", "init", "dtype", "grad_of", "trainable") if k in t)
        print(f"tensor {t['id']} {t['name']} {t['shape']} {t['role']}{extra}")
    tensors_of_kernel.update({t["id"]: t for t in tensors})
    for layer in m["spike_layers"]:
        train = "".join(f" {k}={layer[k]}" for k in ("train_tensor", "train_bits")
                        if k in layer)
        print(f"spike_layer {layer['name']} {layer['tensor']}{train}")

    defined = {t["id"] for t in tensors if t["role"] in PERSISTENT}
    for program in ("infer", "train_forward", "backward", "update"):
        if program not in m["programs"]:
            continue
        if program == "infer":
            live = set(defined)
        walk(m["programs"][program], program, "", live, tensors, shape)
        if program == "infer":
            live = set(defined)
    if "optimizer" in m:
        print("optimizer " + json.dumps(m["optimizer"], sort_keys=True, separators=(",", ":")))
    for key, name in sorted(m.get("kernels", {}).items()):
        print(f"kernel_file {key} {name if isinstance(name, str) else json.dumps(name)}")
    # The evaluate program reads the output that infer wrote.
    if "evaluate" in m["programs"]:
        walk(m["programs"]["evaluate"], "evaluate", "", set(defined) | {m["output"]},
             tensors, shape)


if __name__ == "__main__":
    main()
