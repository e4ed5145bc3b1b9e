"""Suite rows of two kiln binaries timed in turn on one machine (scripts/device_x2_suite_ab.sh).

Usage: python3 scripts/compare_suite_ab.py AB_FOLDER [--json F]
AB_FOLDER holds suite-old-rN.json and suite-new-rN.json. Per (problem, size, solution): the median
over rounds of the solution's back-to-back median for each binary (binaries before the judged
protocol, 98bc8e5, record it as solution_us; newer ones as solution_steady_us, their solution_us
being judged calls, shown as "new judged"), and the back-to-back reference's (old binaries record
it as reference_us, new ones as reference_steady_us), with new/old ratios, so that a slower
kernel, a colder timing protocol and a faster reference are told apart. Exits 1 when a file is missing or a row
is incorrect.
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys


def load_rounds(folder, which):
    paths = sorted(glob.glob(os.path.join(folder, f"suite-{which}-r*.json")),
                   key=lambda p: int(re.search(r"-r(\d+)\.json$", p).group(1)))
    if not paths:
        sys.exit(f"compare_suite_ab: no suite-{which}-r*.json in {folder}")
    rounds = []
    for path in paths:
        with open(path) as f:
            rounds.append(json.load(f))
    return rounds


def steady_reference(row):
    stats = row.get("reference_steady_us") or row.get("reference_us") or {}
    return stats.get("median", 0.0)


def steady_solution(row, allow_judged=False):
    """The back-to-back solution time, or None where the row has none: binaries from 98bc8e5 (whose
    rows carry floor_us) to 41fea6d timed judged calls only, and their solution_us is not one."""
    steady = (row.get("solution_steady_us") or {}).get("median", 0.0)
    if steady > 0:
        return steady
    return None if "floor_us" in row and not allow_judged else row["solution_us"]["median"]


def collect(rounds, allow_judged=False):
    """{(problem, size, solution): {"sol": [..], "ref": [..], "correct": bool}}"""
    table = {}
    for data in rounds:
        for row in data.get("rows", []):
            if row.get("skipped"):
                continue
            key = (row["problem"], row["size"], row["solution"])
            entry = table.setdefault(key, {"sol": [], "judged": [], "ref": [], "correct": True})
            steady = steady_solution(row, allow_judged)
            if steady is None:
                sys.exit(f"compare_suite_ab: {'/'.join(key)} has no back-to-back solution time "
                         "(a binary from 98bc8e5 to 41fea6d times judged calls only; "
                         "--allow-judged compares its judged time)")
            entry["sol"].append(steady)
            entry["judged"].append(row["solution_us"]["median"])
            entry["ref"].append(steady_reference(row))
            entry["correct"] = entry["correct"] and bool(row.get("correct", False))
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--json", default="")
    parser.add_argument("--allow-judged", action="store_true",
                        help="take a judged solution time where a row has no back-to-back one "
                             "(binaries 98bc8e5..41fea6d): protocols then differ between columns")
    args = parser.parse_args()
    old = collect(load_rounds(args.folder, "old"), args.allow_judged)
    new = collect(load_rounds(args.folder, "new"), args.allow_judged)
    rows, failed = [], False
    print(f"{'problem':<16} {'size':>10} {'solution':<20} {'sol old':>8} {'sol new':>8} {'new/old':>7} "
          f"{'ref old':>8} {'ref new':>8} {'new/old':>7} {'new judged':>10}")
    for key in sorted(set(old) & set(new)):
        o, n = old[key], new[key]
        sol_o, sol_n = statistics.median(o["sol"]), statistics.median(n["sol"])
        ref_o, ref_n = statistics.median(o["ref"]), statistics.median(n["ref"])
        judged_n = statistics.median(n["judged"])
        row = {"problem": key[0], "size": key[1], "solution": key[2], "solution_old_us": sol_o,
               "solution_new_us": sol_n, "solution_new_judged_us": judged_n, "reference_old_us": ref_o, "reference_new_us": ref_n,
               "solution_ratio": sol_n / sol_o if sol_o else 0.0,
               "reference_ratio": ref_n / ref_o if ref_o else 0.0,
               "correct": o["correct"] and n["correct"]}
        failed = failed or not row["correct"]
        rows.append(row)
        print(f"{key[0]:<16} {key[1]:>10} {key[2]:<20} {sol_o:8.1f} {sol_n:8.1f} "
              f"{row['solution_ratio']:7.3f} {ref_o:8.1f} {ref_n:8.1f} {row['reference_ratio']:7.3f} {judged_n:10.1f}"
              f"{'' if row['correct'] else '  INCORRECT'}")
    only = sorted(set(old) ^ set(new))
    if only:
        print(f"# rows in one binary only: {', '.join('/'.join(k) for k in only)}")
    if rows:
        geo = lambda xs: statistics.geometric_mean([x for x in xs if x > 0]) if any(xs) else 0.0
        print(f"# geo-mean new/old: solution {geo([r['solution_ratio'] for r in rows]):.3f}, "
              f"reference {geo([r['reference_ratio'] for r in rows]):.3f} over {len(rows)} rows")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
