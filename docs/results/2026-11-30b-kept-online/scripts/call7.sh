#!/usr/bin/env bash
# 2026-11-30b call 7: the 128 x 32 transposing split (v7) against call 6's (v6) and the set's
# (old), judged side by side (guarded, kb); memcheck on it; the sm90 GPU test at size small.
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p $OUT/logs $OUT/verdicts /tmp/c7cache/units
cp -p prebuilt-units/units/*.o /tmp/c7cache/units/ 2>/dev/null; tar -xJf evolve-set/versus-state/units.tar.xz -C /tmp/c7cache/units
D=evolve-set/calls/src7
ls $D/*.cu | while read -r f; do b=$(basename $f .cu); echo "${b%%--*} $f"; done |
  xargs -P 16 -L 1 sh -c 'build/kiln bench candidate --compile-only --reuse-builds --problem "$0" --source "$1" --build-dir /tmp/c7 --build-cache /tmp/c7cache > /dev/null 2>&1 || echo "compile failed: $1"'
echo "compiled at ${SECONDS}s"
for p in $(ls $D | sed 's/--.*//' | sort -u); do
  timeout 60 build/kiln bench candidate --reuse-builds --problem $p --sizes kb --source $D/$p--old.cu --source $D/$p--v6.cu --source $D/$p--v7.cu --json-per-source \
    --build-dir /tmp/c7 --build-cache /tmp/c7cache -w 3 -n 10 --trials 2 --timeout 50 --timing guarded > $OUT/logs/$p-judge.txt 2>&1
  echo "$p judge exit $? at ${SECONDS}s"
  for f in $D/$p--*.cu; do j=${f%.cu}.json; [ -f $j ] && cp $j $OUT/verdicts/ && python3 scripts/verdict_rows.py $j "$(basename ${f%.cu})" --width 44; done
done | tee $OUT/summary.txt
SAN_LIMIT=50 SAN_PROBLEMS= SAN_TOOLS=memcheck SAN_SOURCES="kb1-16-matmul-transposed-a=$D/kb1-16-matmul-transposed-a--v7.cu kb1-8-matmul-irregular=$D/kb1-8-matmul-irregular--v7.cu" \
  timeout 80 bash scripts/device_evolve_quality.sh sanitizer > $OUT/logs/sanitizer.txt 2>&1
echo "sanitizer at ${SECONDS}s"; grep -E "ERROR SUMMARY|accepted|rejected" $OUT/logs/sanitizer.txt | head -4; rm -f $OUT/summary-quality.txt; mv $OUT/sanitizer.tar.gz $OUT/logs/ 2>/dev/null
r=$((200-SECONDS)); [ $r -gt 30 ] && timeout $r build/kiln_gpu_tests --gtest_filter='EvolveGpu.MatmulSm90*' > $OUT/logs/gpu-test.txt 2>&1
echo "gpu test exit $? at ${SECONDS}s"; grep -E "^\[  (PASSED|FAILED|  OK) |Failure|rejected|not accepted" $OUT/logs/gpu-test.txt | head -10
tar -czf $OUT/logs.tar.gz -C $OUT logs verdicts && rm -rf $OUT/logs $OUT/verdicts
