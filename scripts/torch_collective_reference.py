"""NCCL through PyTorch, the reference the collective bench is held to (busbw at one size).

Run on a GPU machine: python3 scripts/torch_collective_reference.py --gpus 2 --bytes 1G
Sizes follow nccl-tests / kiln (the full vector); time = median over iterations of the max over
ranks; busbw uses nccl-tests' factors.
"""
import argparse
import json
import os
import statistics

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

FACTORS = {"allreduce": lambda n: 2 * (n - 1) / n, "reducescatter": lambda n: (n - 1) / n,
           "allgather": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n}


def parse_bytes(text):
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * scale[text[-1]] if text[-1] in scale else int(text)


def worker(rank, world, nbytes, warmup, iters, port, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    count = nbytes // 2 // world * world
    results = {}
    for op in FACTORS:
        full = torch.randn(count, dtype=torch.bfloat16, device="cuda")
        block = torch.randn(count // world, dtype=torch.bfloat16, device="cuda")
        out_full = torch.empty_like(full)
        call = {
            "allreduce": lambda: dist.all_reduce(full),
            "reducescatter": lambda: dist.reduce_scatter_tensor(block, full),
            "allgather": lambda: dist.all_gather_into_tensor(out_full, block),
            "alltoall": lambda: dist.all_to_all_single(out_full, full),
        }[op]
        for _ in range(warmup):
            call()
        torch.cuda.synchronize()
        events = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
        events[0].record()
        for i in range(iters):
            call()
            events[i + 1].record()
        torch.cuda.synchronize()
        times = torch.tensor([events[i].elapsed_time(events[i + 1]) for i in range(iters)], device="cuda")
        dist.all_reduce(times, op=dist.ReduceOp.MAX)
        median_us = statistics.median(times.tolist()) * 1e3
        algbw = count * 2 / (median_us * 1e-6) / 1e9
        results[op] = {"bytes": count * 2, "time_us": median_us, "algbw_gbps": algbw,
                       "busbw_gbps": algbw * FACTORS[op](world)}
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"world_size": world, "torch": torch.__version__,
                       "nccl": ".".join(map(str, torch.cuda.nccl.version())), "results": results}, f, indent=2)
        for op, r in results.items():
            print(f"torch {op:14s} {r['bytes']:>12d} B  {r['time_us']:10.1f} us  busbw {r['busbw_gbps']:7.1f} GB/s")
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    parser.add_argument("--bytes", default="1G")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--port", type=int, default=29577)
    parser.add_argument("--json", default="torch_collectives.json")
    args = parser.parse_args()
    mp.spawn(worker, args=(args.gpus, parse_bytes(args.bytes), args.warmup, args.iters, args.port,
                           args.json), nprocs=args.gpus)
