"""Where the tuner's 4-rank errors come from, from call 1's validation alone (no GPU): per shape,
fits measured - predicted (saved profile) = offset + cost x (number of groups) by least squares
over the measured partitions of `kiln tune validate`, and prints the mean |error| before and after.

    python3 per_group_fit.py call1/validate-ar-g4.csv
"""
import collections
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
by_shape = collections.defaultdict(list)
for r in rows:
    by_shape[r["shape"]].append(r)
print(f"{'shape':>17} {'n':>4} {'groups':>7} {'us/group':>9} {'offset':>8} {'|err| saved':>12} {'fitted':>7} transport")
for shape, rs in by_shape.items():
    xs = [len(r["plan"].split("groups=")[1].split(",")) for r in rs]
    ys = [float(r["measured_us"]) - float(r["predicted_saved_us"]) for r in rs]
    measured = [float(r["measured_us"]) for r in rs]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    vx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / vx if vx > 0 else 0.0
    offset = my - slope * mx
    before = sum(abs(y) / m for y, m in zip(ys, measured)) / n
    after = sum(abs(y - offset - slope * x) / m for x, y, m in zip(xs, ys, measured)) / n
    transport = "nccl" if "comm=nccl" in rs[0]["plan"] else "ce"
    print(f"{shape:>17} {n:4d} {min(xs):>3}-{max(xs):<3} {slope:9.1f} {offset:8.1f} {before:12.3f} {after:7.3f} {transport}")
