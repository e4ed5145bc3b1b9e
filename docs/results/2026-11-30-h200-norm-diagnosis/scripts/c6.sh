#!/usr/bin/env bash
# 2026-11-30 call 6: the norm GPU tests over the changed load path and launch bounds (grid-split-row,
# cp.async staging, cache-streaming, every mapping at size small).
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
for t in NormGridSplitRowAndStagingAreJudged NormCacheStreamingIsJudged NormFamilyGeneratesCompilesAndIsJudged; do
  r=$((370-SECONDS)); [ $r -gt 30 ] || break
  timeout $r build/kiln_gpu_tests --gtest_filter="EvolveGpu.$t" > $OUT/$t.txt 2>&1
  echo "$t exit $? at ${SECONDS}s: $(grep -cE 'accepted' $OUT/$t.txt) accepted lines; $(grep -E '^\[  (PASSED|FAILED) ' $OUT/$t.txt)"; grep -E "Failure|rejected|not accepted" $OUT/$t.txt | head -5
done
