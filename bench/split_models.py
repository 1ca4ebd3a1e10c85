#!/usr/bin/env python3
"""The time-split benchmark models, written as multi-step snn MLIR.

    mlp:  input [T, B, 256] -> 4 x (linear WIDTH + LIF) -> linear 10 + LIF
    conv: input [T, B, 2, 16, 16] -> 4 x (conv3x3 CH + LIF) -> flatten ->
          linear 10 + LIF

Both have five neuron layers (four hidden and the output), no batch norm
(--snn-split-time refuses training batch norm) and LIF neurons as
SpikingJelly's LIFNode(tau=2).

    python3 bench/split_models.py mlp --steps 1024 > mlp-T1024.mlir
"""

import argparse
import sys

LIF = '{k = 0.5, c = 0.5}'


def mlp(steps, batch, width, layers=4, inputs=256, classes=10):
    lines = [f"func.func @forward(%x: tensor<{steps}x{batch}x{inputs}xf32>) -> "
             f"tensor<{steps}x{batch}x{classes}xf32> {{"]
    prev, features = "%x", inputs
    for i in range(layers + 1):
        out = classes if i == layers else width
        t_in = f"tensor<{steps}x{batch}x{features}xf32>"
        t_out = f"tensor<{steps}x{batch}x{out}xf32>"
        lines += [
            f'  %w{i} = snn.param "fc{i}.weight" {{init = #snn.init<kaiming_uniform>}} '
            f": tensor<{out}x{features}xf32>",
            f"  %h{i} = snn.linear {prev}, %w{i} : {t_in}, tensor<{out}x{features}xf32> -> {t_out}",
            f"  %s{i} = snn.lif %h{i} {LIF} : {t_out}"]
        prev, features = f"%s{i}", out
    lines += [f"  return {prev} : tensor<{steps}x{batch}x{classes}xf32>", "}"]
    return "\n".join(lines) + "\n"


def conv(steps, batch, channels, layers=4, in_channels=2, size=16, classes=10):
    lead = f"{steps}x{batch}"
    lines = [f"func.func @forward(%x: tensor<{lead}x{in_channels}x{size}x{size}xf32>) -> "
             f"tensor<{lead}x{classes}xf32> {{"]
    prev, ch = "%x", in_channels
    for i in range(layers):
        t_in = f"tensor<{lead}x{ch}x{size}x{size}xf32>"
        t_out = f"tensor<{lead}x{channels}x{size}x{size}xf32>"
        w = f"tensor<{channels}x{ch}x3x3xf32>"
        lines += [
            f'  %w{i} = snn.param "conv{i}.weight" {{init = #snn.init<kaiming_uniform>}} : {w}',
            f"  %c{i} = snn.conv2d {prev}, %w{i} {{padding = array<i64: 1, 1>}} : {t_in}, {w} -> {t_out}",
            f"  %s{i} = snn.lif %c{i} {LIF} : {t_out}"]
        prev, ch = f"%s{i}", channels
    flat = channels * size * size
    lines += [
        f"  %flat = snn.flatten {prev} : tensor<{lead}x{ch}x{size}x{size}xf32> -> tensor<{lead}x{flat}xf32>",
        f'  %wf = snn.param "fc.weight" {{init = #snn.init<kaiming_uniform>}} : tensor<{classes}x{flat}xf32>',
        f"  %hf = snn.linear %flat, %wf : tensor<{lead}x{flat}xf32>, tensor<{classes}x{flat}xf32> "
        f"-> tensor<{lead}x{classes}xf32>",
        f"  %out = snn.lif %hf {LIF} : tensor<{lead}x{classes}xf32>",
        f"  return %out : tensor<{lead}x{classes}xf32>", "}"]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", choices=["mlp", "conv"])
    ap.add_argument("--steps", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=None,
                    help="default: 16 (mlp), 4 (conv)")
    ap.add_argument("--width", type=int, default=1024,
                    help="mlp hidden neurons / conv channels (default 16)")
    args = ap.parse_args(argv)
    if args.model == "mlp":
        sys.stdout.write(mlp(args.steps, args.batch or 16, args.width))
    else:
        sys.stdout.write(conv(args.steps, args.batch or 4,
                              16 if args.width == 1024 else args.width))
    return 0


if __name__ == "__main__":
    sys.exit(main())
