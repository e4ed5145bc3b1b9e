#!/usr/bin/env python3
"""How fast the GPU writes a large fp32 array, next to how fast it copies one: the practical
ceiling of output-bound kernels such as kb1-7 and kb1-9 (a 32768 x 32768 fp32 product, 4.3 GB
written from operands that fit in L2), whose T_roof counts the written bytes at the spec-sheet
HBM rate (3350 GB/s on an H100 SXM).

Run on the GPU machine (torch with CUDA):
    python3 scripts/hbm_write_ceiling.py [--gib 4] [--iters 20] [--json out.json]

Each contender: 3 warm-up launches, then --iters launches each between CUDA events; the median
and the interquartile range are reported, in GB/s of bytes moved (a copy counts read + write).
Contenders, taking turns round by round: fill_ (write only), zero_ (write only, memset), copy_
(read + write, the same bytes each way), and torch.mul by a scalar into a preallocated output.
"""
import argparse
import json
import statistics
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=4.0, help="array size in GiB (0.25-32)")
    parser.add_argument("--iters", type=int, default=20, help="timed launches per round (1-1000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (1-20)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    if not 0.25 <= args.gib <= 32:
        parser.error("--gib: between 0.25 and 32")
    if not 1 <= args.iters <= 1000:
        parser.error("--iters: between 1 and 1000")
    if not 1 <= args.rounds <= 20:
        parser.error("--rounds: between 1 and 20")
    import torch

    if not torch.cuda.is_available():
        print("hbm_write_ceiling: no CUDA device", file=sys.stderr)
        return 2
    n = int(args.gib * 2**30) // 4
    dst = torch.empty(n, dtype=torch.float32, device="cuda")
    src = torch.rand(n, dtype=torch.float32, device="cuda")
    contenders = {
        "fill_ (write)": (lambda: dst.fill_(1.5), 4 * n),
        "zero_ (write)": (lambda: dst.zero_(), 4 * n),
        "copy_ (read+write)": (lambda: dst.copy_(src), 8 * n),
        "mul scalar (read+write)": (lambda: torch.mul(src, 2.0, out=dst), 8 * n),
    }
    times = {name: [] for name in contenders}
    for _ in range(args.rounds):
        for name, (run, _bytes) in contenders.items():
            for _ in range(3):
                run()
            torch.cuda.synchronize()
            for _ in range(args.iters):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                run()
                end.record()
                end.synchronize()
                times[name].append(start.elapsed_time(end) * 1e3)  # us
    if not torch.equal(dst[:8], src[:8] * 2.0):
        print("hbm_write_ceiling: the last contender's output is wrong", file=sys.stderr)
        return 1
    rows = []
    print(f"# {torch.cuda.get_device_name()}, {args.gib} GiB fp32, {args.rounds} rounds x {args.iters}")
    print(f"{'contender':26s} {'median us':>10s} {'GB/s':>8s} {'IQR/median':>10s}")
    for name, (_run, moved) in contenders.items():
        t = sorted(times[name])
        med = statistics.median(t)
        q1, q3 = t[len(t) // 4], t[(3 * len(t)) // 4]
        rate = moved / med / 1e3
        rows.append({"contender": name, "median_us": med, "gbps": rate, "iqr_over_median": (q3 - q1) / med,
                     "bytes": moved})
        print(f"{name:26s} {med:10.1f} {rate:8.1f} {(q3 - q1) / med:10.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "gib": args.gib, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
