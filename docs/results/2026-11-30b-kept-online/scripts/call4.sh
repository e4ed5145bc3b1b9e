#!/usr/bin/env bash
# 2026-11-30b call 4: knob sensitivity on a GPU: guided (knob-sensitive, the new default) against
# guided with --uniform-knobs (the search before) and random, size small, 24 evaluations; sdpa and
# batched matmul over seeds 1-5, softmax and avgpool-2d (the earlier comparisons) over seeds 1-3.
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p /tmp/units/units && cp -p prebuilt-units/units/*.o /tmp/units/units/ && tar -xJf evolve-set/versus-state/units.tar.xz -C /tmp/units/units
mkdir -p $OUT/a $OUT/b
OUT=$OUT/a COMPARE_PROBLEMS="kb1-97-sdpa kb1-3-batched-matmul" COMPARE_SIZE=small COMPARE_BUDGET=24 COMPARE_LIMIT=200 COMPARE_SEEDS="1 2 3 4 5" \
  COMPARE_MODES="guided uniform random" COMPARE_SEEDS_TOGETHER=1 COMPARE_UNITS=/tmp/units timeout 330 bash scripts/device_evolve_quality.sh compare > $OUT/a/compare-run.txt 2>&1
echo "compare a exit $? at ${SECONDS}s"; cat $OUT/a/compare.md
r=$((575-SECONDS))
OUT=$OUT/b COMPARE_PROBLEMS="kb1-23-softmax kb1-45-avgpool-2d" COMPARE_SIZE=small COMPARE_BUDGET=24 COMPARE_LIMIT=$((r/2-5)) COMPARE_SEEDS="1 2 3" \
  COMPARE_MODES="guided uniform random" COMPARE_SEEDS_TOGETHER=1 timeout $r bash scripts/device_evolve_quality.sh compare > $OUT/b/compare-run.txt 2>&1
echo "compare b exit $? at ${SECONDS}s"; cat $OUT/b/compare.md
