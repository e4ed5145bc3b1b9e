#!/usr/bin/env bash
# 2026-11-30b call 3: search quality for the matmul and attention families (guided against
# random, 3 seeds, 24 evaluations, size small), every seed's runs at once; the CUTLASS units
# compiled ahead (prebuilt-units plus the set state's) shared through one build cache.
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p /tmp/units/units && cp -p prebuilt-units/units/*.o /tmp/units/units/ && tar -xJf evolve-set/versus-state/units.tar.xz -C /tmp/units/units
echo "units: $(ls /tmp/units/units | grep -c '\.o$')"
COMPARE_PROBLEMS="kb1-3-batched-matmul kb1-97-sdpa" COMPARE_SIZE=small COMPARE_BUDGET=24 COMPARE_LIMIT=240 \
  COMPARE_SEEDS_TOGETHER=1 COMPARE_UNITS=/tmp/units timeout 560 bash scripts/device_evolve_quality.sh compare > $OUT/compare-run.txt 2>&1
echo "compare exit $? at ${SECONDS}s"; grep -v "^carry" $OUT/summary-quality.txt
