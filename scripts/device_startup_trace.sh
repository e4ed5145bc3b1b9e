#!/usr/bin/env bash
# Where a `kiln bench candidate` launch spends its time outside the judge's phases (issue 20's
# engine speed): the judgement the evolution engine makes for a confirmation (one candidate,
# guarded timing) and the one a launch per batch made (screened), each TRACE_REPEATS times after
# a first run that compiles, with KILN_TRACE_STARTUP set; startup-trace.md: the median seconds
# between consecutive trace points (launcher and rank lines merged by wall clock).
# Usage: bash scripts/device_startup_trace.sh   (TRACE_CASES="problem:size:source ...")
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ -d carry ] && bash scripts/unpack_carry.sh > /dev/null
source scripts/device_env.sh > /dev/null 2>&1
o=${OUT:-out}/startup; mkdir -p "$o"
cases=${TRACE_CASES:-"kb1-19-relu:small:docs/results/2026-11-25-evolve-set/screen/kb1-19-relu/best.cu kb1-19-relu:kb:docs/results/2026-11-25-evolve-set/screen/kb1-19-relu/best.cu"}
for case in $cases; do
  IFS=: read -r p size src <<< "$case"
  for timing in guarded screen; do
    common=(bench candidate --problem "$p" --sizes "$size" -g 1 --source "$src" --build-dir /tmp/kiln-trace
      --reuse-builds -w 3 -n 10 --trials 2 --timeout 60 --skip-reference-timing --timing "$timing")
    build/kiln "${common[@]}" > "$o/$p-$size-$timing-first.txt" 2>&1
    for i in $(seq 1 "${TRACE_REPEATS:-3}"); do
      start=$(date +%s.%N)
      KILN_TRACE_STARTUP=1 build/kiln "${common[@]}" > "$o/$p-$size-$timing-$i.txt" 2>&1
      code=$?
      echo "$p $size $timing run $i: exit $code in $(awk "BEGIN { print $(date +%s.%N) - $start }") s" | tee -a "$o/summary.txt"
    done
  done
done
python3 - "$o" <<'PY' | tee "$o/startup-trace.md"
import glob, os, re, statistics, sys
root = sys.argv[1]
runs = {}
for path in sorted(glob.glob(os.path.join(root, "*-[0-9].txt"))):
    key = re.sub(r"-\d+\.txt$", "", os.path.basename(path))
    points = []
    for line in open(path, errors="replace"):
        m = re.match(r"kiln-trace (\d+\.\d+) (\d+) (.*)", line.strip())
        if m:
            points.append((float(m.group(1)), m.group(3)))
    points.sort()
    runs.setdefault(key, []).append(points)
for key, all_points in runs.items():
    print(f"## {key} ({len(all_points)} runs; median seconds from the previous point)\n")
    print("| step | seconds |\n|---|---|")
    n = min(len(p) for p in all_points)
    for i in range(1, n):
        steps = [p[i][0] - p[i - 1][0] for p in all_points]
        print(f"| {all_points[0][i - 1][1]} -> {all_points[0][i][1]} | {statistics.median(steps):.3f} |")
    total = [p[n - 1][0] - p[0][0] for p in all_points]
    print(f"| first to last point | {statistics.median(total):.3f} |\n")
PY
