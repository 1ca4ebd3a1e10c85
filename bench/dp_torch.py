#!/usr/bin/env python3
"""Data-parallel spiking VGG-11 in PyTorch (DistributedDataParallel over NCCL):
the peers' side of `bench/gpu-dp.sh scale`. Same model, T, batch per GPU and
TF32 setting as `bench/vgg11.py`; one process per GPU (torch.multiprocessing),
gradients all-reduced by DDP in its buckets during the backward.

For each LIF implementation (torch.compile of the whole model, SpikingJelly
LIFNode with the cupy and triton backends) and each world size 1, 2, 4, ..
up to the GPUs present: the median step time over --steps timed steps (after
warm-up), samples/s over all ranks and the speedup over one GPU. One JSON
line per run on stdout and a table in --out.
"""

import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

import common
import vgg11


def make_lif_factory(impl, peers_dir, dev):
    if impl == "torch.compile":
        return lambda: vgg11.TorchLIF(), True
    sj, why = common.import_spikingjelly(peers_dir)
    if sj is None:
        raise RuntimeError(why)
    return vgg11.sj_lif(sj, impl.split()[1], dev), False


def worker(rank, world, args, impl, port, queue):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    torch.backends.cuda.matmul.allow_tf32 = args.tf32 == "on"
    torch.backends.cudnn.allow_tf32 = args.tf32 == "on"
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    try:
        make_lif, compiled = make_lif_factory(impl, args.peers_dir, dev)
        torch.manual_seed(0)
        model = vgg11.SpikingVGG11(make_lif, args.T).to(dev)
        ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank])
        fwd = torch.compile(ddp) if compiled else ddp
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        g = torch.Generator(device=dev).manual_seed(rank)
        x = torch.rand(args.T, args.batch, 3, 32, 32, device=dev, generator=g)
        y = torch.randint(0, 10, (args.batch,), device=dev, generator=g)

        def step():
            for lif in model.lifs:
                if hasattr(lif, "reset"):
                    lif.reset()
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(fwd(x).mean(0), y)
            loss.backward()
            opt.step()

        for _ in range(args.warmup):
            step()
        times = []
        for _ in range(args.steps):
            torch.cuda.synchronize(dev)
            dist.barrier()
            t0 = time.perf_counter()
            step()
            torch.cuda.synchronize(dev)
            times.append(time.perf_counter() - t0)
        # The slowest rank sets the pace of a synchronous step.
        t = torch.tensor(sorted(times)[len(times) // 2], device=dev)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        if rank == 0:
            queue.put({"impl": impl, "gpus": world, "step_ms": 1000 * t.item()})
    except Exception as e:  # noqa: BLE001 - report and go on with the next run
        if rank == 0:
            queue.put({"impl": impl, "gpus": world, "error": repr(e)[:300]})
    finally:
        dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peers-dir", default=".peers")
    ap.add_argument("--out", default=None, help="folder for the table (markdown + JSON)")
    ap.add_argument("--impl", nargs="+", default=["torch.compile", "SJ cupy", "SJ triton"])
    ap.add_argument("--T", type=int, default=4)
    ap.add_argument("--batch", type=int, default=64, help="per GPU")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--tf32", choices=["on", "off"], default="on")
    ap.add_argument("--max-gpus", type=int, default=torch.cuda.device_count())
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("dp_torch.py: needs CUDA GPUs")
    worlds = [w for w in (1, 2, 4, 8) if w <= args.max_gpus]
    ctx = mp.get_context("spawn")
    rows, port = [], 29700
    for impl in args.impl:
        for world in worlds:
            queue = ctx.Queue()
            port += 1
            mp.spawn(worker, args=(world, args, impl, port, queue), nprocs=world, join=True)
            r = queue.get()
            r["batch_per_gpu"] = args.batch
            if "step_ms" in r:
                r["samples_per_s"] = 1000 * args.batch * world / r["step_ms"]
            rows.append(r)
            print(json.dumps(r), flush=True)
    for r in rows:
        base = next((b for b in rows if b["impl"] == r["impl"] and b["gpus"] == 1
                     and "samples_per_s" in b), None)
        if base and "samples_per_s" in r:
            r["speedup"] = r["samples_per_s"] / base["samples_per_s"]
    name = common.device_name(torch.device("cuda", 0))
    body = [[r["impl"], r["gpus"], common.fmt(r.get("step_ms")),
             common.fmt(r.get("samples_per_s"), 0), common.fmt(r.get("speedup"), 2),
             r.get("error", "")] for r in rows]
    date = __import__("datetime").date.today().isoformat()
    md = "\n".join([
        f"# PyTorch DDP spiking VGG-11, T={args.T}, batch {args.batch} per GPU, "
        f"TF32 {args.tf32} — {len(worlds) and worlds[-1]} x {name}, {date}", "",
        f"`bench/dp_torch.py`: DistributedDataParallel over NCCL, one process per GPU; "
        f"median of {args.steps} steps, slowest rank.", "",
        common.markdown_table(["impl", "GPUs", "step ms", "samples/s", "speedup", "error"], body),
        ""])
    print(md)
    if args.out:
        stem = common.write_results(args.out, "dp-torch", name, dict(rows=rows), md)
        print(f"wrote {stem}.json and {stem}.md")


if __name__ == "__main__":
    main()
