#!/usr/bin/env python3
"""Issue 17's criteria over same-process JSON files (scripts/torch_gemm_same_process.py --json):
per run, criterion 1 (baseline <= torch within the spread), criterion 2 (kiln / baseline <= 1.02)
and geometric means; then per shape the median of kiln / baseline over the runs given."""
import json
import math
import statistics
import sys


def geo(values):
    return math.exp(sum(map(math.log, values)) / len(values))


per_shape = {}
for path in sys.argv[1:]:
    rows = json.load(open(path))["rows"]
    kb = [r["kiln_over_baseline"] for r in rows]
    c1 = sum(r["baseline_over_torch"] <= 1 + r["spread_torch_baseline"] for r in rows)
    print(f"{path}: criterion 1 {c1}/{len(rows)}, criterion 2 {sum(x <= 1.02 for x in kb)}/"
          f"{len(rows)}, geo kiln/base {geo(kb):.3f}, base/torch "
          f"{geo([r['baseline_over_torch'] for r in rows]):.3f}, kiln/torch "
          f"{geo([r['kiln_over_torch'] for r in rows]):.3f}")
    if "kiln_over_kiln_second" in rows[0]:
        print(f"  kiln / second: geo {geo([r['kiln_over_kiln_second'] for r in rows]):.3f}")
    for r in rows:
        per_shape.setdefault(r["shape"], []).append(r["kiln_over_baseline"])
medians = []
for shape, values in per_shape.items():
    medians.append(statistics.median(values))
    print(f"{shape:>18}: median {medians[-1]:.3f} [{min(values):.3f}-{max(values):.3f}]")
print(f"geo of the medians {geo(medians):.3f}; shapes with median <= 1.02: "
      f"{sum(m <= 1.02 for m in medians)}/{len(medians)}")
