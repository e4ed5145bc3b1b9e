#!/usr/bin/env python3
"""PyTorch eager against kiln's evolved kernels, taking turns in one device call (issue 20: the
speedup over eager is measured in the same call).

Per problem and round, this process times PyTorch eager (scripts/kb1_torch_eager.py's
run_problem: KernelBench's module, CUDA events) and `kiln bench candidate` judges the evolved
kernel (`RUNS/<problem>/best.cu`, the guarded judge: fresh inputs every call, the outside-work
check), the order swapped every round. Reports each side's median over rounds, the ratio, and U
from the judge's roof.

    python3 scripts/kb1_eager_vs_evolved.py --runs evolve-set/screen --problems 'kb1-*' \\
        [--rounds 2] [--build-dir evolve-set/eager-vs-evolved] [--json out.json]
    python3 scripts/kb1_eager_vs_evolved.py --runs ... --prepare   # compile only (no GPU needed)
"""
import argparse
import fnmatch
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kb1_torch_eager as eager  # noqa: E402
import verdict_rows  # noqa: E402


def judge(args, problem, source, json_path, compile_only=False):
    # compile_only: `--compile-only` builds the library and judges nothing (on a GPU machine the
    # prepare step judged every problem, 16 at a time, in 2026-11-29g's call 4: 128 s).
    command = [args.kiln, "bench", "candidate", "--reuse-builds", "--problem", problem,
               *(["--compile-only"] if compile_only else []),
               "--sizes", args.size,
               "--source", source, "--build-dir", args.build_dir, "--compile-timeout", "600",
               *(["--build-cache", args.build_cache] if args.build_cache else []),
               "-w", str(args.warmup), "-n", str(args.iters), "--trials", str(args.trials),
               "--timeout", "60", "--json", json_path]
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    if compile_only:
        if done.returncode != 0:  # the judgement will fail too; say so now, with nvcc's words
            words = " ".join((done.stderr or done.stdout).split())
            return f"not built (exit {done.returncode}): {words[-300:]}"
        return None
    if done.returncode != 0 and not os.path.exists(json_path):
        raise RuntimeError(f"kiln bench candidate exit {done.returncode}: {done.stderr[-400:]}")
    with open(json_path) as f:
        doc = json.load(f)
    found = [r for r in verdict_rows.rows(doc) if r.get("size") == args.size]
    if not found:
        raise RuntimeError(f"no {args.size} row in {json_path}")
    return found[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", required=True, help="an `evolve set` --out folder (RUNS/<p>/best.cu)")
    ap.add_argument("--problems", nargs="+", default=["kb1-*"], metavar="GLOB")
    ap.add_argument("--size", default="kb", choices=["kb", "small"])
    ap.add_argument("--rounds", type=int, default=2, help="turns per problem (1..20, default 2)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--kiln", default="build/kiln")
    ap.add_argument("--build-dir", default="evolve-set/eager-vs-evolved")
    ap.add_argument("--build-cache", default=None,
                    help="compiled kiln-unit objects (CUTLASS GEMMs) to share; default: the "
                         "set's RUNS/build-cache when it exists, so units are not compiled again")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per kiln judgement")
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--prepare", action="store_true",
                    help="compile every best.cu into --build-dir and stop (no GPU needed)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="compiles at a time with --prepare (default: the CPUs)")
    args = ap.parse_args(argv)
    if args.build_cache is None and os.path.isdir(os.path.join(args.runs, "build-cache")):
        args.build_cache = os.path.join(args.runs, "build-cache")
    if args.jobs < 1:
        ap.error(f"argument --jobs: must be at least 1, got {args.jobs}")
    if not 1 <= args.rounds <= 20:
        ap.error(f"argument --rounds: must be in [1, 20], got {args.rounds}")
    if not os.path.isdir(args.runs):
        ap.error(f"argument --runs: no folder {args.runs!r}")
    names = sorted(d for d in os.listdir(args.runs)
                   if os.path.isfile(os.path.join(args.runs, d, "best.cu"))
                   and any(fnmatch.fnmatchcase(d, p) for p in args.problems))
    if not names:
        ap.error(f"argument --problems: no run folder with a best.cu in {args.runs} matches")
    by_name = {p["name"]: p for p in eager.PROBLEMS.values()}
    os.makedirs(args.build_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="kiln-eager-vs-evolved-")

    def source_of(name):
        # Each kernel under its problem's name: libraries are named by their source's stem.
        path = os.path.abspath(os.path.join(args.build_dir, name + ".cu"))
        with open(os.path.join(args.runs, name, "best.cu")) as f:
            text = f.read()
        if not os.path.exists(path) or open(path).read() != text:
            with open(path, "w") as f:
                f.write(text)
        return path
    if args.prepare:
        # Compiled --jobs at a time (the judge compiles before it looks for a GPU; a judgement
        # later finds each library built from the same source by the same command).
        from concurrent.futures import ThreadPoolExecutor
        sources = {name: source_of(name) for name in names}
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            done = pool.map(lambda n: (n, judge(args, n, sources[n], os.path.join(tmp, n + ".json"),
                                                compile_only=True)), names)
            failed = 0
            for i, (name, failure) in enumerate(done):
                failed += failure is not None
                print(f"# [{i + 1}/{len(names)}] {name} {failure or 'compiled'}", flush=True)
        return 1 if failed else 0
    eager._import_torch()
    torch = eager.torch
    eargs = argparse.Namespace(warmup=args.warmup, iters=args.iters, seed=args.seed)
    doc = dict(device=torch.cuda.get_device_name(), torch=torch.__version__, size=args.size,
               rounds=args.rounds, rows=[])
    print(f"# {doc['device']}, torch {doc['torch']}, size {args.size}, {args.rounds} rounds")
    print(f"{'problem':<34} {'eager us':>10} {'kiln us':>10} {'speedup':>8} {'U':>6}  correct")
    for name in names:
        source = source_of(name)
        eager_us, kiln_us, correct, roof, error = [], [], True, 0.0, ""
        try:
            for r in range(args.rounds):
                for side in (("eager", "kiln") if r % 2 == 0 else ("kiln", "eager")):
                    if side == "eager":
                        row = eager.run_problem(by_name[name], args.size, eargs, None)
                        eager_us.append(row["torch_us"]["median"])
                        gc.collect()
                        torch.cuda.synchronize()
                        torch.cuda.empty_cache()
                    else:
                        row = judge(args, name, source, os.path.join(tmp, f"{name}-{r}.json"))
                        kiln_us.append(row["solution_us"]["median"])
                        correct = correct and bool(row["correct"])
                        roof = row["roof_us"]
        except Exception as e:  # noqa: BLE001 (recorded per problem; the rest go on)
            error = f"{type(e).__name__}: {e}"
        out = dict(problem=name, eager_us=eager_us, kiln_us=kiln_us, correct=correct,
                   roof_us=roof, error=error)
        if eager_us and kiln_us:
            e, k = statistics.median(eager_us), statistics.median(kiln_us)
            out.update(eager_median_us=e, kiln_median_us=k, speedup=e / k,
                       u=roof / k if roof > 0 else 0.0)
            print(f"{name:<34} {e:10.1f} {k:10.1f} {e / k:7.2f}x {out['u']:6.3f}  {correct}",
                  flush=True)
        else:
            print(f"{name:<34} ERROR {error[:120]}", flush=True)
        doc["rows"].append(out)
        if args.json:
            with open(args.json + ".tmp", "w") as f:
                json.dump(doc, f, indent=1)
            os.replace(args.json + ".tmp", args.json)
    ok = [r for r in doc["rows"] if "speedup" in r and r["correct"]]
    if ok:
        geo = statistics.geometric_mean([r["speedup"] for r in ok])
        print(f"# {len(ok)} of {len(names)} timed and correct; geometric-mean speedup {geo:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
