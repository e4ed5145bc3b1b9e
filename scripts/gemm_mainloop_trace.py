#!/usr/bin/env python3
"""Where a ping-pong GEMM's tensor pipe idles, from the diagnostic build's clock records (issue 17).

A build configured with -DCMAKE_CUDA_FLAGS=-DKILN_MAINLOOP_TRACE (src/overlap/sm90_mainloop_trace.cuh)
records, per CTA, consumer warp group and tile, %clock64 at: mma entry, first stage ready, mma exit,
every GMMA of the tile done; the cycles the k-loop waited for stages and for its GMMAs; the
epilogue's entry, stores issued and exit; and, for each warp group's first 16 tiles, the moment
each k-block's GMMAs were done.

  collect (on a GPU):  python3 scripts/gemm_mainloop_trace.py collect --lib build-trace/libkiln_gemm_capi.so \
                         --shape 4096x8192x2048 --plan "tile=128x144 ..." --json out.json
  analyse (anywhere):  python3 scripts/gemm_mainloop_trace.py analyse out.json

The analysis merges each CTA's two warp groups' tiles in time. The tensor pipe runs tile i's GMMAs
from its first issue (first stage ready, or the previous tile's last GMMA if later) to "all done";
what is left of the CTA's span is idle, split into: the gap between one tile's last GMMA and the
next tile's first issue (hand-off), and the excess of each tile's GMMA span over the fastest tile's
cycles per k-block (slow k-blocks: stages late, or GMMAs slowed by other traffic).
The k-block analysis places each k-block's span against what the CTA's other warp group was doing
then (its epilogue's staging and store issue, its wait for the stores and the signal, or nothing)
and against the k-block's position in its tile.
"""
import argparse
import ctypes
import json
import lzma
import os
import statistics
import sys

CTAS, GROUPS, TILES, FIELDS = 264, 2, 96, 16
KTILES, KBLOCKS = 16, 128  # sm90_mainloop_trace.cuh


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
    probe = getattr(lib, "kiln_mainloop_trace_probe_bf16_nk", None)
    if args.probe and probe is None:
        sys.exit(f"--lib {args.lib}: no kiln_mainloop_trace_probe_bf16_nk (an older trace build)")
    m, n, k = (int(p) for p in args.shape.split("x"))
    a = torch.rand(m, k, device="cuda").sub_(0.5).to(torch.bfloat16)
    b = torch.rand(n, k, device="cuda").sub_(0.5).to(torch.bfloat16)
    stream = torch.cuda.current_stream().cuda_stream
    handle = ctypes.c_void_p()
    check(lib, lib.kiln_gemm_create(b"bf16", b"nk", m, n, k, args.plan.encode(), a.data_ptr(),
                                    b.data_ptr(), stream, ctypes.byref(handle)), "kiln_gemm_create")
    buf = (ctypes.c_ulonglong * (CTAS * GROUPS * (TILES * FIELDS + KTILES * KBLOCKS)))()
    launches = []
    if probe is not None and probe(args.probe) != 0:
        sys.exit(f"setting --probe {args.probe} failed")
    try:
        for _ in range(args.launches):
            # back-to-back launches, then the records of the last (each launch overwrites them)
            for _ in range(args.warmup):
                check(lib, lib.kiln_gemm_run_signaling(handle, a.data_ptr(), b.data_ptr(),
                                                       ctypes.c_void_p(stream)), "signaling GEMM")
            got = fetch(ctypes.cast(buf, ctypes.c_void_p), ctypes.sizeof(buf))
            if got != ctypes.sizeof(buf):
                sys.exit(f"fetching the trace failed ({got})")
            launches.append({"tiles": records(buf), "kblocks": kblock_records(buf)})
        describe = lib.kiln_gemm_describe(handle).decode()
    finally:
        if probe is not None:
            probe(0)
        lib.kiln_gemm_destroy(handle)
    out = {"shape": args.shape, "plan": args.plan, "probe": args.probe, "describe": describe,
           "device": torch.cuda.get_device_name(), "launches": launches}
    with open(args.json, "w") as f:
        json.dump(out, f)
    print(f"# {args.shape}: {describe}" + (f" (probe {args.probe})" if args.probe else ""))
    for i, launch in enumerate(launches):
        print(summary_line(f"launch {i}", analyse_launch(tile_rows(launch))))
        if isinstance(launch, dict):
            print(kblock_report(launch))


def tile_rows(launch):
    """A launch's tile records (older files hold the list of rows alone)."""
    return launch["tiles"] if isinstance(launch, dict) else launch


def kblock_records(buf):
    """Per (cta, group, tile): the k-blocks' done times recorded (zero entries dropped)."""
    base0 = CTAS * GROUPS * TILES * FIELDS
    out = []
    for cta in range(CTAS):
        for group in range(GROUPS):
            for tile in range(KTILES):
                base = base0 + ((cta * GROUPS + group) * KTILES + tile) * KBLOCKS
                times = list(buf[base:base + KBLOCKS])
                while times and times[-1] == 0:
                    times.pop()
                if times:
                    out.append([cta, group, tile, times])
    return out


def overlap(a0, a1, b0, b1):
    return max(0, min(a1, b1) - max(a0, b0))


def kblock_report(launch):
    """Each recorded k-block's span against the other warp group's epilogue phases and its position."""
    rows = {(r[0], r[1], r[2]): r[3:] for r in launch["tiles"]}
    windows = {}  # (cta, group) -> [(entry, stores issued, exit)]
    for (cta, group, _), f in rows.items():
        if f[8] and f[9] and f[10]:
            windows.setdefault((cta, group), []).append((f[8], f[9], f[10]))
    spans = []  # (cycles, staging overlap, signal-wait overlap, position, k-blocks)
    for cta, group, tile, times in launch["kblocks"]:
        f = rows.get((cta, group, tile))
        if f is None or not f[3]:
            continue
        kb = f[7] & 0xffffffff
        done = times[:kb - 1] + [f[3]]
        if len(done) != kb:
            continue  # a record past KBLOCKS or with a missing time
        other = windows.get((cta, 1 - group), [])
        for i in range(1, kb):
            a0, a1 = done[i - 1], done[i]
            stage = sum(overlap(a0, a1, e0, e1) for e0, e1, _ in other)
            wait = sum(overlap(a0, a1, e1, e2) for _, e1, e2 in other)
            spans.append((a1 - a0, stage, wait, i, kb))
    if not spans:
        return "  (no k-block records)"
    cycles = sorted(s[0] for s in spans)
    rate = cycles[len(cycles) // 20]
    lines = [f"  k-blocks recorded: {len(spans)}; 5th percentile {rate} cycles, median "
             f"{statistics.median(cycles)}"]

    def row(tag, sel):
        if not sel:
            return f"  {tag:<44} none"
        c = [s[0] for s in sel]
        excess = sum(max(0, x - rate) for x in c)
        return (f"  {tag:<44} n={len(sel):6d} median {statistics.median(c):6.0f} mean "
                f"{statistics.mean(c):7.1f} excess over 5th pct {excess / len(sel):6.1f}/k-block")

    none = [s for s in spans if s[1] == 0 and s[2] == 0]
    staging_full = [s for s in spans if s[1] >= 0.9 * s[0]]
    staging_part = [s for s in spans if 0 < s[1] < 0.9 * s[0]]
    wait_only = [s for s in spans if s[1] == 0 and s[2] > 0]
    lines += [row("other group outside its epilogue", none),
              row("other group staging/issuing stores (>=90%)", staging_full),
              row("other group staging, part of the span", staging_part),
              row("other group waiting for stores/signal only", wait_only)]
    tiles = max(1, len({(r[0], r[1], r[2]) for r in launch["kblocks"]}))
    beside = sum(max(0, x[0] - rate) for x in spans if x[1] or x[2])
    outside = sum(max(0, x[0] - rate) for x in none)
    lines.append(f"  excess over the 5th percentile per tile (k-blocks 1..last): beside the other "
                 f"group's epilogue {beside / tiles:.0f}, outside it {outside / tiles:.0f} cycles")
    for pos in (1, 2, 3, 4, 5, 6, 8, 12, 16):
        lines.append(row(f"position {pos} in its tile", [s for s in spans if s[3] == pos]))
    lines.append(row("last k-block of its tile", [s for s in spans if s[3] == s[4] - 1]))
    # least squares: cycles = base + a * staging overlap + b * wait overlap
    n = len(spans)
    xs1 = [s[1] for s in spans]
    xs2 = [s[2] for s in spans]
    ys = [s[0] for s in spans]
    m1, m2, my = sum(xs1) / n, sum(xs2) / n, sum(ys) / n
    s11 = sum((x - m1) ** 2 for x in xs1)
    s22 = sum((x - m2) ** 2 for x in xs2)
    s12 = sum((x - m1) * (y - m2) for x, y in zip(xs1, xs2))
    s1y = sum((x - m1) * (y - my) for x, y in zip(xs1, ys))
    s2y = sum((x - m2) * (y - my) for x, y in zip(xs2, ys))
    det = s11 * s22 - s12 * s12
    if det > 0:
        a = (s1y * s22 - s2y * s12) / det
        b = (s2y * s11 - s1y * s12) / det
        lines.append(f"  fit: k-block cycles = {my - a * m1 - b * m2:.1f} + {a:.4f} x (cycles "
                     f"beside the other's staging) + {b:.4f} x (beside its store/signal wait)")
    phases = [(f[9] - f[8], f[10] - f[9], f[8] - f[3]) for f in rows.values()
              if f[3] and f[8] and f[9] and f[10]]
    if phases:
        lines.append("  epilogue phases (median cycles): last GMMA done -> epilogue entry "
                     f"{statistics.median(p[2] for p in phases):.0f}, staging + store issue "
                     f"{statistics.median(p[0] for p in phases):.0f}, store/signal wait "
                     f"{statistics.median(p[1] for p in phases):.0f}")
    return "\n".join(lines)


def records(buf):
    """Non-empty records as [cta, group, tile, f0..f15]."""
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
            entry, first, exit_, done, waited, nr, gw, meta = r[3:11]  # fields 8-15: epilogue
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
        probe = f" probe {d['probe']}" if d.get("probe") else ""
        print(f"# {d['shape']} {d['plan']}{probe} ({d['device']})")
        for i, launch in enumerate(d["launches"]):
            print(summary_line(f"launch {i}", analyse_launch(tile_rows(launch))))
            if isinstance(launch, dict):
                print(kblock_report(launch))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="run the GEMM on a GPU and save its clock records")
    c.add_argument("--lib", required=True)
    c.add_argument("--shape", required=True)
    c.add_argument("--plan", required=True)
    c.add_argument("--warmup", type=int, default=20, help="back-to-back launches per record")
    c.add_argument("--launches", type=int, default=3, help="launches recorded")
    c.add_argument("--probe", type=int, default=0,
                   help="probe switches (1: the epilogue skips its staging and stores; wrong outputs)")
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
