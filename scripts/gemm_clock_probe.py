#!/usr/bin/env python3
"""Cycles or clock: splits a GEMM's time gap into the two under the chip's power cap (issue 17).

On a power-capped GPU a kernel's time is cycles / clock, and its clock falls with the energy it
spends per second. Each contender (kiln's cuBLAS baseline, torch.matmul, kiln's signaling GEMM with
one or more given plans) runs back to back for --seconds, alternating blocks (A B C A B C ...), while
`nvidia-smi` samples the SM clock and the board power every 50 ms. Per contender: microseconds per
launch (CUDA events over the block), the median SM clock and power over the block's second half
(the clock the power cap holds it at), and their product, the cycles per launch.

    python3 scripts/gemm_clock_probe.py --lib build/libkiln_gemm_capi.so --shape 4096x8192x8192 \
        --plan "tile=128x144 cluster=2x1 kernel=pingpong raster=m swizzle=1" [--plan ...] [--json F]
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gemm_same_process import check, load  # noqa: E402


class Sampler:
    """nvidia-smi's SM clock (MHz) and power (W) every 50 ms, with host timestamps."""

    def __init__(self):
        self.samples = []  # (host time, MHz, W)
        self.proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
             "-lms", "50", "-i", str(torch.cuda.current_device())],
            stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        for line in self.proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            try:
                self.samples.append((time.monotonic(), float(parts[0]), float(parts[1])))
            except (ValueError, IndexError):
                continue

    def between(self, t0, t1):
        return [s for s in self.samples if t0 <= s[0] <= t1]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=5)


def run_block(call, seconds, chunk=20):
    """Launches call back to back for about `seconds`; returns (us per launch, t_start, t_end)."""
    start_evt, end_evt = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0 = time.monotonic()
    start_evt.record()
    launches = 0
    while time.monotonic() - t0 < seconds:
        for i in range(chunk):
            call(launches + i)
        launches += chunk
        torch.cuda.current_stream().synchronize()  # keeps the host within one chunk of the GPU
    end_evt.record()
    end_evt.synchronize()
    return start_evt.elapsed_time(end_evt) * 1000.0 / launches, t0, time.monotonic()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", required=True, help="build/libkiln_gemm_capi.so")
    parser.add_argument("--shape", required=True, help="MxNxK")
    parser.add_argument("--plan", action="append", default=[],
                        help="a kiln plan to run (repeatable; none: kiln's search picks one)")
    parser.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    parser.add_argument("--seconds", type=float, default=2.0, help="per block (0.5-30)")
    parser.add_argument("--cycles", type=int, default=2, help="how often every contender runs (1-10)")
    parser.add_argument("--json")
    args = parser.parse_args()
    parts = args.shape.split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        parser.error(f"--shape {args.shape}: expected MxNxK with positive integers")
    if not 0.5 <= args.seconds <= 30:
        parser.error(f"--seconds {args.seconds}: accepted 0.5 to 30")
    if not 1 <= args.cycles <= 10:
        parser.error(f"--cycles {args.cycles}: accepted 1 to 10")
    m, n, k = (int(p) for p in parts)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    lib = load(os.path.abspath(args.lib))
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    sets = max(1, min(8, (2 * l2) // ((m * k + n * k) * 2) + 1))
    gen = torch.Generator(device="cuda").manual_seed(4321 + m + n + k)
    a = [torch.rand(m, k, generator=gen, device="cuda").sub_(0.5).to(dtype) for _ in range(sets)]
    b = [torch.rand(n, k, generator=gen, device="cuda").sub_(0.5).to(dtype) for _ in range(sets)]
    c_torch = torch.empty(m, n, dtype=dtype, device="cuda")
    c_base = torch.empty_like(c_torch)
    stream = torch.cuda.current_stream().cuda_stream
    s = ctypes.c_void_p(stream)
    handles = []
    plans = args.plan or [""]
    try:
        for plan in plans:
            h = ctypes.c_void_p()
            check(lib, lib.kiln_gemm_create(args.dtype.encode(), b"nk", m, n, k, plan.encode(),
                                            a[0].data_ptr(), b[0].data_ptr(), stream,
                                            ctypes.byref(h)), f"kiln_gemm_create ({plan})")
            handles.append((lib.kiln_gemm_describe(h).decode(), h))
        base_handle = handles[0][1]
        contenders = [
            ("baseline", lambda i: check(lib, lib.kiln_gemm_run_baseline(
                base_handle, a[i % sets].data_ptr(), b[i % sets].data_ptr(), c_base.data_ptr(), s),
                "baseline")),
            ("torch", lambda i: torch.matmul(a[i % sets], b[i % sets].t(), out=c_torch)),
        ]
        for j, (describe, h) in enumerate(handles):
            contenders.append((f"kiln{j}", (lambda hh: lambda i: check(
                lib, lib.kiln_gemm_run_signaling(hh, a[i % sets].data_ptr(), b[i % sets].data_ptr(), s),
                "signaling GEMM"))(h)))
        for _, call in contenders:  # warm-up: module loads, the baseline's algorithm choice
            for i in range(3):
                call(i)
        torch.cuda.synchronize()
        sampler = Sampler()
        time.sleep(0.3)
        results = {name: [] for name, _ in contenders}
        for _ in range(args.cycles):
            for name, call in contenders:
                us, t0, t1 = run_block(call, args.seconds)
                half = sampler.between(t0 + (t1 - t0) / 2, t1)
                mhz = statistics.median(x[1] for x in half) if half else float("nan")
                watts = statistics.median(x[2] for x in half) if half else float("nan")
                results[name].append({"us": us, "mhz": mhz, "watts": watts, "samples": len(half),
                                      "kcycles": us * mhz / 1000.0})
        sampler.stop()
        describes = {f"kiln{j}": d for j, (d, _) in enumerate(handles)}
    finally:
        for _, h in handles:
            lib.kiln_gemm_destroy(h)
    base_us = statistics.median(r["us"] for r in results["baseline"])
    base_kc = statistics.median(r["kcycles"] for r in results["baseline"])
    print(f"# {torch.cuda.get_device_name()}, {args.shape} {args.dtype}, {args.cycles} x "
          f"{args.seconds:.1f} s blocks per contender; clock and power: medians of each block's "
          f"second half (nvidia-smi, 50 ms)")
    print(f"{'contender':>10} {'us':>9} {'MHz':>6} {'W':>6} {'kcycles':>9} {'us/base':>8} "
          f"{'cycles/base':>11}  plan")
    for name, rs in results.items():
        us = statistics.median(r["us"] for r in rs)
        kc = statistics.median(r["kcycles"] for r in rs)
        print(f"{name:>10} {us:9.1f} {statistics.median(r['mhz'] for r in rs):6.0f} "
              f"{statistics.median(r['watts'] for r in rs):6.0f} {kc:9.1f} {us / base_us:8.3f} "
              f"{kc / base_kc:11.3f}  {describes.get(name, '')}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"shape": args.shape, "dtype": args.dtype, "device": torch.cuda.get_device_name(),
                       "seconds": args.seconds, "results": results, "plans": describes}, f, indent=1)


if __name__ == "__main__":
    main()
