"""torch.matmul, kiln's cuBLAS baseline and kiln's signaling GEMM, timed in one process (issue 17).

Run on a GPU machine from the repository root, after building build/libkiln_gemm_capi.so:
    python3 scripts/torch_gemm_same_process.py --shape 8192x8192x8192 [--dtype bf16] [--json F]
C = A · Bᵀ, A M×K and B N×K row-major (kiln's "nk" layout, nn.Linear's weight; --layout kn: B K×N
and C = A · B, what PyTorch's async-TP op and `a @ b` take), random inputs
rotated over several sets when they fit in L2. kiln's library is loaded with ctypes, so the three
contenders run on the same stream, inputs and clock state. They are interleaved round by round
(32 rounds by default, rounded up to whole balanced designs: every contender in every position
and after every other equally often; --order rotate or shuffle for the older orders) with CUDA events between iterations, after a settle period of
back-to-back products that brings the chip to the clock it holds under sustained load. kiln's GEMM configuration is searched per shape (or given with
--plan) before timing, and its cuBLAS baseline picks its algorithm then. Prints a table and one
JSON object per shape; exits 1 if a result is wrong.
"""
import argparse
import ctypes
import json
import os
import statistics
import random
import subprocess
import sys
import time

import torch

SHAPES = ("4096x8192x8192 8192x8192x8192 16384x8192x4096 8192x4096x14336 4096x8192x2048 "
          "16384x16384x2048 8192x8192x2048 8192x8192x7168 16384x4096x3584 5000x8192x8192 "
          "4096x7168x4096 1000x8192x8192").split()


def load(path):
    lib = ctypes.CDLL(path)
    p = ctypes.c_void_p
    lib.kiln_gemm_last_error.restype = ctypes.c_char_p
    lib.kiln_gemm_describe.restype = ctypes.c_char_p
    lib.kiln_gemm_describe.argtypes = [p]
    lib.kiln_gemm_ranking.restype = ctypes.c_char_p
    lib.kiln_gemm_ranking.argtypes = [p]
    lib.kiln_gemm_create.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                     ctypes.c_int, ctypes.c_char_p, p, p, p, ctypes.POINTER(p)]
    lib.kiln_gemm_run_baseline.argtypes = [p, p, p, p, p]
    lib.kiln_gemm_run_signaling.argtypes = [p, p, p, p]
    lib.kiln_gemm_restore.argtypes = [p, p, p]
    lib.kiln_gemm_run_plain.argtypes = [p, p, p, p, p]
    lib.kiln_gemm_destroy.argtypes = [p]
    return lib


def check(lib, rc, what):
    if rc != 0:
        raise RuntimeError(f"{what}: {lib.kiln_gemm_last_error().decode()}")


def quantile(values, q):
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def williams_orders(n):
    """A balanced crossover design (Williams 1949): n orders of 0..n-1 (2n when n is odd) in
    which every contender takes every position equally often and follows every other one equally
    often. Needed because the position in a round matters: the first contender after the round's
    host sync runs on a chip that idled and reads faster (2026-12-02: with a seeded shuffle of 5
    contenders over 32 rounds the searched plan led 4 rounds and its copy 10, and the copy read
    up to 3.5% faster with the same kernel)."""
    first, low, high = [0], 1, n - 1
    while len(first) < n:
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    orders = [[(v + r) % n for v in first] for r in range(n)]
    if n % 2 == 1:
        orders += [list(reversed(o)) for o in orders]
    return orders


def balanced_rounds(rounds, n):
    """`rounds` rounded up to a whole number of Williams designs for n contenders."""
    period = len(williams_orders(n))
    return -(-rounds // period) * period


def time_rounds(variants, rounds, per_round, warmup, order_rule="balanced"):
    """variants: list of (name, call(i)). Returns {name: [us...]}. Each round runs them in an
    order from a balanced design (williams_orders: every position and predecessor equally often;
    `rounds` should be a multiple of its period, balanced_rounds), rotating (every variant always
    follows the same one) or, with "shuffle", a permutation drawn with a fixed seed (no balance:
    2026-11-30j found a second kiln GEMM always run right after the first timed 1-2% slower with
    the same kernel under the rotation, and 2026-12-02 the shuffle's unequal first places)."""
    times = {name: [] for name, _ in variants}
    n = len(variants)
    shuffler = random.Random(20261130)
    design = williams_orders(n)
    for r in range(rounds):
        if order_rule == "shuffle":
            order = shuffler.sample(variants, n)
        elif order_rule == "balanced":
            order = [variants[j] for j in design[r % len(design)]]
        else:
            order = [variants[(r + j) % n] for j in range(n)]
        events = []
        for name, call in order:
            for w in range(warmup if r == 0 else 2):
                call(w)
            ev = [torch.cuda.Event(enable_timing=True) for _ in range(per_round + 1)]
            ev[0].record()
            for i in range(per_round):
                call(i)
                ev[i + 1].record()
            events.append((name, ev))
        torch.cuda.synchronize()
        for name, ev in events:
            times[name] += [ev[i].elapsed_time(ev[i + 1]) * 1000.0 for i in range(per_round)]
    return times


def stats(us):
    return {"median": statistics.median(us), "q25": quantile(us, 0.25), "q75": quantile(us, 0.75),
            "min": min(us), "max": max(us), "count": len(us)}


def rel_error(got, want):
    g, w = got.float(), want.float()
    if not torch.isfinite(g).all():
        return float("inf")
    return (torch.linalg.vector_norm(g - w) / torch.linalg.vector_norm(w).clamp_min(1e-30)).item()


def errors_vs_torch(lib, handle, a, b, c_torch, c_base, stream, layout="nk"):
    """Runs torch.matmul, kiln's baseline and kiln's GEMM (restored to row-major, into a
    NaN-poisoned output) once on (a, b); returns the baseline's and kiln's relative errors.
    layout "nk": b is N×K (C = A·Bᵀ); "kn": b is K×N (C = A·B)."""
    torch.matmul(a, b.t() if layout == "nk" else b, out=c_torch)
    check(lib, lib.kiln_gemm_run_baseline(handle, a.data_ptr(), b.data_ptr(), c_base.data_ptr(),
                                          stream), "baseline")
    c_kiln = torch.full_like(c_torch, float("nan"))
    check(lib, lib.kiln_gemm_run_signaling(handle, a.data_ptr(), b.data_ptr(), stream),
          "signaling GEMM")
    check(lib, lib.kiln_gemm_restore(handle, c_kiln.data_ptr(), stream), "restore")
    torch.cuda.synchronize()
    return rel_error(c_base, c_torch), rel_error(c_kiln, c_torch)


def parse_ranking(text):
    """kiln_gemm_ranking's lines ("STAGE MEDIAN_US MIN_US CV PLAN") as dicts, best first."""
    ranking = []
    for line in text.splitlines():
        stage, median, low, cv, plan = line.split(" ", 4)
        ranking.append({"stage": int(stage), "median_us": float(median), "min_us": float(low),
                        "cv": float(cv), "plan": plan})
    return ranking


def sm_clock():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def run_shape(lib, text, dtype_name, args, lib_b=None):
    m, n, k = (int(v) for v in text.split("x"))
    dtype = torch.bfloat16 if dtype_name == "bf16" else torch.float16
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    sets = max(1, min(8, (2 * l2) // ((m * k + n * k) * 2) + 1))
    gen = torch.Generator(device="cuda").manual_seed(1234 + m + n + k)
    def operand(*shape):
        # --inputs: a power-capped GEMM's clock depends on how many operand bits toggle.
        if args.inputs == "randn":
            return torch.randn(*shape, generator=gen, device="cuda", dtype=torch.float32).to(dtype)
        return torch.rand(*shape, generator=gen, device="cuda", dtype=torch.float32).sub_(0.5).to(dtype)

    a = [operand(m, k) for _ in range(sets)]
    b_shape = (n, k) if args.layout == "nk" else (k, n)
    b = [operand(*b_shape) for _ in range(sets)]
    c_torch = torch.empty(m, n, dtype=dtype, device="cuda")
    c_base = torch.empty_like(c_torch)
    stream = torch.cuda.current_stream().cuda_stream
    handle = ctypes.c_void_p()
    check(lib, lib.kiln_gemm_create(dtype_name.encode(), args.layout.encode(), m, n, k,
                                    args.plan.encode(),
                                    a[0].data_ptr(), b[0].data_ptr(), stream,
                                    ctypes.byref(handle)), "kiln_gemm_create")
    second = ctypes.c_void_p()
    extras = []  # (plan text, search line or None, handle): --extra-plan and --race-top
    extras_b = []  # --extra-lib: handles of the second library, one per extra
    try:
        describe = lib.kiln_gemm_describe(handle).decode()
        ranking = parse_ranking(lib.kiln_gemm_ranking(handle).decode())
        if args.race_top and not ranking:
            raise RuntimeError("--race-top: kiln's plan was given, there is no search to race")
        wanted = [(plan, None) for plan in args.extra_plan]
        wanted += [(line["plan"], line) for line in ranking[:args.race_top]]
        if args.race_deferred:  # the same plans with the signal deferred to the next epilogue
            wanted += [(plan + " signal=deferred", line) for plan, line in wanted]
        for plan, line in wanted:
            h = ctypes.c_void_p()
            check(lib, lib.kiln_gemm_create(dtype_name.encode(), args.layout.encode(), m, n, k,
                                            plan.encode(), a[0].data_ptr(), b[0].data_ptr(),
                                            stream, ctypes.byref(h)), f"kiln_gemm_create ({plan})")
            extras.append((plan, line, h))
        # --extra-lib: the same plans built by the other library
        for plan, line, _ in (extras if lib_b else []):
            h = ctypes.c_void_p()
            check(lib_b, lib_b.kiln_gemm_create(dtype_name.encode(), args.layout.encode(), m, n, k,
                                                plan.encode(), a[0].data_ptr(), b[0].data_ptr(),
                                                stream, ctypes.byref(h)),
                  f"kiln_gemm_create ({plan}, --extra-lib)")
            extras_b.append(h)
        s = ctypes.c_void_p(stream)
        if args.second_search or args.second_plan:
            # A second kiln GEMM searched with other options (--second-search) or with a given
            # plan (--second-plan), timed in the same rounds: the A/B of a search setting or of
            # the search's pick against another candidate (issue 17).
            second_plan = args.second_plan or f"search:{args.second_search}"
            check(lib, lib.kiln_gemm_create(dtype_name.encode(), args.layout.encode(), m, n, k,
                                            second_plan.encode(),
                                            a[0].data_ptr(), b[0].data_ptr(), stream,
                                            ctypes.byref(second)), "kiln_gemm_create (second search)")

        def torch_call(i):
            bi = b[i % sets]
            torch.matmul(a[i % sets], bi.t() if args.layout == "nk" else bi, out=c_torch)

        def base_call(i):
            check(lib, lib.kiln_gemm_run_baseline(handle, a[i % sets].data_ptr(),
                                                  b[i % sets].data_ptr(), c_base.data_ptr(), s),
                  "baseline")

        def kiln_call(i):
            check(lib, lib.kiln_gemm_run_signaling(handle, a[i % sets].data_ptr(),
                                                   b[i % sets].data_ptr(), s), "signaling GEMM")

        def second_call(i):
            check(lib, lib.kiln_gemm_run_signaling(second, a[i % sets].data_ptr(),
                                                   b[i % sets].data_ptr(), s), "second GEMM")

        def twin_call(i):
            check(lib, lib.kiln_gemm_run_plain(handle, a[i % sets].data_ptr(),
                                               b[i % sets].data_ptr(), c_base.data_ptr(), s),
                  "CUTLASS twin")

        def extra_call(h, owner=lib):
            def call(i):
                check(owner, owner.kiln_gemm_run_signaling(h, a[i % sets].data_ptr(),
                                                           b[i % sets].data_ptr(), s), "extra GEMM")
            return call

        variants = [("torch", torch_call), ("baseline", base_call), ("kiln", kiln_call)]
        if second:
            variants.append(("kiln_second", second_call))
        for j, (_, _, h) in enumerate(extras):
            variants.append((f"extra{j}", extra_call(h)))
        for j, h in enumerate(extras_b):
            variants.append((f"extra_b{j}", extra_call(h, lib_b)))
        twin_missing = ""
        if args.twin:
            try:  # no twin for some configurations (kernel=coop-n): the row says so
                twin_call(0)
                variants.append(("twin", twin_call))
            except RuntimeError as e:
                twin_missing = str(e)
        end = time.monotonic() + args.settle
        i = 0
        while time.monotonic() < end:  # settle: the sustained-load clock, every variant in turn
            for _, call in variants:
                for _ in range(5):
                    call(i)
                    i += 1
            torch.cuda.synchronize()
        clock_before = sm_clock()
        rounds = balanced_rounds(args.rounds, len(variants)) if args.order == "balanced" else args.rounds
        times = time_rounds(variants, rounds, args.iters, args.warmup, args.order)
        clock_after = sm_clock()

        # Correctness on set 0 against torch.matmul.
        base_error, kiln_error = errors_vs_torch(lib, handle, a[0], b[0], c_torch, c_base, s,
                                                 args.layout)
        row = {"shape": text, "dtype": dtype_name, "layout": args.layout, "inputs": args.inputs,
               "rounds_run": rounds, "input_sets": sets,
               "kiln": describe,
               "sm_clock_mhz_before_after": [clock_before, clock_after],
               "baseline_error_vs_torch": base_error, "kiln_error_vs_torch": kiln_error}
        if second:
            _, second_error = errors_vs_torch(lib, second, a[0], b[0], c_torch, c_base, s,
                                              args.layout)
            row["kiln_second"] = lib.kiln_gemm_describe(second).decode()
            row["kiln_second_error_vs_torch"] = second_error
        if ranking:
            row["search_ranking"] = ranking[:40]
        row["extras"] = []
        for j, (plan, line, h) in enumerate(extras):
            _, extra_error = errors_vs_torch(lib, h, a[0], b[0], c_torch, c_base, s, args.layout)
            us = stats(times.pop(f"extra{j}"))
            row["extras"].append({"plan": plan, "search": line, "us": us,
                                  "over_baseline": us["median"] / stats(times["baseline"])["median"],
                                  "over_kiln": us["median"] / stats(times["kiln"])["median"],
                                  "error_vs_torch": extra_error})
        for j, h in enumerate(extras_b):
            _, error_b = errors_vs_torch(lib_b, h, a[0], b[0], c_torch, c_base, s, args.layout)
            us = stats(times.pop(f"extra_b{j}"))
            x = row["extras"][j]
            x.update({"lib_b_us": us, "lib_b_error_vs_torch": error_b,
                      "lib_b_over_baseline": us["median"] / stats(times["baseline"])["median"],
                      "lib_b_over_extra": us["median"] / x["us"]["median"]})
        if twin_missing:
            row["twin_missing"] = twin_missing
        elif args.twin:
            # The twin writes row-major C into c_base: checked against torch.matmul like the rest.
            c_base.fill_(float("nan"))
            twin_call(0)
            torch.cuda.synchronize()
            row["twin_error_vs_torch"] = rel_error(c_base, c_torch)
        for name, us in times.items():
            row[f"{name}_us"] = stats(us)
        if "twin_us" in row:
            row["kiln_over_twin"] = row["kiln_us"]["median"] / row["twin_us"]["median"]
            row["twin_over_baseline"] = row["twin_us"]["median"] / row["baseline_us"]["median"]
        if second:
            row["kiln_second_over_baseline"] = (row["kiln_second_us"]["median"] /
                                                row["baseline_us"]["median"])
            row["kiln_over_kiln_second"] = (row["kiln_us"]["median"] /
                                            row["kiln_second_us"]["median"])
        t, bl, kn = (row[f"{v}_us"]["median"] for v in ("torch", "baseline", "kiln"))
        row["baseline_over_torch"] = bl / t
        row["kiln_over_baseline"] = kn / bl
        row["kiln_over_torch"] = kn / t
        # The spread: half the interquartile range of the two medians compared, relative.
        row["spread_torch_baseline"] = 0.5 * ((row["torch_us"]["q75"] - row["torch_us"]["q25"]) / t +
                                              (row["baseline_us"]["q75"] - row["baseline_us"]["q25"]) / bl)
        return row
    finally:
        lib.kiln_gemm_destroy(handle)
        if second:
            lib.kiln_gemm_destroy(second)
        for _, _, h in extras:
            lib.kiln_gemm_destroy(h)
        for h in extras_b:
            lib_b.kiln_gemm_destroy(h)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", action="append", help="MxNxK, repeatable (default: issue 17's 12)")
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    parser.add_argument("--layout", default="nk", choices=["nk", "kn"],
                        help="B stored N×K (nk, C = A·Bᵀ) or K×N (kn, C = A·B)")
    parser.add_argument("--lib", default="build/libkiln_gemm_capi.so")
    parser.add_argument("--plan", default="", help="kiln's GEMM plan (default: search per shape)")
    # 32 rounds: two copies of one plan timed in the same rounds agreed within 0.8% (median 0.1%)
    # on 12 shapes, where 8 rounds left them up to 4% apart (docs/results/2026-12-01c-medians/,
    # calls 2-3 and 5); the rounds cost ~1 s of a shape's ~13 s, the search being the rest.
    parser.add_argument("--rounds", type=int, default=32)
    parser.add_argument("--order", default="balanced", choices=["balanced", "rotate", "shuffle"],
                        help="each round's order of the contenders: a balanced design (each in "
                             "every position and after every other equally often; --rounds is "
                             "rounded up to whole designs), rotated (each always after the same "
                             "one) or a seeded shuffle")
    parser.add_argument("--iters", type=int, default=10, help="timed iterations per round")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--settle", type=float, default=2.0, help="seconds of products first")
    parser.add_argument("--inputs", default="uniform", choices=["uniform", "randn"],
                        help="operand values: uniform in [-0.5, 0.5) (this script's records) or "
                             "randn (N(0, 1), PyTorch's scripts)")
    parser.add_argument("--second-search", default="",
                        help="also time kiln's GEMM searched with these options, e.g. "
                             "max-swizzle=8 or sustained=0 (tune/gemm_config_search.hpp: parse_gemm_search_options)")
    parser.add_argument("--second-plan", default="",
                        help="also time kiln's GEMM with this plan (e.g. 'tile=128x192 cluster=2x1 "
                             "kernel=pingpong raster=n swizzle=16'), in the same rounds")
    parser.add_argument("--extra-plan", action="append", default=[],
                        help="also time kiln's GEMM with this plan in the same rounds (repeatable)")
    parser.add_argument("--race-top", type=int, default=0,
                        help="also time the search's N best candidates as given plans in the same "
                             "rounds: whether the search's ranking holds in the table (0: off)")
    parser.add_argument("--narrow-swizzle", type=int, default=0, choices=[0, 1, 2, 4, 8, 16],
                        help="shorthand for --second-search max-swizzle=N (0: off)")
    parser.add_argument("--twin", action="store_true",
                        help="also time CUTLASS's twin of kiln's chosen configuration (same main "
                             "loop, CUTLASS's own epilogue, no signal): the epilogue's cost; bf16, nk")
    parser.add_argument("--race-deferred", action="store_true",
                        help="also time each --extra-plan / --race-top plan with signal=deferred "
                             "(each tile counted at its CTA's next epilogue, so the wait for its "
                             "stores leaves the epilogue), in the same rounds")
    parser.add_argument("--extra-lib", default="",
                        help="a second build of the library (e.g. one compiled with another "
                             "epilogue): each --extra-plan / --race-top plan is also timed from it, "
                             "in the same rounds and process (an A/B of two builds of one kernel)")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    for name, low in (("--rounds", 1), ("--iters", 1), ("--warmup", 0), ("--race-top", 0)):
        if getattr(args, name[2:].replace("-", "_")) < low:
            parser.error(f"{name} must be >= {low}")
    if args.settle < 0:
        parser.error("--settle must be >= 0")
    if args.second_plan and (args.second_search or args.narrow_swizzle):
        parser.error("--second-plan: give it or --second-search / --narrow-swizzle, not both")
    if args.narrow_swizzle and not args.second_search:
        args.second_search = f"max-swizzle={args.narrow_swizzle}"
    if args.twin and (args.dtype != "bf16" or args.layout != "nk"):
        parser.error("--twin: the CUTLASS twin is built for bf16 with B N×K only")
    if not os.path.exists(args.lib):
        parser.error(f"--lib {args.lib}: not found (build the kiln_gemm_capi target)")
    for name, given in (("--race-deferred", args.race_deferred), ("--extra-lib", args.extra_lib)):
        if given and not (args.extra_plan or args.race_top):
            parser.error(f"{name} times the --extra-plan / --race-top plans: give one of them")
    lib = load(os.path.abspath(args.lib))
    lib_b = None
    if args.extra_lib:
        if not os.path.exists(args.extra_lib):
            parser.error(f"--extra-lib {args.extra_lib}: not found")
        lib_b = load(os.path.abspath(args.extra_lib))
    rows, ok = [], True
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, {args.dtype}, "
          f"B {'N×K' if args.layout == 'nk' else 'K×N'}, "
          f"{args.rounds} rounds x {args.iters} iterations, settle {args.settle} s; medians in us")
    print(f"{'shape':>18} {'torch':>8} {'baseline':>8} {'kiln':>8} {'base/torch':>10} "
          f"{'spread':>7} {'kiln/base':>9} {'kiln/torch':>10}  kiln configuration")
    for text in args.shape or SHAPES:
        row = run_shape(lib, text, args.dtype, args, lib_b)
        rows.append(row)
        good = (row["baseline_error_vs_torch"] <= 1e-2 and row["kiln_error_vs_torch"] <= 1e-2
                and row.get("kiln_second_error_vs_torch", 0.0) <= 1e-2
                and row.get("twin_error_vs_torch", 0.0) <= 1e-2
                and all(x["error_vs_torch"] <= 1e-2 and x.get("lib_b_error_vs_torch", 0.0) <= 1e-2
                        for x in row["extras"]))
        ok = ok and good
        print(f"{text:>18} {row['torch_us']['median']:8.1f} {row['baseline_us']['median']:8.1f} "
              f"{row['kiln_us']['median']:8.1f} {row['baseline_over_torch']:10.3f} "
              f"{row['spread_torch_baseline']:7.3f} {row['kiln_over_baseline']:9.3f} "
              f"{row['kiln_over_torch']:10.3f}  {row['kiln']}{'' if good else '  WRONG RESULT'}",
              flush=True)
        if "kiln_second" in row:
            what = f"plan {args.second_plan}" if args.second_plan else f"search {args.second_search}"
            print(f"{'':>18} {what}: {row['kiln_second_us']['median']:8.1f} us, "
                  f"kiln/second {row['kiln_over_kiln_second']:.3f}, second/base "
                  f"{row['kiln_second_over_baseline']:.3f}  {row['kiln_second']}", flush=True)
        for x in row["extras"]:
            searched = (f"search stage {x['search']['stage']} {x['search']['median_us']:.1f} us"
                        if x["search"] else "given")
            print(f"{'':>18} {x['us']['median']:8.1f} us, /base {x['over_baseline']:.3f}, "
                  f"/kiln {x['over_kiln']:.3f} ({searched})  {x['plan']}", flush=True)
            if "lib_b_us" in x:
                print(f"{'':>18} {x['lib_b_us']['median']:8.1f} us, /base {x['lib_b_over_baseline']:.3f}, "
                      f"/same plan {x['lib_b_over_extra']:.3f} (--extra-lib)", flush=True)
        if "twin_missing" in row:
            print(f"{'':>18} CUTLASS twin: {row['twin_missing']}", flush=True)
        if "twin_us" in row:
            print(f"{'':>18} CUTLASS twin (same configuration): {row['twin_us']['median']:8.1f} us, "
                  f"kiln/twin {row['kiln_over_twin']:.3f}, twin/base {row['twin_over_baseline']:.3f}",
                  flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(),
                       "dtype": args.dtype, "layout": args.layout, "rounds": args.rounds, "order": args.order, "iterations": args.iters,
                       "settle_s": args.settle, "second_search": args.second_search,
                       "second_plan": args.second_plan, "twin": args.twin,
                       "extra_plans": args.extra_plan, "race_top": args.race_top,
                       "extra_lib": args.extra_lib, "race_deferred": args.race_deferred,
                       "rows": rows}, f, indent=1)
    print(f"# correctness: {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
