"""`python -m kiln.bench`: kiln's ops, PyTorch serial (matmul + NCCL collective) and PyTorch's
async-TP (torch.ops.symm_mem.*) interleaved in the same processes and the same window, per shape.

Run under torchrun (one process per GPU), or let it start its own ranks: `--nproc N` (more ranks
than GPUs share them: correctness only, the times are not speeds). Shapes are per-rank GEMMs
M x N x K: ReduceScatter and AllReduce multiply A (M x K) by B (K x N); AllGather gathers A's
M rows from M / world-row shards first. Every variant's output is checked against the serial one
before timing. Times are the maximum over ranks of each iteration (CUDA events), medians over
rounds in rotated order; operands are rotated over copies when they fit twice in L2.
"""
import argparse
import json
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist

OPS = ("rs", "ar", "ag")


def parse_shape(text):
    try:
        m, n, k = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shape {text!r}: expected MxNxK, e.g. 8192x8192x8192")
    if min(m, n, k) <= 0:
        raise argparse.ArgumentTypeError(f"--shape {text!r}: M, N and K must be positive")
    return m, n, k


def arguments(argv=None):
    p = argparse.ArgumentParser(prog="python -m kiln.bench", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--op", choices=OPS, action="append", help="rs, ar, ag (repeat; default all)")
    p.add_argument("--shape", type=parse_shape, action="append",
                   help="per-rank M x N x K (repeat; default 8192x8192x8192 and 4096x8192x2048)")
    p.add_argument("--dtype", choices=("bf16", "fp16"), default="bf16")
    p.add_argument("--layout", choices=("nk", "kn"), default="nk",
                   help="B as nn.Linear's weight.t() (nk, default) or stored K x N (kn)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=10, help="timed iterations per round and variant")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--nproc", type=int, default=0,
                   help="start this many ranks here (default: run under torchrun's environment)")
    p.add_argument("--json", help="write the rows and their provenance to this file")
    a = p.parse_args(argv)
    for name in ("warmup", "iters", "rounds"):
        low = 0 if name == "warmup" else 1
        if getattr(a, name) < low:
            p.error(f"--{name} {getattr(a, name)}: must be >= {low}")
    if a.nproc < 0 or a.nproc > 64:
        p.error(f"--nproc {a.nproc}: must be 1..64 (0: torchrun's environment)")
    a.op = a.op or list(OPS)
    a.shape = a.shape or [(8192, 8192, 8192), (4096, 8192, 2048)]
    return a


def operands(m, n, k, dtype, layout, rank, sets):
    g = torch.Generator(device="cuda").manual_seed(1000 + rank)
    out = []
    for _ in range(sets):
        a = (torch.rand(m, k, generator=g, device="cuda") * 2 - 1).to(dtype)
        w = (torch.rand((n, k) if layout == "nk" else (k, n), generator=g, device="cuda") * 2 - 1)
        out.append((a, w.to(dtype).t() if layout == "nk" else w.to(dtype)))
    return out


def variants(op, group, name, world):
    """{variant: call(a, b) -> output}; async-TP only where PyTorch has the op."""
    v = {}
    if op == "rs":
        def serial(a, b):
            c = a @ b
            out = c.new_empty(c.shape[0] // world, c.shape[1])
            dist.reduce_scatter_tensor(out, c, group=group)
            return out
        v["kiln"] = lambda a, b: torch.ops.kiln.fused_matmul_reduce_scatter(a, b, "sum", 0, name)
        v["torch serial"] = serial
        v["torch async-TP"] = lambda a, b: torch.ops.symm_mem.fused_matmul_reduce_scatter(
            a, b, "sum", 0, name)
    elif op == "ar":
        def serial(a, b):
            c = a @ b
            dist.all_reduce(c, group=group)
            return c
        v["kiln"] = lambda a, b: torch.ops.kiln.matmul_all_reduce(a, b, name)
        v["torch serial"] = serial
    else:
        def serial(a, b):
            full = a.new_empty(a.shape[0] * world, a.shape[1])
            dist.all_gather_into_tensor(full, a, group=group)
            return full @ b
        v["kiln"] = lambda a, b: torch.ops.kiln.fused_all_gather_matmul(
            a, [b], 0, name, return_A=False)[1][0]
        v["torch serial"] = serial
        v["torch async-TP"] = lambda a, b: torch.ops.symm_mem.fused_all_gather_matmul(
            a, [b], 0, name, return_A=False)[1][0]
    return v


def time_interleaved(calls, inputs, args, group):
    """{variant: [max-over-ranks us per iteration]} over rotated rounds."""
    names = list(calls)
    times = {n: [] for n in names}
    count = 0
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            call = calls[name]
            for _ in range(args.warmup if r == 0 else 1):
                call(*inputs[count % len(inputs)])
                count += 1
            dist.barrier(group=group)
            events = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters + 1)]
            events[0].record()
            for i in range(args.iters):
                call(*inputs[count % len(inputs)])
                count += 1
                events[i + 1].record()
            torch.cuda.synchronize()
            us = torch.tensor([events[i].elapsed_time(events[i + 1]) * 1e3
                               for i in range(args.iters)], device="cuda")
            dist.all_reduce(us, op=dist.ReduceOp.MAX, group=group)
            times[name] += us.tolist()
    return times


def summary(us):
    med = statistics.median(us)
    return {"median": med, "min": min(us), "max": max(us),
            "cv": statistics.pstdev(us) / statistics.fmean(us) if len(us) > 1 else 0.0,
            "count": len(us)}


def run(args):
    rank, world = dist.get_rank(), dist.get_world_size()
    group = dist.group.WORLD
    import kiln
    # Registers torch.ops.symm_mem (PyTorch's async-TP ops); the deprecated
    # enable_symm_mem_for_group whose import used to do it is not needed in 2.11 (dec38f9, which
    # left async-TP untimed: "no attribute 'fused_matmul_reduce_scatter'", H100 2026-11-25).
    import torch.distributed._symmetric_memory  # noqa: F401
    name = kiln.init_group(group)
    shared = kiln_shares_gpu(group)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    rows = []
    for op in args.op:
        for m, n, k in args.shape:
            if op in ("rs", "ag") and m % world:
                raise SystemExit(f"--shape {m}x{n}x{k}: M must be divisible by the world size "
                                 f"{world} for {op}")
            am = m // world if op == "ag" else m
            sets = max(1, min(4, (2 * l2) // ((am * k + n * k) * 2) + 1))
            inputs = operands(am, n, k, dtype, args.layout, rank, sets)
            calls = variants(op, group, name, world)
            row = {"op": op, "shape": f"{m}x{n}x{k}", "dtype": args.dtype, "layout": args.layout,
                   "world": world, "shared_gpu": shared, "input_sets": sets, "unavailable": {}}
            reference = calls["torch serial"](*inputs[0]).float()
            for vname in list(calls):
                if vname == "torch serial":
                    continue
                why = ""
                try:
                    got = calls[vname](*inputs[0]).float()
                    err = (got - reference).abs().max().item() / max(reference.abs().max().item(), 1e-6)
                except Exception as e:  # noqa: BLE001  (async-TP may be unavailable here)
                    err, why = float("inf"), f"{type(e).__name__}: {e}"[:300]
                # Every rank drops the same variants (each checks only its own output): a variant
                # one rank dropped alone would leave the others waiting in its collectives.
                worst = torch.tensor([err], dtype=torch.float64, device="cuda")
                dist.all_reduce(worst, op=dist.ReduceOp.MAX, group=group)
                row[f"{vname} error"] = worst.item()
                if worst.item() > 2e-2:
                    row["unavailable"][vname] = why or (
                        f"max relative error {worst.item():.3g} against torch serial on some rank")
                    del calls[vname]
            if "kiln" in row["unavailable"]:
                raise SystemExit(f"rank {rank}: kiln {op} {m}x{n}x{k}: {row['unavailable']['kiln']}")
            if op == "ag":
                row["kiln plan"] = "one NCCL broadcast per shard, cuBLAS on each arrived shard"
            else:
                row["kiln plan"] = kiln.plan_of(op, m, n, k, dtype, name,
                                                weight_kn=args.layout == "kn")
            times = time_interleaved(calls, inputs, args, group)
            for vname, us in times.items():
                row[vname] = summary(us)
            base = row["torch serial"]["median"]
            row["speedup vs serial"] = base / row["kiln"]["median"]
            if "torch async-TP" in row:
                row["speedup vs async-TP"] = row["torch async-TP"]["median"] / row["kiln"]["median"]
            rows.append(row)
            if rank == 0:
                print_row(row)
    return rows


def kiln_shares_gpu(group):
    mine = (socket.gethostname(), torch.cuda.current_device())
    everyone = [None] * dist.get_world_size(group)
    dist.all_gather_object(everyone, mine, group=group)
    return everyone.count(mine) > 1


def print_row(row):
    med = lambda v: f"{row[v]['median']:9.1f}" if v in row else "      n/a"  # noqa: E731
    line = (f"{row['op']:>3} {row['shape']:>18} {row['dtype']} {med('kiln')} {med('torch serial')} "
            f"{med('torch async-TP')}  x{row['speedup vs serial']:.3f}")
    if "speedup vs async-TP" in row:
        line += f"  x{row['speedup vs async-TP']:.3f}"
    print(line, flush=True)
    for vname, why in row["unavailable"].items():
        print(f"    {vname}: not timed ({why})", flush=True)
    # Which plan (and, for ReduceScatter, which algorithm) kiln ran and why: the figures above
    # mean little without it.
    print(f"    kiln plan: {row['kiln plan']}", flush=True)


def rank_main(local_rank, args, world, port):
    os.environ.update({"RANK": str(local_rank), "WORLD_SIZE": str(world),
                       "LOCAL_RANK": str(local_rank), "MASTER_ADDR": "127.0.0.1",
                       "MASTER_PORT": str(port)})
    main_in_rank(args)


def main_in_rank(args):
    for var, value in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
                       ("NVSHMEM_DISABLE_NVLS", "1")):
        os.environ.setdefault(var, value)
    local = int(os.environ.get("LOCAL_RANK", "0"))
    gpus = torch.cuda.device_count()
    if gpus == 0:
        raise SystemExit("kiln.bench: no GPU visible")
    torch.cuda.set_device(local % gpus)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    if local_world > gpus:  # several ranks per GPU: NCCL needs a distinct host id for each
        os.environ.setdefault("NCCL_HOSTID", f"{socket.gethostname()}:kiln-bench-{local}")
    dist.init_process_group("nccl", device_id=torch.device("cuda", local % gpus))
    rank = dist.get_rank()
    if rank == 0:
        print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, world {world}, "
              f"{args.dtype}, B {args.layout}, {args.rounds} rounds x {args.iters} iterations; "
              "median us (max over ranks)", flush=True)
        print("# op              shape dtype     kiln    serial  async-TP  kiln speedup vs serial"
              " | vs async-TP", flush=True)
    rows = run(args)
    if rank == 0 and args.json:
        with open(args.json, "w") as f:
            json.dump({"command": " ".join(sys.argv), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
                       "device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "nccl": ".".join(map(str, torch.cuda.nccl.version())), "rows": rows}, f,
                      indent=1)
    dist.barrier()
    dist.destroy_process_group()


def main(argv=None):
    args = arguments(argv)
    if args.nproc:
        import torch.multiprocessing as mp
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        os.environ["LOCAL_WORLD_SIZE"] = str(args.nproc)
        mp.spawn(rank_main, args=(args, args.nproc, port), nprocs=args.nproc, join=True)
    else:
        main_in_rank(args)


if __name__ == "__main__":
    main()
