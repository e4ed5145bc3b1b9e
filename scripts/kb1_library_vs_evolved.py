#!/usr/bin/env python3
"""The library solutions (cuBLAS, CUB) against kiln's evolved kernels, taking turns in one device
call (issue 20: "at least as fast as cuBLAS / CUB on at least 90% of the problems where one is the
baseline").

For every problem of PATTERNS that has a library solution (`kiln bench suite --list`: "cublas" or
"cub"), each round runs `kiln bench suite` on the problem (the library solution and kiln's
hand-written one, guarded timing: fresh inputs every call) and `kiln bench candidate` on the
evolved kernel (`RUNS/<problem>/best.cu`, the same guarded judge), the order swapped every round.
Reports each side's median over rounds and evolved / library (below 1: the evolved kernel is
faster), and the share of problems where the evolved kernel is at least as fast.

    python3 scripts/kb1_library_vs_evolved.py --runs evolve-set/screen --problems 'kb1-*' \\
        [--rounds 2] [--json out.json]
    python3 scripts/kb1_library_vs_evolved.py --runs ... --prepare   # compile only (no GPU needed)
"""
import argparse
import fnmatch
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verdict_rows import rows as rows_of  # noqa: E402  every row of a kiln JSON document

LIBRARIES = ("cublas", "cub")


def run_json(command, json_path, timeout, env=None):
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    if not os.path.exists(json_path):
        raise RuntimeError(f"{' '.join(command[:3])} exit {done.returncode}: {done.stderr[-400:]}")
    with open(json_path) as f:
        return json.load(f)


def library_problems(kiln, patterns):
    """Problems of `patterns` with a library solution, from `kiln bench suite --list`."""
    done = subprocess.run([kiln, "bench", "suite", "--list"], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"kb1_library_vs_evolved: kiln bench suite --list failed: {done.stderr[-300:]}")
    found = []
    for line in done.stdout.splitlines():
        words = line.split()
        if not words or not any(fnmatch.fnmatch(words[0], p) for p in patterns):
            continue
        if any(lib in line.replace(",", " ").split() for lib in LIBRARIES):
            found.append(words[0])
    return found


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", required=True, help="folder of run folders (<problem>/best.cu)")
    ap.add_argument("--problems", nargs="+", default=["kb1-*"], help="problem names or globs")
    ap.add_argument("--size", default="kb")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--kiln", default="build/kiln")
    ap.add_argument("--build-dir", default=None, help="where candidates are built "
                    "(default: RUNS/../library-vs-evolved)")
    ap.add_argument("--build-cache", default=None, help="shared CUTLASS units (default: "
                    "RUNS/build-cache when it exists)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per kiln command")
    ap.add_argument("--prepare", action="store_true", help="compile the evolved kernels only")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="kernels compiled at once with --prepare")
    ap.add_argument("--json", help="write the rows and the summary here")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        sys.exit("kb1_library_vs_evolved: --rounds must be at least 1")
    if args.jobs < 1:
        sys.exit("kb1_library_vs_evolved: --jobs must be at least 1")
    if not os.path.isdir(args.runs):
        sys.exit(f"kb1_library_vs_evolved: --runs {args.runs}: no such folder")
    if args.build_dir is None:
        args.build_dir = os.path.join(os.path.dirname(os.path.abspath(args.runs)),
                                      "library-vs-evolved")
    if args.build_cache is None and os.path.isdir(os.path.join(args.runs, "build-cache")):
        args.build_cache = os.path.join(args.runs, "build-cache")
    os.makedirs(args.build_dir, exist_ok=True)
    problems = [p for p in library_problems(args.kiln, args.problems)
                if os.path.exists(os.path.join(args.runs, p, "best.cu"))]
    if not problems:
        sys.exit("kb1_library_vs_evolved: no problem with a library solution and a best.cu")

    def source_of(problem):
        # One file per problem in the build folder: the library is named after the source's stem
        # (every run's kernel is best.cu), and a source rewritten unchanged keeps its library.
        path = os.path.abspath(os.path.join(args.build_dir, problem + ".cu"))
        with open(os.path.join(args.runs, problem, "best.cu")) as f:
            text = f.read()
        if not os.path.exists(path) or open(path).read() != text:
            with open(path, "w") as f:
                f.write(text)
        return path

    def candidate(problem, json_path, env=None):
        command = [args.kiln, "bench", "candidate", "--reuse-builds", "--problem", problem,
                   "--sizes", args.size, "--source", source_of(problem),
                   "--build-dir", args.build_dir, "--compile-timeout", "600",
                   *(["--build-cache", args.build_cache] if args.build_cache else []),
                   "-w", str(args.warmup), "-n", str(args.iters), "--trials", str(args.trials),
                   "--timeout", "60", "--skip-reference-timing", "--json", json_path]
        return run_json(command, json_path, args.timeout, env)

    def suite(problem, json_path):
        command = [args.kiln, "bench", "suite", "-g", "1", "--problems", problem, "--sizes",
                   args.size, "-w", str(args.warmup), "-n", str(args.iters),
                   "--trials", str(args.trials), "--json", json_path]
        return run_json(command, json_path, args.timeout)

    if args.prepare:
        # Compiled --jobs at a time with no GPU visible: the judge compiles before it looks for
        # one, then stops; a judgement later finds each library built from the same source by
        # the same command.
        from concurrent.futures import ThreadPoolExecutor

        def prepare(problem):
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    candidate(problem, os.path.join(tmp, "c.json"),
                              dict(os.environ, CUDA_VISIBLE_DEVICES=""))
                except (RuntimeError, subprocess.TimeoutExpired) as e:
                    if "no CUDA GPU" not in str(e):  # the expected stop after compiling
                        return f"# {problem}: {str(e)[:200]}"
            built = os.path.exists(os.path.join(args.build_dir, problem + ".so"))
            return f"# {problem} {'compiled' if built else 'NOT compiled'}"
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for line in pool.map(prepare, problems):
                print(line, flush=True)
        print(f"# prepared {len(problems)} evolved kernels in {args.build_dir}")
        return

    results = []
    print(f"# {args.size}, {args.rounds} rounds, guarded timing (-w {args.warmup} -n {args.iters})")
    print(f"{'problem':34} {'library':>7} {'library us':>11} {'kiln hand us':>12} "
          f"{'evolved us':>11} {'evolved/lib':>11}  correct (library, evolved)")
    for problem in problems:
        lib_us, hand_us, evo_us, lib_name, error = [], [], [], "", ""
        lib_correct, evo_correct = True, True
        for r in range(args.rounds):
            with tempfile.TemporaryDirectory() as tmp:
                steps = [("suite", suite), ("evolved", candidate)]
                if r % 2:
                    steps.reverse()
                for name, step in steps:
                    try:
                        doc = step(problem, os.path.join(tmp, name + ".json"))
                    except (RuntimeError, subprocess.TimeoutExpired) as e:
                        error = f"{name}: {e}"
                        if name == "evolved":
                            evo_correct = False
                        else:
                            lib_correct = False
                        continue
                    rows = [x for x in rows_of(doc) if x.get("size") == args.size]
                    if name == "evolved":
                        if not rows:
                            error, evo_correct = "evolved: no row", False
                            continue
                        evo_correct = evo_correct and bool(rows[0].get("correct"))
                        evo_us.append(rows[0]["solution_us"]["median"])
                        continue
                    for x in rows:
                        solution = x.get("solution", "")
                        if solution in LIBRARIES:
                            lib_name = solution
                            lib_correct = lib_correct and bool(x.get("correct"))
                            if not x.get("correct") and x.get("failure"):
                                error = f"library: {x['failure']}"
                            lib_us.append(x["solution_us"]["median"])
                        elif solution == "kiln":
                            hand_us.append(x["solution_us"]["median"])
        row = {"problem": problem, "library": lib_name,
               "library_correct": lib_correct and bool(lib_us),
               "evolved_correct": evo_correct and bool(evo_us), "error": error,
               "library_us": lib_us, "evolved_us": evo_us, "kiln_hand_us": hand_us}
        row["correct"] = row["library_correct"] and row["evolved_correct"]
        if lib_us and evo_us:
            row["library_median_us"] = statistics.median(lib_us)
            row["evolved_median_us"] = statistics.median(evo_us)
            row["evolved_over_library"] = row["evolved_median_us"] / row["library_median_us"]
        results.append(row)
        hand = f"{statistics.median(hand_us):12.1f}" if hand_us else f"{'-':>12}"
        if "evolved_over_library" in row:
            verdict = ("both" if row["correct"] else "library WRONG"
                       if row["evolved_correct"] else "evolved WRONG")
            print(f"{problem:34} {lib_name:>7} {row['library_median_us']:11.1f} {hand} "
                  f"{row['evolved_median_us']:11.1f} {row['evolved_over_library']:11.3f}  "
                  f"{verdict}", flush=True)
        else:
            print(f"{problem:34} {lib_name or '-':>7} {'-':>11} {hand} {'-':>11} {'-':>11}  "
                  f"False {error[:120]}", flush=True)
    compared = [r for r in results if "evolved_over_library" in r and r["correct"]]
    # "At least as fast": within the measurement's resolution of 1%.
    faster = [r for r in compared if r["evolved_over_library"] <= 1.01]
    library_wrong = [r["problem"] for r in results
                     if r["evolved_correct"] and not r["library_correct"]]
    evolved_wrong = [r["problem"] for r in results if not r["evolved_correct"]]
    summary = {"problems": len(results), "compared": len(compared),
               "evolved_at_least_as_fast": len(faster),
               "share": len(faster) / len(compared) if compared else 0.0,
               "library_wrong": library_wrong, "evolved_wrong": evolved_wrong}
    print(f"# evolved at least as fast as the library (evolved/library <= 1.01) on "
          f"{len(faster)} of {len(compared)} compared ({summary['share']:.0%}); the library "
          f"fails the judge on {len(library_wrong)} {library_wrong}, the evolved kernel on "
          f"{len(evolved_wrong)} {evolved_wrong}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"size": args.size, "rounds": args.rounds, "summary": summary,
                       "rows": results}, f, indent=1)


if __name__ == "__main__":
    main()
