#!/usr/bin/env python3
"""One line per judged row of a `kiln bench candidate` verdict (its --json or --json-per-source
file): name, size, correct, median µs, U and the failure, for the device scripts' summaries.

    python3 scripts/verdict_rows.py VERDICT.json NAME [--width 12]
"""
import argparse
import json


def rows(x):
    """Every object holding a solution_us, wherever it sits in the verdict."""
    if isinstance(x, dict):
        if "solution_us" in x:
            yield x
        for v in x.values():
            yield from rows(v)
    elif isinstance(x, list):
        for v in x:
            yield from rows(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("verdict")
    ap.add_argument("name")
    ap.add_argument("--width", type=int, default=12, help="the name's column width")
    args = ap.parse_args()
    with open(args.verdict) as f:
        doc = json.load(f)
    for r in rows(doc):
        median = r["solution_us"].get("median", 0)
        print(f"{args.name:<{args.width}} {r['size']:<6} correct={r['correct']} "
              f"median={median:.1f} us U={r['utilization']:.3f} {str(r.get('failure', ''))[:120]}")


if __name__ == "__main__":
    main()
