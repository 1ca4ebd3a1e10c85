"""Shared pieces of the benchmarks: timing (CUDA events, or the wall clock on
the CPU smoke-test path), device copy bandwidth, SpikingJelly from a source
folder, the external "ours" command, and the JSON/Markdown result files."""

import datetime
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

import torch


def add_common_args(ap):
    ap.add_argument("--device", default="cuda",
                    help="cuda, cuda:N or cpu (cpu: smoke test only)")
    ap.add_argument("--quick", action="store_true",
                    help="tiny sizes and few repetitions (smoke test)")
    ap.add_argument("--peers-dir", default=".peers",
                    help="folder holding SpikingJelly's source: the spikingjelly/ folder of "
                         "github.com/fangwei123456/spikingjelly (never committed here)")
    ap.add_argument("--ours", metavar="CMD",
                    help="command timing snn-mlir; it prints JSON lines (see bench/README.md); "
                         "'{T}' in CMD is replaced by the number of steps")
    ap.add_argument("--repeat", type=int, default=None,
                    help="timed repetitions (default 20; median reported)")
    ap.add_argument("--out", default="bench/results", help="folder for the result files")


def setup_device(name, tf32=True):
    dev = torch.device(name)
    if dev.type == "cuda" and dev.index is None:
        dev = torch.device("cuda", 0)
    if dev.type == "cuda" and not torch.cuda.is_available():
        sys.exit(f"error: --device {name}: no CUDA device is visible to PyTorch "
                 "(run on the GPU machine, or pass --device cpu --quick for a smoke test)")
    if dev.type == "cuda":
        torch.cuda.set_device(dev)
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cudnn.benchmark = True
    return dev


def device_name(dev):
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    import platform
    return f"cpu-{platform.machine()}"


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def time_ms(fn, dev, repeat=20, warmup=3):
    """Median milliseconds of fn() over `repeat` runs after `warmup` runs."""
    for _ in range(warmup):
        fn()
    sync(dev)
    times = []
    for _ in range(repeat):
        if dev.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop))
        else:
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
    return float(statistics.median(times))


def reset_peak(dev):
    if dev.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(dev)


def peak_mb(dev):
    return torch.cuda.max_memory_allocated(dev) / 2**20 if dev.type == "cuda" else float("nan")


def copy_bandwidth(dev, nbytes, repeat=20):
    """Bytes per second of a device-to-device clone (read + write counted)."""
    a = torch.empty(nbytes // 4, dtype=torch.float32, device=dev).uniform_()
    ms = time_ms(lambda: a.clone(), dev, repeat=repeat)
    del a
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    return 2 * nbytes / (ms * 1e-3)


def import_spikingjelly(peers_dir):
    """(neuron, surrogate, functional) from a SpikingJelly source folder, or
    the reason it is unavailable."""
    if peers_dir:
        path = os.path.abspath(peers_dir)
        if not os.path.isdir(os.path.join(path, "spikingjelly")):
            return None, (f"{path}/spikingjelly not found: extract the spikingjelly/ folder "
                          "of github.com/fangwei123456/spikingjelly there "
                          "(or pass --peers-dir)")
        sys.path.insert(0, path)
    try:
        from spikingjelly.activation_based import functional, neuron, surrogate
    except Exception as e:  # noqa: BLE001 - the harness runs on without it
        return None, f"SpikingJelly does not import: {e!r}"
    return (neuron, surrogate, functional), None


def run_ours(cmd, **subst):
    """Runs the "ours" command (placeholders like {T} substituted) and returns
    the JSON objects it printed, one per line; other lines are ignored."""
    argv = [a.format(**subst) for a in shlex.split(cmd)]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"--ours command {argv[0]!r} failed to run: {e}") from None
    if p.returncode:
        raise RuntimeError(f"--ours command exited with {p.returncode}: "
                           f"{(p.stderr or p.stdout).strip()[-400:]}")
    rows = []
    for line in p.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    if not rows:
        raise RuntimeError("--ours command printed no JSON line "
                           f"(its output ended with: {p.stdout.strip()[-200:]!r})")
    return rows


def fmt(v, digits=3):
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    return f"{v:.{digits}f}"


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def write_results(out_dir, kind, dev_name, payload, markdown):
    """<out>/<date>-<device>-<kind>.{json,md}; returns the stem."""
    date = datetime.date.today().isoformat()
    tag = re.sub(r"[^A-Za-z0-9.-]+", "_", dev_name).strip("_")
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, f"{date}-{tag}-{kind}")
    with open(stem + ".json", "w") as f:
        json.dump(dict(payload, device=dev_name, date=date,
                       torch=torch.__version__), f, indent=1)
    with open(stem + ".md", "w") as f:
        f.write(markdown + "\n")
    return stem
