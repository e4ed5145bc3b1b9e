#!/usr/bin/env bash
# 2026-11-30b call 2: NormFamily GPU test alone (call 1 cut it: it ran beside 14 compiles); the
# set versus with the kept-online winners in the state, judged under the relative-L2 check.
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p $OUT/logs
timeout 150 build/kiln_gpu_tests --gtest_filter='EvolveGpu.NormFamily*' > $OUT/logs/normfamily.txt 2>&1
echo "NormFamily exit $? at ${SECONDS}s"; grep -E "^\[  (PASSED|FAILED|  OK|SKIPPED) |FAILED|Failure|kept" $OUT/logs/normfamily.txt | head -20
VERSUS_STATE=evolve-set/versus-state VERSUS_LIMIT=380 timeout 440 bash scripts/device_set_versus.sh > $OUT/logs/versus-run.txt 2>&1
echo "versus exit $? at ${SECONDS}s"; cat $OUT/versus.md
python3 scripts/combine_eager_vs_evolved.py $OUT/eager-vs-evolved.json 2>&1 | tail -15
tar -czf $OUT/logs.tar.gz -C $OUT logs && rm -rf $OUT/logs
