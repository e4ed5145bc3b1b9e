#!/usr/bin/env bash
# 2026-11-30 call 4: tma-bulk one stage and the bulk store (the map in place, stored by the TMA engine)
cd "$(dirname "$0")/../.." || exit 2
bash scripts/unpack_carry.sh > /dev/null; source scripts/device_env.sh > /dev/null 2>&1
head -1 carry/MANIFEST
mkdir -p $OUT/logs $OUT/verdicts
timeout 170 build/kiln_gpu_tests --gtest_filter='EvolveGpu.NormTmaBulkIsJudged' > $OUT/logs/gpu-tests.txt 2>&1
echo "tma gpu test exit $? at ${SECONDS}s"; grep -E "^\[  (PASSED|FAILED|  OK) |Failure|rejected" $OUT/logs/gpu-tests.txt | head -20
D=evolve-set/calls/src4
ls $D/*.cu | while read -r f; do b=$(basename $f .cu); echo "${b%%--*} $f"; done |
  xargs -P 16 -L 1 sh -c 'build/kiln bench candidate --compile-only --reuse-builds --problem "$0" --source "$1" --build-dir /tmp/c4 > /dev/null 2>&1 || echo "compile failed: $1"'
echo "compiled at ${SECONDS}s"
for p in kb1-23-softmax kb1-24-log-softmax kb1-34-instancenorm kb1-38-l1-norm kb1-39-l2-norm; do
  srcs=(); for f in $D/$p--*.cu; do srcs+=(--source $f); done
  timeout 120 build/kiln bench candidate --reuse-builds --problem $p --sizes kb "${srcs[@]}" --json-per-source \
    --build-dir /tmp/c4 -w 3 -n 10 --trials 2 --timeout 60 --timing guarded > $OUT/logs/$p-judge.txt 2>&1
  echo "$p judge exit $? at ${SECONDS}s"
  for f in $D/$p--*.cu; do j=${f%.cu}.json; [ -f $j ] && cp $j $OUT/verdicts/ && python3 scripts/verdict_rows.py $j "$(basename ${f%.cu})" --width 50; done
done | tee $OUT/summary.txt
r=$((560-SECONDS)); [ $r -gt 60 ] && SAN_PROBLEMS= SAN_SOURCES="kb1-23-softmax=$D/kb1-23-softmax--tma-c16-s1-st1-fe.cu" SAN_TOOLS="memcheck racecheck" SAN_LIMIT=$(((r-20)/2)) timeout $r bash scripts/device_evolve_quality.sh sanitizer > $OUT/logs/san.txt 2>&1
grep -h "sanitizer" $OUT/logs/san.txt | tail -3
tar -czf $OUT/logs.tar.gz -C $OUT logs verdicts && rm -rf $OUT/logs $OUT/verdicts
