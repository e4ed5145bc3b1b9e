"""kiln's GEMM+ReduceScatter and PyTorch's, the two processes taking turns in one window (issue 24:
the serial baseline must be the real one).

Run on a multi-GPU machine from the repository root, after building build/kiln:
    python3 scripts/alternate_kiln_torch.py --gpus 2 [--rounds 3] [--shape MxNxK ...] [--json F]
Per round and shape, `kiln overlap bench --op rs --plan auto --layout kn` (kiln's serial
cuBLAS + NCCL and kiln's overlap) and `scripts/torch_async_tp.py` (PyTorch's serial matmul +
reduce_scatter_tensor and async-TP's fused_matmul_reduce_scatter) run one after the other, their
order swapped every round, each timing its own contenders. B is stored K x N on both sides (what
PyTorch's op takes). Reports the median over rounds of each process's medians, and kiln's speedup
over the faster of the two serials. Both sides multiply values of one distribution (--inputs, default
normal: torch.randn's; kiln's bench fills uniform values unless told). Exits 1 if either side fails or kiln's result is wrong.

Read its GEMM figures with care: each process times its own mix of work, and a power-capped chip
clocks by that mix. On 4xH100 (2026-11-28) torch.mm read 704-711 us here, between PyTorch's light
ReduceScatter-alone calls, and 822 us beside kiln's GEMMs in one process, where kiln's cuBLAS baseline
ran 0.92-1.01x torch.mm (docs/results/2026-11-28-h100-x4-x2/). The same-process comparison is
`python -m kiln.bench`.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

SHAPES = ["4096x8192x8192", "8192x8192x8192", "16384x8192x4096", "8192x4096x14336",
          "4096x8192x2048", "16384x16384x2048"]


def run_kiln(args, shape, path):
    command = [args.kiln, "overlap", "bench", "-g", str(args.gpus), "--op", "rs", "--plan", "auto",
               "--layout", "kn", "--shape", shape, "--rounds", "2", "-w", "3", "-n",
               str(args.iters), "--settle-seconds", str(args.settle_seconds), "--inputs",
               args.inputs, "--json", path]
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    if done.returncode != 0:
        raise RuntimeError(f"kiln {shape}: exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    row = json.load(open(path))["rows"][0]
    if not row.get("correct", False):
        raise RuntimeError(f"kiln {shape}: result differs from the serial one")
    return {"serial": row["serial_us"]["median"], "kiln": row["kiln_us"]["median"],
            "cublas": row["cublas_gemm_us"]["median"], "nccl": row["collective_us"]["median"],
            "plan": row.get("describe", ""), "cublas_algorithm": row.get("cublas_algorithm", "")}


def run_torch(args, shape, path):
    command = [sys.executable, "scripts/torch_async_tp.py", "--gpus", str(args.gpus), "--shape",
               shape, "--iters", str(args.iters), "--rounds", str(args.torch_rounds),
               "--settle-seconds", str(args.settle_seconds), "--inputs",
               "randn" if args.inputs == "normal" else "uniform", "--json", path]
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    if done.returncode != 0:
        raise RuntimeError(f"torch {shape}: exit {done.returncode}\n{done.stderr[-2000:]}")
    row = json.load(open(path))["rows"][0]
    if "async_tp_us" not in row:
        raise RuntimeError(f"torch {shape}: async-TP failed: {row.get('async_tp_error')}")
    return {"torch_serial": row["serial_us"], "async_tp": row["async_tp_us"],
            "torch_matmul": row["matmul_us"], "torch_rs": row["reduce_scatter_us"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--shape", action="append", help="MxNxK per GPU, repeatable (default: the six)")
    p.add_argument("--torch-rounds", type=int, default=2,
                   help="PyTorch's contenders interleaved over this many rounds, as kiln's bench "
                        "times its own (--rounds 2); 1: each back to back alone")
    p.add_argument("--settle-seconds", type=float, default=1.0,
                   help="both sides run GEMMs back to back this long before timing a shape, so "
                        "that both time at the clock a sustained load holds (kiln's bench ran at "
                        "1350-1500 MHz, PyTorch's short script at 1980, 4xH200 2026-11-27)")
    p.add_argument("--inputs", choices=("normal", "uniform"), default="normal",
                   help="the operands' values on both sides: normal (torch.randn's) or uniform in "
                        "[-1, 1) (kiln's bench default); a power-capped GEMM's clock depends on them")
    p.add_argument("--kiln", default="build/kiln")
    p.add_argument("--timeout", type=int, default=180, help="seconds per process")
    p.add_argument("--json", default="")
    a = p.parse_args()
    if a.gpus < 2 or a.rounds < 1 or a.iters < 1:
        p.error("--gpus >= 2, --rounds >= 1, --iters >= 1")
    if not os.path.exists(a.kiln):
        p.error(f"--kiln {a.kiln}: not found (build it first)")
    shapes = a.shape or SHAPES
    samples = {s: [] for s in shapes}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            for s in shapes:
                k_path, t_path = os.path.join(tmp, "k.json"), os.path.join(tmp, "t.json")
                sides = [("kiln", run_kiln, k_path), ("torch", run_torch, t_path)]
                if r % 2:
                    sides.reverse()
                merged = {}
                for _, run, path in sides:
                    merged.update(run(a, s, path))
                samples[s].append(merged)
                print(f"round {r + 1} {s}: " + " ".join(
                    f"{k} {v:.1f}" for k, v in merged.items() if isinstance(v, float)), flush=True)
    rows = []
    print(f"\n{'shape':>18} {'kiln serial':>11} {'torch serial':>12} {'kiln':>8} {'async-TP':>9} "
          f"{'x faster serial':>15} {'async-TP/kiln':>13}")
    for s in shapes:
        med = {k: statistics.median(x[k] for x in samples[s])
               for k in ("serial", "kiln", "cublas", "nccl", "torch_serial", "async_tp",
                         "torch_matmul", "torch_rs")}
        best_serial = min(med["serial"], med["torch_serial"])
        row = {"shape": s, "medians_us": med, "rounds": samples[s],
               "speedup_vs_faster_serial": best_serial / med["kiln"],
               "async_tp_over_kiln": med["async_tp"] / med["kiln"]}
        rows.append(row)
        print(f"{s:>18} {med['serial']:11.1f} {med['torch_serial']:12.1f} {med['kiln']:8.1f} "
              f"{med['async_tp']:9.1f} {row['speedup_vs_faster_serial']:15.3f} "
              f"{row['async_tp_over_kiln']:13.3f}")
    # Where the two serials differ: each one's GEMM and collective alone, same rounds.
    print(f"\n{'shape':>18} {'cuBLAS':>8} {'torch mm':>9} {'NCCL RS':>8} {'torch RS':>9}")
    for row in rows:
        med = row["medians_us"]
        print(f"{row['shape']:>18} {med['cublas']:8.1f} {med['torch_matmul']:9.1f} "
              f"{med['nccl']:8.1f} {med['torch_rs']:9.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"gpus": a.gpus, "rounds": a.rounds, "iterations": a.iters, "inputs": a.inputs,
                       "rows": rows}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        print(f"alternate_kiln_torch: {error}", file=sys.stderr)
        sys.exit(1)
