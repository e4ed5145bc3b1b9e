"""Sustained clock, power and cycles per product of torch.matmul, kiln's cuBLAS baseline and kiln's
signaling GEMM (issue 17: is the gap to cuBLAS cycles, or clock under the power cap?).

Run on a GPU machine from the repository root, after building build/libkiln_gemm_capi.so:
    python3 scripts/gemm_power_clock.py --shape 16384x16384x2048 [--dtype bf16] [--seconds 3]
        [--plan "tile=128x144 cluster=2x1 kernel=pingpong raster=n swizzle=8 scheduler=serpentine"
         --plan "" ...]
With several --plan, each is a kiln contender (kiln, kiln1, ...; "" = kiln's search): orders or
tiles compared by their own sustained clock (docs/results/2026-12-03e-kblock-trace/: at long K the
tile order's DRAM traffic sets it).
Each contender runs alone, back to back, for --seconds (twice, in rotated order) while
`nvidia-smi` samples the SM clock and board power every 100 ms. The first third of each block is
discarded (the clock settles), then: time per product from CUDA events around the rest, the mean
SM clock and power of the samples inside it, and from them cycles per product (time x clock) and
energy per product (time x power). Equal cycles at a lower clock mean the power cap, not the
kernel's schedule, makes the difference. Prints a table and writes --json.
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gemm_same_process import check, errors_vs_torch, load  # noqa: E402


def start_sampler(path):
    """nvidia-smi writing 'timestamp, MHz, W' lines every 100 ms to `path`."""
    return subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw", "--format=csv,noheader,nounits",
         "-lms", "100", "-f", path])


def read_samples(path):
    samples = []
    with open(path) as f:
        for line in f:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) != 3:
                continue
            try:
                t = datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                samples.append((t, float(parts[1]), float(parts[2])))
            except ValueError:
                continue
    return samples


def run_block(call, seconds):
    """Runs `call` back to back for `seconds`; returns (host start, host end, us per product)
    over the last two thirds of the block."""
    end = time.time() + seconds / 3
    i = 0
    while time.time() < end:  # settle
        for _ in range(4):
            call(i)
            i += 1
        torch.cuda.synchronize()
    start_ev, stop_ev = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.time()
    start_ev.record()
    count = 0
    end = t0 + 2 * seconds / 3
    while time.time() < end:
        for _ in range(4):
            call(i)
            i += 1
            count += 1
        stop_ev.record()
        stop_ev.synchronize()  # keeps the host within a few products of the device
    t1 = time.time()
    return t0, t1, start_ev.elapsed_time(stop_ev) * 1000.0 / count


def run_shape(lib, text, args, sampler_path):
    m, n, k = (int(v) for v in text.split("x"))
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    sets = max(1, min(8, (2 * l2) // ((m * k + n * k) * 2) + 1))
    gen = torch.Generator(device="cuda").manual_seed(4321 + m + n + k)
    a = [torch.rand(m, k, generator=gen, device="cuda").sub_(0.5).to(dtype) for _ in range(sets)]
    b = [torch.rand(n, k, generator=gen, device="cuda").sub_(0.5).to(dtype) for _ in range(sets)]
    c_torch = torch.empty(m, n, dtype=dtype, device="cuda")
    c_base = torch.empty_like(c_torch)
    stream = torch.cuda.current_stream().cuda_stream
    s = ctypes.c_void_p(stream)
    handles = {}  # contender name -> kiln handle, one per --plan
    try:
        for j, plan in enumerate(args.plan):
            h = ctypes.c_void_p()
            check(lib, lib.kiln_gemm_create(args.dtype.encode(), b"nk", m, n, k, plan.encode(),
                                            a[0].data_ptr(), b[0].data_ptr(), stream,
                                            ctypes.byref(h)), f"kiln_gemm_create ({plan!r})")
            handles["kiln" if j == 0 else f"kiln{j}"] = h
        handle = handles["kiln"]

        def kiln_call(h):
            return lambda i: check(lib, lib.kiln_gemm_run_signaling(
                h, a[i % sets].data_ptr(), b[i % sets].data_ptr(), s), "signaling GEMM")

        variants = {
            "torch": lambda i: torch.matmul(a[i % sets], b[i % sets].t(), out=c_torch),
            "baseline": lambda i: check(lib, lib.kiln_gemm_run_baseline(
                handle, a[i % sets].data_ptr(), b[i % sets].data_ptr(), c_base.data_ptr(), s),
                "baseline"),
        }
        for name, h in handles.items():
            variants[name] = kiln_call(h)
        names = list(variants)
        blocks = {name: [] for name in names}
        for r in range(args.repeats):
            for j in range(len(names)):
                name = names[(r + j) % len(names)]
                blocks[name].append(run_block(variants[name], args.seconds))
        time.sleep(0.3)  # the sampler's last lines
        samples = read_samples(sampler_path)
        flops = 2.0 * m * n * k
        row = {"shape": text, "dtype": args.dtype, "contenders": names,
               "kiln_config": lib.kiln_gemm_describe(handle).decode(),
               "kiln_configs": {name: lib.kiln_gemm_describe(h).decode()
                                for name, h in handles.items()}}
        for name in names:
            us, mhz, watts = [], [], []
            for t0, t1, per in blocks[name]:
                inside = [(c, p) for t, c, p in samples if t0 <= t <= t1]
                us.append(per)
                mhz += [c for c, _ in inside]
                watts += [p for _, p in inside]
            t = statistics.median(us)
            clock = statistics.mean(mhz) if mhz else float("nan")
            power = statistics.mean(watts) if watts else float("nan")
            row[name] = {"us_per_product": us, "us": t, "sm_mhz": clock, "power_w": power,
                         "samples": len(mhz), "tflops": flops / t / 1e6,
                         "mcycles_per_product": t * clock / 1e6,
                         "mj_per_product": t * power / 1e3}
        # Correctness of what was timed, on set 0.
        for name, h in handles.items():
            row["baseline_error_vs_torch"], row[f"{name}_error_vs_torch"] = errors_vs_torch(
                lib, h, a[0], b[0], c_torch, c_base, s)
        return row
    finally:
        for h in handles.values():
            lib.kiln_gemm_destroy(h)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", action="append", required=True, help="MxNxK, repeatable")
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    parser.add_argument("--lib", default="build/libkiln_gemm_capi.so")
    parser.add_argument("--plan", action="append", default=[],
                        help="a kiln GEMM plan, repeatable: one kiln contender each ('' or none: "
                             "kiln's search per shape)")
    parser.add_argument("--seconds", type=float, default=3.0, help="per block (>= 0.6)")
    parser.add_argument("--repeats", type=int, default=2, help="blocks per contender (>= 1)")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    args.plan = args.plan or [""]
    if args.seconds < 0.6:
        parser.error("--seconds must be >= 0.6 (the sampler reads every 100 ms)")
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    for text in args.shape:
        parts = text.split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            parser.error(f"--shape {text}: expected MxNxK with positive integers")
    if not os.path.exists(args.lib):
        parser.error(f"--lib {args.lib}: not found (build the kiln_gemm_capi target)")
    lib = load(os.path.abspath(args.lib))
    fd, sampler_path = tempfile.mkstemp(suffix=".csv")
    os.close(fd)
    sampler = start_sampler(sampler_path)
    rows, ok = [], True
    try:
        print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, {args.dtype}, "
              f"{args.repeats} blocks of {args.seconds} s per contender")
        print(f"{'shape':>18} {'contender':>9} {'us':>8} {'TFLOP/s':>8} {'SM MHz':>7} {'W':>6} "
              f"{'Mcycles':>8} {'mJ':>7} {'us/base':>8} {'cycles/base':>11}")
        for text in args.shape:
            row = run_shape(lib, text, args, sampler_path)
            rows.append(row)
            good = all(row[f"{name}_error_vs_torch"] <= 1e-2
                       for name in ["baseline"] + list(row["kiln_configs"]))
            ok = ok and good
            base = row["baseline"]
            for name in row["contenders"]:
                v = row[name]
                print(f"{text:>18} {name:>9} {v['us']:8.1f} {v['tflops']:8.1f} {v['sm_mhz']:7.0f} "
                      f"{v['power_w']:6.0f} {v['mcycles_per_product']:8.3f} "
                      f"{v['mj_per_product']:7.1f} {v['us'] / base['us']:8.3f} "
                      f"{v['mcycles_per_product'] / base['mcycles_per_product']:11.3f}", flush=True)
            for name, config in row["kiln_configs"].items():
                bad = "" if row[f"{name}_error_vs_torch"] <= 1e-2 else "  WRONG RESULT"
                print(f"{'':>18} {name}: {config}{bad}", flush=True)
    finally:
        sampler.terminate()
        sampler.wait(timeout=10)
        os.unlink(sampler_path)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(),
                       "dtype": args.dtype, "seconds": args.seconds, "repeats": args.repeats,
                       "rows": rows}, f, indent=1)
    print(f"# correctness: {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
