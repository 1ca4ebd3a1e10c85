#!/usr/bin/env python3
"""What the layout and precision of VGG-11's convolutions cost on this GPU.

cuDNN through PyTorch (cudnn.benchmark on, so each shape gets its fastest
algorithm, as `snn-run` picks with cudnnFind): per convolution of the
spiking VGG-11 (T = 4, batch 64: N = 256 images of 32x32 down to 2x2) the
forward, the data gradient and the weight gradient, in four forms: NCHW
fp32 with TF32 (what snn-run runs today), NHWC (channels-last) TF32, NCHW
bf16 and NHWC bf16 (fp32 accumulation). Prints one JSON line per layer and
form, then the sums and the ratios to NCHW TF32: the ceiling of what a
channels-last or a bf16 convolution path could save of the step.

  python3 bench/conv_layout.py [--batch 256] [--iters 50] > conv-layout.jsonl
"""

import argparse
import json
import sys

import torch
import torch.nn.functional as F

# (in channels, out channels, height = width) of VGG-11's 3x3 convolutions.
LAYERS = [(3, 64, 32), (64, 128, 16), (128, 256, 8), (256, 256, 8),
          (256, 512, 4), (512, 512, 4), (512, 512, 2), (512, 512, 2)]
FORMS = [("nchw", torch.float32), ("nhwc", torch.float32),
         ("nchw", torch.bfloat16), ("nhwc", torch.bfloat16)]


def timed(fn, iters):
    for _ in range(3):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


def measure(cin, cout, hw, n, layout, dtype, iters):
    fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
    gen = torch.Generator(device="cuda").manual_seed(cin * 7 + hw)
    # Spikes (0/1) except the first layer's image.
    x = torch.rand(n, cin, hw, hw, device="cuda", generator=gen)
    if cin != 3:
        x = (x < 0.2).float()
    x = x.to(dtype).contiguous(memory_format=fmt)
    w = (torch.randn(cout, cin, 3, 3, device="cuda", generator=gen) * 0.05)
    w = w.to(dtype).contiguous(memory_format=fmt)
    gy = torch.randn(n, cout, hw, hw, device="cuda", generator=gen)
    gy = gy.to(dtype).contiguous(memory_format=fmt)
    grad_input = cin != 3
    fwd = timed(lambda: F.conv2d(x, w, padding=1), iters)
    bwd_data = (timed(lambda: torch.ops.aten.convolution_backward(
        gy, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
        [True, False, False]), iters) if grad_input else 0.0)
    bwd_weight = timed(lambda: torch.ops.aten.convolution_backward(
        gy, x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1,
        [False, True, False]), iters)
    return fwd, bwd_data, bwd_weight


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=256, help="N = T * B")
    p.add_argument("--iters", type=int, default=50)
    a = p.parse_args()
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = True
    totals = {}
    for cin, cout, hw in LAYERS:
        for layout, dtype in FORMS:
            form = f"{layout}-{'bf16' if dtype == torch.bfloat16 else 'tf32'}"
            fwd, bd, bw = measure(cin, cout, hw, a.batch, layout, dtype,
                                  a.iters)
            print(json.dumps({"layer": f"{cin}->{cout}@{hw}", "form": form,
                              "fwd_ms": round(fwd, 4),
                              "bwd_data_ms": round(bd, 4),
                              "bwd_weight_ms": round(bw, 4)}), flush=True)
            t = totals.setdefault(form, [0.0, 0.0, 0.0])
            t[0] += fwd
            t[1] += bd
            t[2] += bw
    base = totals["nchw-tf32"]
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"cuDNN {torch.backends.cudnn.version()}, N = {a.batch}",
          file=sys.stderr)
    print("# form: fwd / bwd-data / bwd-weight / all ms (ratio to nchw-tf32)",
          file=sys.stderr)
    for form, (f, d, w) in totals.items():
        print(f"# {form:10s} {f:7.3f} {d:7.3f} {w:7.3f} {f + d + w:7.3f}"
              f"  ({(f + d + w) / sum(base):.2f})", file=sys.stderr)


if __name__ == "__main__":
    main()
