#!/usr/bin/env bash
# 2026-11-30 call 5: search quality on the matmul family (guided against random, kb1-3 at
# KernelBench's size, 3 seeds, 16 evaluations, prebuilt CUTLASS units); one softmax search with --ncu.
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
COMPARE_UNITS=prebuilt-units COMPARE_PROBLEMS=kb1-3-batched-matmul COMPARE_SIZE=kb COMPARE_BUDGET=16 COMPARE_LIMIT=115 \
  COMPARE_MODES="guided random" timeout 380 bash scripts/device_evolve_quality.sh compare > $OUT/compare-log.txt 2>&1
echo "compare exit $? at ${SECONDS}s"; grep -v "^$" $OUT/summary-quality.txt | tail -12
r=$((555-SECONDS)); [ $r -gt 60 ] && timeout $r build/kiln evolve run --problem kb1-23-softmax --size kb --budget 12 --population 8 \
  --seed 1 --ncu --pool /tmp/ncu-pool.json --out /tmp/ncu-run -w 2 -n 5 --trials 1 --timeout 60 --confirm 1 > $OUT/ncu-run.txt 2>&1
echo "ncu run exit $? at ${SECONDS}s"; tail -4 $OUT/ncu-run.txt
cp /tmp/ncu-run/log.json $OUT/ncu-run-log.json 2>/dev/null; cp /tmp/ncu-run/report.json $OUT/ncu-run-report.json 2>/dev/null
python3 - $OUT/ncu-run-log.json << 'PY'
import json, sys
try: log = json.load(open(sys.argv[1]))
except Exception as e: print("no log:", e); sys.exit(0)
rows = log if isinstance(log, list) else log.get("evaluations", [])
for r in rows:
    e = r.get("evaluation", r)
    c = e.get("counters")
    if c: print("counters:", json.dumps(c)[:300])
PY
cd $OUT && tar -czf compare.tar.gz compare 2>/dev/null && rm -rf compare
