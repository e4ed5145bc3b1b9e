#!/usr/bin/env python3
"""Replaces a set's kernel with the best of its probes when that probe's U beats the set's by
more than a margin in the same judge launch (the device scripts' probe calls).

Reads DIR/PROBLEM--*.json, the `kiln bench candidate --json-per-source` verdicts of
DIR/PROBLEM--*.cu, where DIR/PROBLEM--set.cu is the set's own kernel; copies the winner over
SET/PROBLEM/best.cu. Prints one line either way.

    python3 scripts/pick_probe_winner.py DIR PROBLEM SET [--size kb] [--margin 0.02]
"""
import argparse
import glob
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import verdict_rows  # noqa: E402


def utilization(verdict, size):
    """The verdict's U at `size`, or 0 when it is missing, unreadable or not correct."""
    try:
        with open(verdict) as f:
            rows = [r for r in verdict_rows.rows(json.load(f)) if r.get("size") == size]
    except (OSError, ValueError):
        return 0.0
    return rows[0]["utilization"] if rows and rows[0]["correct"] else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("problem")
    ap.add_argument("set")
    ap.add_argument("--size", default="kb")
    ap.add_argument("--margin", type=float, default=0.02, help="fraction above the set's U")
    args = ap.parse_args()
    if not 0 <= args.margin < 1:
        ap.error(f"argument --margin: between 0 and 1, got {args.margin}")
    target = os.path.join(args.set, args.problem, "best.cu")
    if not os.path.isfile(target):
        ap.error(f"{target}: no such file")
    us = {f: utilization(f[:-3] + ".json", args.size)
          for f in glob.glob(os.path.join(args.dir, f"{args.problem}--*.cu"))}
    old = us.pop(os.path.join(args.dir, f"{args.problem}--set.cu"), 0.0)
    best = max(us, key=us.get) if us else None
    if best and us[best] > (1 + args.margin) * old:
        shutil.copy(best, target)
        print(f"{args.problem}: {os.path.basename(best)} U {us[best]:.3f} replaces the set's U {old:.3f}")
    else:
        print(f"{args.problem}: the set's kernel stays (U {old:.3f}; best probe "
              f"{us.get(best, 0.0):.3f})")


if __name__ == "__main__":
    main()
