#!/usr/bin/env python3
"""Where a ping-pong GEMM's tensor pipe idles, from the diagnostic build's clock records (issue 17).

A build configured with -DCMAKE_CUDA_FLAGS=-DKILN_MAINLOOP_TRACE (src/overlap/sm90_mainloop_trace.cuh)
records, per CTA, consumer warp group and tile, %clock64 at: mma entry, first stage ready, mma exit,
every GMMA of the tile done; plus the cycles the k-loop waited for stages and for its GMMAs.

  collect (on a GPU):  python3 scripts/gemm_mainloop_trace.py collect --lib build-trace/libkiln_gemm_capi.so \
                         --shape 4096x8192x2048 --plan "tile=128x144 ..." --json out.json
  analyse (anywhere):  python3 scripts/gemm_mainloop_trace.py analyse out.json

The analysis merges each CTA's two warp groups' tiles in time. The tensor pipe runs tile i's GMMAs
from its first issue (first stage ready, or the previous tile's last GMMA if later) to "all done";
what is left of the CTA's span is idle, split into: the gap between one tile's last GMMA and the
next tile's first issue (hand-off), and the excess of each tile's GMMA span over the fastest tile's
cycles per k-block (slow k-blocks: stages late, or GMMAs slowed by other traffic).
"""
import argparse
import ctypes
import json
import lzma
import os
import statistics
import sys

CTAS, GROUPS, TILES, FIELDS = 264, 2, 96, 8


def collect(args):
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from torch_gemm_same_process import check, load
    lib = load(os.path.abspath(args.lib))
    fetch = getattr(lib, "kiln_mainloop_trace_bf16_nk", None)
    if fetch is None:
        sys.exit(f"--lib {args.lib}: no kiln_mainloop_trace_bf16_nk (not a -DKILN_MAINLOOP_TRACE build)")
    fetch.restype = ctypes.c_longlong
    fetch.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong]
    m, n, k = (int(p) for p in args.shape.split("x"))
    a = torch.rand(m, k, device="cuda").sub_(0.5).to(torch.bfloat16)
    b = torch.rand(n, k, device="cuda").sub_(0.5).to(torch.bfloat16)
    stream = torch.cuda.current_stream().cuda_stream
    handle = ctypes.c_void_p()
    check(lib, lib.kiln_gemm_create(b"bf16", b"nk", m, n, k, args.plan.encode(), a.data_ptr(),
                                    b.data_ptr(), stream, ctypes.byref(handle)), "kiln_gemm_create")
    buf = (ctypes.c_ulonglong * (CTAS * GROUPS * TILES * FIELDS))()
    launches = []
    try:
        for _ in range(args.launches):
            # back-to-back launches, then the records of the last (each launch overwrites them)
            for _ in range(args.warmup):
                check(lib, lib.kiln_gemm_run_signaling(handle, a.data_ptr(), b.data_ptr(),
                                                       ctypes.c_void_p(stream)), "signaling GEMM")
            got = fetch(ctypes.cast(buf, ctypes.c_void_p), ctypes.sizeof(buf))
            if got != ctypes.sizeof(buf):
                sys.exit(f"fetching the trace failed ({got})")
            launches.append(records(buf))
        describe = lib.kiln_gemm_describe(handle).decode()
    finally:
        lib.kiln_gemm_destroy(handle)
    out = {"shape": args.shape, "plan": args.plan, "describe": describe,
           "device": torch.cuda.get_device_name(), "launches": launches}
    with open(args.json, "w") as f:
        json.dump(out, f)
    print(f"# {args.shape}: {describe}")
    for i, launch in enumerate(launches):
        print(summary_line(f"launch {i}", analyse_launch(launch)))


def records(buf):
    """Non-empty records as [cta, group, tile, f0..f7]."""
    rows = []
    for cta in range(CTAS):
        for group in range(GROUPS):
            for tile in range(TILES):
                base = ((cta * GROUPS + group) * TILES + tile) * FIELDS
                f = list(buf[base:base + FIELDS])
                if f[0] == 0 and f[3] == 0:
                    continue
                rows.append([cta, group, tile] + f)
    return rows


def analyse_launch(rows):
    by_cta = {}
    for r in rows:
        by_cta.setdefault(r[0], []).append(r)
    # fastest cycles per k-block over all tiles (GMMA span of a tile whose first stage was ready
    # and no other tile was running: the pure rate)
    per_block = []
    handoff, slow, first_wait, spans, loop_wait, not_ready, gmma_wait, tiles = [], [], [], [], [], [], [], 0
    idle_total, span_total = 0, 0
    for cta, rs in by_cta.items():
        rs.sort(key=lambda r: r[3 + 0])
        prev_done = None
        for r in rs:
            kb = r[3 + 7] & 0xffffffff
            issue = r[3 + 1] if prev_done is None else max(r[3 + 1], prev_done)
            if kb > 0 and r[3 + 3] > issue:
                per_block.append((r[3 + 3] - issue) / kb)
            prev_done = r[3 + 3] if prev_done is None else max(prev_done, r[3 + 3])
    # the 5th percentile, not the minimum: one odd tile should not set the rate
    rate = sorted(per_block)[len(per_block) // 20] if per_block else 0
    for cta, rs in by_cta.items():
        prev_done = None
        start = min(r[3 + 0] for r in rs)
        end = max(r[3 + 3] for r in rs)
        busy = 0
        for r in rs:
            entry, first, exit_, done, waited, nr, gw, meta = r[3:11]
            kb = meta & 0xffffffff
            issue = first if prev_done is None else max(first, prev_done)
            if prev_done is not None:
                handoff.append(max(0, first - prev_done))
            # GMMAs of this tile run from `issue` to `done`: the excess over the pure rate
            slow.append(max(0, (done - issue) - rate * kb))
            busy += min(done - issue, rate * kb)
            first_wait.append(first - entry)
            spans.append(done - first)
            loop_wait.append(waited)
            not_ready.append(nr)
            gmma_wait.append(gw)
            prev_done = done if prev_done is None else max(prev_done, done)
            tiles += 1
        idle_total += (end - start) - busy
        span_total += end - start
    ctas = max(1, len(by_cta))
    return {
        "ctas": len(by_cta), "tiles": tiles, "cycles_per_kblock_min": rate,
        "cycles_per_kblock_median": statistics.median(per_block) if per_block else 0,
        "cta_span_mean": span_total / ctas, "idle_per_cta": idle_total / ctas,
        "handoff_mean": statistics.mean(handoff) if handoff else 0,
        "handoff_per_cta": sum(handoff) / ctas,
        "slow_mean": statistics.mean(slow) if slow else 0, "slow_per_cta": sum(slow) / ctas,
        "first_wait_median": statistics.median(first_wait) if first_wait else 0,
        "loop_wait_mean": statistics.mean(loop_wait) if loop_wait else 0,
        "not_ready_mean": statistics.mean(not_ready) if not_ready else 0,
        "gmma_wait_mean": statistics.mean(gmma_wait) if gmma_wait else 0,
    }


def summary_line(tag, s):
    return (f"{tag}: {s['ctas']} CTAs, {s['tiles']} tiles; k-block {s['cycles_per_kblock_min']:.0f} "
            f"(median {s['cycles_per_kblock_median']:.0f}) cycles; per CTA: span {s['cta_span_mean']:.0f}, "
            f"idle {s['idle_per_cta']:.0f} = hand-off {s['handoff_per_cta']:.0f} + slow k-blocks "
            f"{s['slow_per_cta']:.0f} (+ start/end); per tile: hand-off {s['handoff_mean']:.0f}, "
            f"slow {s['slow_mean']:.0f}, first stage {s['first_wait_median']:.0f}, "
            f"k-loop stage waits {s['loop_wait_mean']:.0f} ({s['not_ready_mean']:.2f} not ready), "
            f"GMMA waits {s['gmma_wait_mean']:.0f}")


def analyse(args):
    for path in args.json:
        # the device scripts keep the records xz-compressed (docs/results/2026-12-03d-pieced-boxes/)
        opener = lzma.open if path.endswith(".xz") else open
        with opener(path, "rt") as f:
            d = json.load(f)
        print(f"# {d['shape']} {d['plan']} ({d['device']})")
        for i, launch in enumerate(d["launches"]):
            print(summary_line(f"launch {i}", analyse_launch(launch)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="run the GEMM on a GPU and save its clock records")
    c.add_argument("--lib", required=True)
    c.add_argument("--shape", required=True)
    c.add_argument("--plan", required=True)
    c.add_argument("--warmup", type=int, default=20, help="back-to-back launches per record")
    c.add_argument("--launches", type=int, default=3, help="launches recorded")
    c.add_argument("--json", required=True)
    a = sub.add_parser("analyse", help="summarise saved records")
    a.add_argument("json", nargs="+", help="records written by collect (.json or .json.xz)")
    args = parser.parse_args()
    if args.command == "collect":
        parts = args.shape.split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            parser.error(f"--shape {args.shape}: expected MxNxK with positive integers")
        collect(args)
    else:
        analyse(args)


if __name__ == "__main__":
    main()
