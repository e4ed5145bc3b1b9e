#!/usr/bin/env python3
"""The kb1 table of issue 19 from device logs: per problem, PyTorch eager's time, kiln's or the
library's solution time, T_roof, PyTorch's U and binding, and the headroom torch / T_roof.

Reads the suites' text output (`kiln bench suite ... > suite.txt`, which survives a run cut
short, unlike --json) and PyTorch's JSON (scripts/kb1_torch_eager.py --json). A problem found in
several suite files takes its row from the last one given, one row per solution.

Usage: python3 scripts/kb1_table.py --suite a.txt b.txt --torch a.json b.json [--size kb]
"""
import argparse
import json
import math
import sys


def suite_rows(paths, size):
    rows = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                t = line.split()
                if len(t) < 11 or not t[0].startswith("kb1-") or t[2] != size:
                    continue
                rows[(t[0], t[3])] = dict(problem=t[0], solution=t[3], ok=t[4] == "yes", ref_us=float(t[5]),
                                  sol_us=float(t[6]), roof_us=float(t[8]), binding=t[10])
    return rows


def torch_rows(paths, size):
    out = {}
    for path in paths:
        with open(path) as f:
            j = json.load(f)
        for r in j["rows"]:
            if r.get("size") == size and "torch_us" in r:
                out[r["problem"]] = r["torch_us"]["median"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", nargs="+", required=True, help="suite text outputs")
    ap.add_argument("--torch", nargs="+", required=True, help="kb1_torch_eager.py JSON files")
    ap.add_argument("--size", default="kb", help="size preset (default kb)")
    a = ap.parse_args()
    rows, torch = suite_rows(a.suite, a.size), torch_rows(a.torch, a.size)
    if not rows:
        sys.exit(f"no kb1 rows of size {a.size} in {a.suite}")
    key = lambda k: (int(k[0].split("-")[1]), k[1] != "kiln", k[1])
    print("| problem | PyTorch eager (µs) | solution | its time (µs) | correct | T_roof (µs) | binding |"
          " PyTorch's U | headroom torch/T_roof | solution's U | solution vs torch |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    u_torch, u_sol, faster, missing = {}, [], 0, []
    for k in sorted(rows, key=key):
        r = rows[k]
        name = r["problem"]
        t = torch.get(name)
        if t is None:
            missing.append(name)
        ut = r["roof_us"] / t if t else float("nan")
        us = r["roof_us"] / r["sol_us"]
        if t:
            u_torch[name] = ut
            faster += r["sol_us"] < t
        u_sol.append(us)
        print(f"| {name} | {t:.1f} | {r['solution']} | {r['sol_us']:.1f} | {'yes' if r['ok'] else 'NO'} |"
              f" {r['roof_us']:.1f} | {r['binding']} | {ut:.3f} | {t / r['roof_us']:.2f} | {us:.3f} |"
              f" x{t / r['sol_us']:.3f} |" if t else
              f"| {name} | - | {r['solution']} | {r['sol_us']:.1f} | {'yes' if r['ok'] else 'NO'} |"
              f" {r['roof_us']:.1f} | {r['binding']} | - | - | {us:.3f} | - |")
    geo = lambda v: math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")
    print()
    problems = {r["problem"] for r in rows.values()}
    print(f"{len(problems)} problems, {len(rows)} rows; correct: {sum(r['ok'] for r in rows.values())}; "
          f"PyTorch's U geometric mean {geo(list(u_torch.values())):.3f} (headroom x{1 / geo(list(u_torch.values())):.2f}) over "
          f"{len(u_torch)} problems; solutions' U geometric mean {geo(u_sol):.3f}; solution faster than "
          f"PyTorch on {faster} of {len(u_sol)} rows" + (f"; no PyTorch time: {', '.join(missing)}" if missing else ""))


if __name__ == "__main__":
    main()
