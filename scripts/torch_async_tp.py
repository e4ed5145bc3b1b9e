"""PyTorch async-TP GEMM + ReduceScatter, the outside reference for `kiln overlap bench --op rs`.

Run on a GPU machine: python3 scripts/torch_async_tp.py --gpus 4 [--json F]
For each shape (per-GPU GEMM M×N×K, bf16): torch.ops.symm_mem.fused_matmul_reduce_scatter and
serial matmul + reduce_scatter_tensor, time = median over iterations of the max over ranks, after
--settle-seconds of torch.mm back to back (the clock a sustained load holds, as kiln's bench).
--inputs uniform draws A and B uniform in [-1, 1) as kiln's bench does by default (randn: PyTorch's).
NVLink multicast stays off (TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NCCL_NVLS_ENABLE=0).
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SHAPES = [(4096, 8192, 8192), (8192, 8192, 8192), (16384, 8192, 4096), (8192, 4096, 14336),
          (4096, 8192, 2048), (16384, 16384, 2048)]


def samples(call, warmup, iters):
    """Per-call ms of `iters` calls back to back after `warmup`, max over ranks."""
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
    return times.tolist()


def timed_rounds(calls, warmup, iters, rounds):
    """Median us per contender. rounds > 1 interleaves them as kiln's overlap bench does (each
    round runs every contender's iters/rounds calls in turn), so that both processes' figures come
    from the same timing context; rounds = 1 times each contender's calls back to back alone."""
    per_round = max(iters // rounds, 1)
    got = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            got[name] += samples(call, warmup, per_round)
    return {name: statistics.median(v) * 1000.0 for name, v in got.items()}


def settle(call, seconds):
    """`call` back to back for `seconds` (this rank alone: no collective), so that the timing
    starts at the clock a sustained load holds at the power cap, as kiln's overlap bench does
    before its final figures (--settle-seconds)."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        for _ in range(8):
            call()
        torch.cuda.synchronize()


def operand(rows, cols, inputs):
    if inputs == "uniform":
        return (torch.rand(rows, cols, device="cuda") * 2 - 1).to(torch.bfloat16)
    return torch.randn(rows, cols, dtype=torch.bfloat16, device="cuda")


def worker(rank, world, warmup, iters, rounds, port, out, shapes, settle_seconds, inputs):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), NCCL_NVLS_ENABLE="0",
                      TORCH_SYMM_MEM_DISABLE_MULTICAST="1")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    import torch.distributed._symmetric_memory as symm_mem
    group = dist.group.WORLD
    symm_mem.enable_symm_mem_for_group(group.group_name)
    rows = []
    for m, n, k in shapes:
        a = operand(m, k, inputs)
        b = operand(k, n, inputs)
        out_rs = torch.empty(m // world, n, dtype=torch.bfloat16, device="cuda")
        row = {"shape": f"{m}x{n}x{k}"}

        def serial():
            dist.reduce_scatter_tensor(out_rs, a @ b)

        product = a @ b

        def matmul_alone():
            torch.mm(a, b, out=product)

        def reduce_scatter_alone():
            dist.reduce_scatter_tensor(out_rs, product)

        def fused():
            torch.ops.symm_mem.fused_matmul_reduce_scatter(a, b, "sum", 0, group.group_name)

        # The serial's two parts alone too, to tell a slower GEMM from a slower collective when
        # kiln's serial (cuBLAS + NCCL) and this one differ.
        calls = {"serial_us": serial, "matmul_us": matmul_alone,
                 "reduce_scatter_us": reduce_scatter_alone}
        try:
            fused()
            calls["async_tp_us"] = fused
        except Exception as error:  # report, do not hide
            row["async_tp_error"] = repr(error)
        settle(matmul_alone, settle_seconds)
        row.update(timed_rounds(calls, warmup, iters, rounds))
        rows.append(row)
        if rank == 0:
            print(json.dumps(row), flush=True)
    if rank == 0 and out:
        with open(out, "w") as f:
            json.dump({"torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
                       "world_size": world, "device": torch.cuda.get_device_name(),
                       "warmup": warmup, "iterations": iters, "rounds": rounds,
                       "settle_seconds": settle_seconds, "inputs": inputs, "rows": rows}, f,
                      indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=1,
                        help="interleave the contenders over this many rounds (kiln's bench: 2)")
    parser.add_argument("--port", type=int, default=29533)
    parser.add_argument("--json", default="")
    parser.add_argument("--shape", action="append", help="MxNxK per GPU, repeatable (default: the six)")
    parser.add_argument("--settle-seconds", type=float, default=1.0,
                        help="seconds of torch.mm back to back before each shape's timing, as "
                             "kiln's overlap bench settles (0: none)")
    parser.add_argument("--inputs", choices=("randn", "uniform"), default="randn",
                        help="values of A and B: randn (N(0, 1)) or uniform in [-1, 1) (kiln's "
                             "bench default); a power-capped GEMM's clock depends on them")
    args = parser.parse_args()
    if not 0 <= args.settle_seconds <= 60:
        parser.error(f"--settle-seconds {args.settle_seconds}: accepted range 0..60")
    shapes = SHAPES
    if args.shape:
        shapes = []
        for text in args.shape:
            parts = text.split("x")
            if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
                parser.error(f"--shape {text}: expected MxNxK with positive integers")
            shapes.append(tuple(int(p) for p in parts))
    for m, n, k in shapes:
        if m % args.gpus:
            parser.error(f"--shape {m}x{n}x{k}: M must divide by --gpus {args.gpus} (ReduceScatter rows)")
    if args.rounds < 1 or args.iters < args.rounds:
        parser.error(f"--rounds {args.rounds}: between 1 and --iters ({args.iters})")
    mp.spawn(worker, args=(args.gpus, args.warmup, args.iters, args.rounds, args.port, args.json,
                           shapes, args.settle_seconds, args.inputs),
             nprocs=args.gpus)
