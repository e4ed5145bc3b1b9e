"""torch.matmul on one GPU, the reference for kiln's cuBLAS baseline (issue 17).

Run on a GPU machine: python3 scripts/torch_matmul.py --shape 8192x8192x8192 [--dtype bf16] [--json F]
C = A · Bᵀ with A M×K and B N×K row-major (kiln's "nk" layout, nn.Linear's weight), random
inputs, time = median over iterations of CUDA-event times, several input sets rotated when they
fit in L2. --settle S first runs the product back to back for S seconds, so that the chip is at
the clock it holds under sustained load (as in kiln's interleaved rounds). Prints one JSON line
per shape.
"""
import argparse
import json
import statistics

import torch


def median_us(call, warmup, iters):
    for i in range(warmup):
        call(i)
    torch.cuda.synchronize()
    events = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    events[0].record()
    for i in range(iters):
        call(i)
        events[i + 1].record()
    torch.cuda.synchronize()
    times = [events[i].elapsed_time(events[i + 1]) * 1000.0 for i in range(iters)]
    return statistics.median(times), min(times), max(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", action="append", required=True, help="MxNxK, repeatable")
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds of back-to-back products before timing")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    rows = []
    for text in args.shape:
        m, n, k = (int(v) for v in text.split("x"))
        per_set = (m * k + n * k) * 2
        sets = max(1, min(8, (2 * l2) // per_set + 1))
        a = [torch.randn(m, k, dtype=dtype, device="cuda") for _ in range(sets)]
        b = [torch.randn(n, k, dtype=dtype, device="cuda") for _ in range(sets)]
        c = torch.empty(m, n, dtype=dtype, device="cuda")
        if args.settle > 0:
            import time
            end = time.monotonic() + args.settle
            while time.monotonic() < end:
                for i in range(20):
                    torch.matmul(a[i % sets], b[i % sets].t(), out=c)
                torch.cuda.synchronize()
        med, lo, hi = median_us(lambda i: torch.matmul(a[i % sets], b[i % sets].t(), out=c),
                                args.warmup, args.iters)
        row = {"shape": text, "dtype": args.dtype, "torch_matmul_us": med, "min_us": lo,
               "max_us": hi, "input_sets": sets, "settle_s": args.settle}
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(),
                       "warmup": args.warmup, "iterations": args.iters, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
