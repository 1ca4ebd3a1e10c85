"""Small hand-written manifests (docs/artifact-format.md) for the tests."""

T, B = 3, 2


def t(tid, name, shape, role, **kw):
    return dict(id=tid, name=name, shape=shape, role=role, **kw)


def conv_training_module(model="plif", optimizer="sgd"):
    """conv -> batch norm -> (bn + 0.5 bn) -> neuron -> max pool -> flatten ->
    linear -> li readout -> loss_ce_membrane, with the whole backward and an
    update program."""
    lif = dict(model=model, features=3 * 4 * 4, reset="soft", strict=False,
               detach_reset=False, v_th=0.8, v_leak=0.0, v_reset=0.0, v_init=0.1,
               surrogate={"kind": "atan", "alpha": 2.0})
    if model == "plif":
        lif.update(plif_w={"tensor": 20}, decay_input=True)
    else:
        lif.update(k=0.4, c=0.9)
    li = dict(model="li", features=4, k=0.3, c=0.8, v_leak=0.0, v_init=0.0)
    tensors = [
        t(0, "input", [T, B, 2, 4, 4], "input"),
        t(1, "conv.weight", [3, 2, 3, 3], "param", init={"kind": "kaiming_uniform", "fan_in": 18}, trainable=True),
        t(2, "conv.bias", [3], "param", init={"kind": "uniform", "bound": 0.2}, trainable=True),
        t(3, "%3", [T, B, 3, 4, 4], "activation"),
        t(4, "bn.weight", [3], "param", init={"kind": "ones"}, trainable=True),
        t(5, "bn.bias", [3], "param", init={"kind": "zeros"}, trainable=True),
        t(6, "bn.running_mean", [3], "buffer", init={"kind": "zeros"}),
        t(7, "bn.running_var", [3], "buffer", init={"kind": "ones"}),
        t(8, "%8", [T, B, 3, 4, 4], "activation"),
        t(9, "bn.mean", [3], "saved"), t(10, "bn.invstd", [3], "saved"),
        t(11, "%11", [T, B, 3, 4, 4], "activation"),
        t(12, "%12", [T, B, 3, 4, 4], "activation"),
        t(13, "lif", [T, B, 3, 4, 4], "activation"),
        t(14, "lif.h", [T, B, 3, 4, 4], "saved"),
        t(15, "%15", [T, B, 3, 2, 2], "activation"),
        t(16, "%16", [T, B, 12], "activation", alias_of=15),
        t(17, "fc.weight", [4, 12], "param", init={"kind": "normal", "std": 0.5}, trainable=True),
        t(18, "%18", [T, B, 4], "activation"),
        t(19, "out", [T, B, 4], "activation"),
        t(20, "plif.w", [3 * 4 * 4], "param", init={"kind": "constant", "value": -0.3}, trainable=True),
        t(21, "labels", [B], "label", dtype="i32"),
        t(22, "loss", [], "loss"), t(23, "correct", [], "metric"),
        t(24, "grad:out", [T, B, 4], "grad"),
        t(25, "grad:%18", [T, B, 4], "grad"),
        t(26, "grad:%16", [T, B, 12], "grad"),
        t(27, "grad:fc.weight", [4, 12], "grad", grad_of=17),
        t(28, "grad:%15", [T, B, 3, 2, 2], "grad", alias_of=26),
        t(29, "grad:lif", [T, B, 3, 4, 4], "grad"),
        t(30, "grad:%12", [T, B, 3, 4, 4], "grad"),
        t(31, "grad:plif.w", [3 * 4 * 4], "grad", grad_of=20),
        t(32, "grad:%8", [T, B, 3, 4, 4], "grad"),
        t(33, "grad:%3", [T, B, 3, 4, 4], "grad"),
        t(34, "grad:bn.weight", [3], "grad", grad_of=4),
        t(35, "grad:bn.bias", [3], "grad", grad_of=5),
        t(36, "grad:conv.weight", [3, 2, 3, 3], "grad", grad_of=1),
        t(37, "grad:conv.bias", [3], "grad", grad_of=2),
        t(38, "opt:conv.weight:m", [3, 2, 3, 3], "optimizer_state", init={"kind": "zeros"}),
        t(39, "opt:conv.weight:v", [3, 2, 3, 3], "optimizer_state", init={"kind": "zeros"}),
    ]
    conv = dict(stride=[1, 1], padding=[1, 1], dilation=[1, 1], groups=1)
    pool = dict(kernel=[2, 2], stride=[2, 2], padding=[0, 0])
    neuron_out = [13, 14]
    forward = [
        dict(op="conv2d", **{"in": [0, 1, 2]}, out=[3], has_bias=True, **conv),
        dict(op="batch_norm", **{"in": [3, 4, 5, 6, 7]}, out=[8, 9, 10], eps=1e-5,
             momentum=0.1, training=True, spatial_rank=2),
        dict(op="scale", **{"in": [8]}, out=[11], scale=0.5),
        dict(op="add", **{"in": [8, 11]}, out=[12]),
        dict(op="neuron", **{"in": [12]}, out=neuron_out, save_h=True, **lif),
        dict(op="max_pool2d", **{"in": [13]}, out=[15], **pool),
        dict(op="linear", **{"in": [16, 17]}, out=[18], has_bias=False),
        dict(op="neuron", **{"in": [18]}, out=[19], save_h=False, **li),
    ]
    lif_bwd_out = [30, 31] if model == "plif" else [30]
    backward = [
        dict(op="loss_ce_membrane", **{"in": [19, 21]}, out=[22, 24, 23]),
        dict(op="neuron_bwd", **{"in": [24, 19]}, out=[25], **li),
        dict(op="linear_bwd", **{"in": [25, 16, 17]}, out=[26, 27], has_bias=False,
             need_gx=True),
        dict(op="max_pool2d_bwd", **{"in": [28, 13]}, out=[29], **pool),
        dict(op="neuron_bwd", **{"in": [29, 14]}, out=lif_bwd_out, **lif),
        # add(bn, 0.5 bn): both paths reach bn's output; the second accumulates.
        dict(op="scale", **{"in": [30]}, out=[32], scale=1.0),
        dict(op="scale", **{"in": [30]}, out=[32], scale=0.5, accumulate=True),
        dict(op="batch_norm_bwd", **{"in": [32, 3, 4, 9, 10]}, out=[33, 34, 35],
             spatial_rank=2),
        dict(op="conv2d_bwd", **{"in": [33, 0, 1]}, out=[36, 37], has_bias=True,
             need_gx=False, **conv),
    ]
    if optimizer == "sgd":
        update = [dict(op="sgd", **{"in": [1, 36, 38]}, out=[1, 38], momentum=0.9,
                       weight_decay=1e-3)]
    else:
        update = [dict(op="adam", **{"in": [1, 36, 38, 39]}, out=[1, 38, 39],
                       beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=0.01,
                       decoupled=True)]
    update.append(dict(op="sgd", **{"in": [17, 27]}, out=[17]))
    return {"format": "snn-module", "version": 1, "time_steps": T, "batch": B,
            "tensors": tensors, "input": 0, "output": 19, "labels": 21, "loss": 22,
            "correct": 23, "spike_layers": [{"name": "lif", "tensor": 13}],
            "programs": {"infer": [dict(o, training=False, out=[8]) if o["op"] == "batch_norm"
                                   else o for o in forward],
                         "train_forward": forward, "backward": backward,
                         "update": update},
            "optimizer": {"kind": optimizer, "lr": 0.1}}
