"""Does a bf16 GEMM's speed depend on the values it multiplies? torch.mm timed on the same shapes
with inputs drawn from different distributions, interleaved round by round (one GPU).

Why: kiln's overlap bench fills A and B with uniform values in [-1, 1) (core::fill_uniform) and
PyTorch's scripts with torch.randn; on 2026-11-27 kiln's cuBLAS GEMM ran 5-12% slower than
PyTorch's `a @ b` on the same shapes in alternating processes. A power-limited chip lowers its
clock for inputs whose bits toggle more (see Horace He, "Strangely, matrix multiplications on GPUs
run faster when given predictable data", 2024), so the distribution alone may explain the gap.

Usage (device, repository root):
    python3 scripts/gemm_input_distribution.py [--shapes 4096x8192x8192 ...] [--layout kn|nk]
        [--rounds 3] [--iters 20] [--settle 2] [--json F]
Prints one line per (shape, distribution): median, p10-p90 over rounds x iters (us), TFLOP/s, and
the ratio to randn; one JSON object at the end.
"""
import argparse
import json
import statistics
import sys
import time

import torch

def _ints(shape):
    v = torch.randint(0, 8, shape, device="cuda")
    return torch.where(v < 4, v - 4, v - 3).to(torch.bfloat16)


DISTRIBUTIONS = {
    "randn": lambda shape: torch.randn(shape, device="cuda").to(torch.bfloat16),
    "uniform[-1,1)": lambda shape: (torch.rand(shape, device="cuda") * 2 - 1).to(torch.bfloat16),
    "ints[-4,4]": _ints,  # kiln's exact test values: small non-zero integers
    "randn*0.02": lambda shape: (torch.randn(shape, device="cuda") * 0.02).to(torch.bfloat16),
}


def parse_shape(text):
    try:
        m, n, k = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shapes: '{text}' is not MxNxK (positive integers)")
    if min(m, n, k) <= 0:
        raise argparse.ArgumentTypeError(f"--shapes: '{text}' has a non-positive size")
    return m, n, k


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", nargs="+", type=parse_shape,
                    default=[parse_shape(s) for s in ("4096x8192x8192", "8192x4096x14336")])
    ap.add_argument("--layout", choices=("kn", "nk"), default="kn",
                    help="kn: B stored KxN, C = A·B (PyTorch's scripts); nk: B stored NxK, C = A·Bᵀ")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--settle", type=float, default=2.0, help="seconds of back-to-back GEMMs first")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.rounds < 1 or args.iters < 1:
        sys.exit("--rounds and --iters: accepted range >= 1")
    if not torch.cuda.is_available():
        sys.exit("no GPU: this script times GEMMs on one")
    torch.manual_seed(0)
    rows = []
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, bf16, layout {args.layout}, "
          f"{args.rounds} rounds x {args.iters} iterations, order rotating per round")
    for m, n, k in args.shapes:
        operands = {}
        for name, make in DISTRIBUTIONS.items():
            a = make((m, k))
            b = make((k, n)) if args.layout == "kn" else make((n, k))
            operands[name] = (a, b if args.layout == "kn" else b.t())
        out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        names = list(operands)
        start = time.monotonic()
        while time.monotonic() - start < args.settle:
            for name in names:
                torch.mm(*operands[name], out=out)
            torch.cuda.synchronize()
        times = {name: [] for name in names}
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                a, b = operands[name]
                for _ in range(3):
                    torch.mm(a, b, out=out)
                events = [torch.cuda.Event(enable_timing=True) for _ in range(args.iters + 1)]
                events[0].record()
                for i in range(args.iters):
                    torch.mm(a, b, out=out)
                    events[i + 1].record()
                torch.cuda.synchronize()
                times[name] += [events[i].elapsed_time(events[i + 1]) * 1e3 for i in range(args.iters)]
        base = statistics.median(times["randn"])
        for name in names:
            t = sorted(times[name])
            med = statistics.median(t)
            row = {"shape": f"{m}x{n}x{k}", "layout": args.layout, "distribution": name,
                   "median_us": med, "p10_us": t[len(t) // 10], "p90_us": t[(9 * len(t)) // 10],
                   "tflops": 2 * m * n * k / med / 1e6, "vs_randn": med / base}
            rows.append(row)
            print(f"{row['shape']:>18} {name:>14} {med:9.1f} us  [{row['p10_us']:.1f}-{row['p90_us']:.1f}]"
                  f"  {row['tflops']:6.1f} TFLOP/s  x{row['vs_randn']:.3f} of randn", flush=True)
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
