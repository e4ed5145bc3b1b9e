#!/usr/bin/env python3
"""Combines same-call comparisons of PyTorch eager and kiln's evolved kernels
(scripts/kb1_eager_vs_evolved.py --json outputs) into one set's figures.

Each input holds rows measured within one device call (eager and kiln taking turns); a later
input's row for a problem replaces an earlier one's, so a set re-measured in part (the problems a
session changed) keeps every ratio within its own call. Prints the geometric-mean speedup over
eager, the geometric-mean headroom (eager / T_roof), their ratio (equal to the geometric-mean U),
the median U and the share of problems at U >= 0.8, with the call each row came from.

Usage: combine_eager_vs_evolved.py OLDER.json [NEWER.json ...] [--json OUT]
"""
import argparse
import json
import math
import statistics
import sys


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", help="eager-vs-evolved JSON files, oldest first")
    parser.add_argument("--json", help="write the combined rows and figures here")
    args = parser.parse_args()
    rows = {}
    for path in args.inputs:
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            sys.exit(f"combine_eager_vs_evolved: {path}: {e}")
        if "rows" not in data:
            sys.exit(f"combine_eager_vs_evolved: {path}: no 'rows' (not an eager-vs-evolved JSON)")
        for row in data["rows"]:
            rows[row["problem"]] = dict(row, source=path)
    if not rows:
        sys.exit("combine_eager_vs_evolved: no rows in the inputs")
    bad = [p for p, r in rows.items() if not r.get("correct")]
    good = [r for r in rows.values() if r.get("correct")]
    if not good:
        sys.exit("combine_eager_vs_evolved: no correct row")
    speedup = geometric_mean([r["speedup"] for r in good])
    headroom = geometric_mean([r["eager_median_us"] / r["roof_us"] for r in good])
    u = [r["u"] for r in good]
    figures = {
        "problems": len(rows),
        "correct": len(good),
        "not_correct": sorted(bad),
        "geomean_speedup": speedup,
        "geomean_headroom": headroom,
        "fraction_of_headroom": speedup / headroom,
        "median_u": statistics.median(u),
        "share_u_at_least_0_8": sum(x >= 0.8 for x in u) / len(u),
        "geomean_u": geometric_mean(u),
        "rows_per_source": {p: sum(r["source"] == p for r in rows.values()) for p in args.inputs},
    }
    print(f"{len(good)} of {len(rows)} correct; {speedup:.2f}x over eager of a {headroom:.2f}x "
          f"headroom = {speedup / headroom:.1%}; median U {figures['median_u']:.3f}; "
          f"U >= 0.8 on {figures['share_u_at_least_0_8']:.0%}; geometric-mean U "
          f"{figures['geomean_u']:.3f}")
    for path, count in figures["rows_per_source"].items():
        print(f"  {count} rows from {path}")
    if bad:
        print("  not correct: " + ", ".join(sorted(bad)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"figures": figures, "rows": sorted(rows.values(), key=lambda r: r["problem"])},
                      f, indent=1)


if __name__ == "__main__":
    main()
